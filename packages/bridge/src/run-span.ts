// The one definition of a run's duration, shared by every surface that prints one (the CLI's
// summary, `runs`, `show`, `events`, the HTML report, the plugin): started -> ended, both read
// from what the run itself recorded, never from when someone looked at it.

/** When a run started and ended, and how long it took; `durationMs` is absent while it runs. */
export interface RunSpan {
  readonly startedAt: number | undefined;
  readonly endedAt: number | undefined;
  readonly durationMs: number | undefined;
}

const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'workflow-completed',
  'workflow-failed',
  'workflow-stopped',
]);

/** Whether an event type ends a run: the engine emits one, last, once the run is over. */
export function isTerminalEventType(type: unknown): boolean {
  return typeof type === 'string' && TERMINAL_EVENTS.has(type);
}

/**
 * A run's span from its snapshot (`run.json`: `startedAt`, `endedAt`), falling back to its event
 * log: the `workflow-started` event, then the terminal event, or for a run that ended without one
 * (interrupted) its last recorded event. The engine stamps the snapshot with exactly those event
 * times, so every surface agrees whichever of the two it has at hand.
 */
export function runSpan(
  run: { readonly startedAt?: unknown; readonly endedAt?: unknown; readonly status?: unknown },
  events?: readonly unknown[],
): RunSpan {
  let firstTime: number | undefined;
  let startEvent: number | undefined;
  let terminal: number | undefined;
  let lastTime: number | undefined;
  for (const event of events ?? []) {
    if (typeof event !== 'object' || event === null) continue;
    const { type, time } = event as { type?: unknown; time?: unknown };
    if (!finite(time)) continue;
    firstTime ??= time;
    lastTime = lastTime === undefined ? time : Math.max(lastTime, time);
    if (type === 'workflow-started') startEvent ??= time;
    if (isTerminalEventType(type)) terminal = time;
  }
  const startedAt = finite(run.startedAt) ? run.startedAt : (startEvent ?? firstTime);
  const ended =
    typeof run.status === 'string' && run.status !== 'running' && run.status !== 'paused';
  const endedAt = finite(run.endedAt)
    ? run.endedAt
    : (terminal ?? (ended || run.status === undefined ? lastTime : undefined));
  return {
    startedAt,
    endedAt,
    durationMs:
      startedAt === undefined || endedAt === undefined
        ? undefined
        : Math.max(0, endedAt - startedAt),
  };
}

function finite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
