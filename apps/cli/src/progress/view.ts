// The terminal side of live progress. On a TTY it redraws one compact frame in place (cursor up,
// clear to end of screen), throttled, with a ticking clock; anywhere else it prints one plain line
// per event that matters, so logs and CI output stay readable and greppable. Every line it writes
// passes terminalText (invariant 13); its own cursor controls are added after.
import { terminalText } from '@wf/bridge/terminal-text';
import {
  applyRunEvent,
  createRunModel,
  duration,
  errorOf,
  grouped,
  isRecord,
  type RunEventLike,
  type RunModel,
} from '@wf/report';
import { renderProgressFrame } from './frame.js';

export interface ProgressStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

export interface ProgressViewOptions {
  readonly out: ProgressStream;
  /** Redraw in place; defaults to `out.isTTY`. */
  readonly tty?: boolean;
  readonly unicode?: boolean;
  readonly note?: string;
  readonly now?: () => number;
  /** Minimum ms between TTY redraws; the clock also ticks at this pace. Default 100. */
  readonly intervalMs?: number;
}

export interface ProgressView {
  readonly model: RunModel;
  event(event: RunEventLike): void;
  /** Prints a line above the live frame (a TTY frame is cleared, then redrawn below it). */
  note(line: string): void;
  /** Draws the last frame (TTY) and stops the clock. Idempotent. */
  finish(): void;
}

const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';

export function createProgressView(options: ProgressViewOptions): ProgressView {
  const out = options.out;
  const tty = options.tty ?? out.isTTY === true;
  const now = options.now ?? Date.now;
  const model = createRunModel();
  return tty ? ttyView(model, out, options, now) : plainView(model, out, now);
}

function ttyView(
  model: RunModel,
  out: ProgressStream,
  options: ProgressViewOptions,
  now: () => number,
): ProgressView {
  const interval = options.intervalMs ?? 100;
  let drawn = 0;
  let lastDraw = 0;
  let finished = false;
  let pending: NodeJS.Timeout | undefined;
  const draw = () => {
    // A direct draw (note, finish) cancels the scheduled one: a timer left behind by note() once
    // fired after finish() and redrew the frame over the run's summary lines.
    if (pending) clearTimeout(pending);
    pending = undefined;
    lastDraw = now();
    const lines = renderProgressFrame(model, {
      now: lastDraw,
      width: out.columns ?? 80,
      maxLines: Math.max((out.rows ?? 24) - 2, 3),
      unicode: options.unicode ?? false,
      ...(options.note === undefined ? {} : { note: options.note }),
    });
    // Back to the frame's first line, clear everything below, draw the new frame.
    const up = drawn > 1 ? `\u001b[${drawn - 1}A` : '';
    out.write(
      `${drawn > 0 ? `\r${up}\u001b[J` : HIDE_CURSOR}${lines.map((l) => terminalText(l)).join('\n')}`,
    );
    drawn = lines.length;
  };
  const schedule = () => {
    if (finished || pending) return;
    const wait = Math.max(0, interval - (now() - lastDraw));
    pending = setTimeout(() => {
      if (!finished) draw();
    }, wait);
  };
  const clock = setInterval(schedule, Math.max(interval, 250));
  clock.unref();
  function note(line: string): void {
    const up = drawn > 1 ? `\u001b[${drawn - 1}A` : '';
    out.write(`${drawn > 0 ? `\r${up}\u001b[J` : ''}${terminalText(line)}\n`);
    drawn = 0;
    if (!finished) draw();
  }
  return {
    model,
    event(event) {
      applyRunEvent(model, event);
      // A warning must stay readable after the frame moves on: it is printed above the frame.
      const warning = warningLine(event);
      if (warning !== undefined && !finished) note(warning);
      else schedule();
    },
    note,
    finish() {
      if (finished) return;
      finished = true;
      clearInterval(clock);
      if (pending) clearTimeout(pending);
      draw();
      out.write(`\n${SHOW_CURSOR}`);
    },
  };
}

function plainView(model: RunModel, out: ProgressStream, now: () => number): ProgressView {
  return {
    model,
    event(event) {
      applyRunEvent(model, event);
      const line = plainLine(model, event);
      if (line !== undefined) {
        const t0 = model.startedAt ?? now();
        const at = duration((typeof event.time === 'number' ? event.time : now()) - t0);
        out.write(`[${at.padStart(7)}] ${terminalText(line)}\n`);
      }
    },
    note(line) {
      out.write(`${terminalText(line)}\n`);
    },
    finish() {
      // Plain lines are written as events arrive; nothing is pending.
    },
  };
}

/**
 * The line for an engine `limit-warning` (80% of the token budget or wall limit), else undefined.
 * Like plainLine it holds the event's text as recorded: the view writes it through terminalText.
 */
export function warningLine(event: RunEventLike): string | undefined {
  if (event.type !== 'limit-warning') return undefined;
  const data = isRecord(event.data) ? event.data : {};
  const message = typeof data.message === 'string' ? data.message : '';
  const limit = data.limit === 'wallMs' ? 'wall limit' : 'token budget';
  return `warning: ${limit}: ${message || '80% used'}`;
}

/**
 * One plain line for an event, or undefined for events not worth a line (messages, cache...).
 * Names, logs and errors are the guest's text as recorded: the view writes the line through
 * terminalText in `line` layout, so a line break in them cannot start a line of its own.
 */
export function plainLine(model: RunModel, event: RunEventLike): string | undefined {
  const data = isRecord(event.data) ? event.data : {};
  const name = (key: string) => (typeof data[key] === 'string' ? (data[key] as string) : '');
  const agent = () => {
    const id = name('taskId');
    const span = model.agents.find((a) => a.taskId === id);
    return { id, span, label: `${id} ${span?.name ?? name('name')}`.trim() };
  };
  switch (event.type) {
    case 'workflow-started':
      return `workflow ${model.workflow ?? name('workflow')} started (run ${model.runId ?? ''})`;
    case 'phase-started':
      return `phase ${name('name') || name('phase')} started`;
    case 'phase-completed':
      return `phase ${name('name') || name('phase')} completed`;
    case 'agent-started': {
      const a = agent();
      return `agent ${a.label} started${a.span?.phase ? ` (phase ${a.span.phase})` : ''}`;
    }
    case 'agent-completed': {
      const a = agent();
      const span = a.span;
      if (!span) return `agent ${a.label} ended`;
      const took = duration((span.endedAt ?? event.time) - span.startedAt);
      const tokens = span.tokens.total > 0 ? `, ${grouped(span.tokens.total)} tokens` : '';
      const error = span.error ? `: ${span.error.code} ${span.error.message}` : '';
      return `agent ${a.label} ${span.outcome} in ${took}${tokens}${error}`;
    }
    case 'cache-hit':
      return `agent ${agent().label} replayed from the journal`;
    case 'workflow-log':
      return `log: ${name('message')}`;
    case 'limit-warning':
      return warningLine(event);
    case 'workflow-paused':
      return 'workflow paused';
    case 'workflow-resumed':
      return 'workflow resumed';
    case 'workflow-completed':
    case 'workflow-failed':
    case 'workflow-stopped': {
      const error = errorOf(data.error);
      return `workflow ${model.status}${error ? `: ${error.code} ${error.message}` : ''}`;
    }
    default:
      return undefined;
  }
}
