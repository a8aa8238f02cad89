// Reading a DSH session's log by feature detection. rc.8 has the `events` getter; later DSH has
// `snapshotEvents()` and removed `events` (the earlier plugin iterated `events` unguarded, so
// every finished child "failed" on the newer host and runs hung). Never assume either.
import type { HostContentBlock, HostSession, HostSessionEvent } from './host.js';

export type EventsAccessor = 'snapshotEvents' | 'events' | 'none';

export interface SessionEventsRead {
  readonly accessor: EventsAccessor;
  readonly events: readonly HostSessionEvent[];
}

const isEventArray = (v: unknown): v is readonly HostSessionEvent[] =>
  Array.isArray(v) || (typeof v === 'object' && v !== null && Symbol.iterator in v);

/** Reads the session's events; never throws. `accessor: 'none'` means no known accessor worked. */
export function readSessionEvents(session: HostSession | undefined): SessionEventsRead {
  if (!session) return { accessor: 'none', events: [] };
  try {
    if (typeof session.snapshotEvents === 'function') {
      const v = session.snapshotEvents();
      if (isEventArray(v)) return { accessor: 'snapshotEvents', events: [...v] };
    }
  } catch {
    // fall through to the older accessor
  }
  try {
    const v = (session as { events?: unknown }).events;
    if (isEventArray(v)) return { accessor: 'events', events: [...v] };
  } catch {
    // a throwing getter counts as absent
  }
  return { accessor: 'none', events: [] };
}

/** Which accessor the session offers, without copying the log. */
export function detectEventsAccessor(session: HostSession | undefined): EventsAccessor {
  return readSessionEvents(session).accessor;
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;

export function textOfBlocks(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as HostContentBlock[])
    .filter((b) => rec(b)?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('');
}

export interface ChildUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
}

export interface ChildToolCall {
  readonly callId: string;
  readonly name: string;
  /** Parsed JSON arguments, or the raw string when not JSON. */
  readonly arguments: unknown;
  /** `true` when a `tool/result` for this call arrived without `isError`/`error`. */
  readonly ok: boolean;
  readonly completed: boolean;
}

export interface ChildActivity {
  readonly accessor: EventsAccessor;
  readonly usage: ChildUsage | undefined;
  readonly lastText: string | undefined;
  readonly toolCalls: readonly ChildToolCall[];
  /** The last `turn/end` reason kind, if any. */
  readonly lastTurnEnd: string | undefined;
}

/**
 * Folds a child session's log into what the engine needs: token usage (summed over
 * `assistant/message.usage`), the latest non-empty assistant text, and tool calls with outcomes.
 * Unknown or malformed events are skipped; this never throws.
 */
export function summarizeChildEvents(read: SessionEventsRead): ChildActivity {
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let sawUsage = false;
  let lastText: string | undefined;
  let lastTurnEnd: string | undefined;
  const calls = new Map<
    string,
    { name: string; arguments: unknown; ok: boolean; completed: boolean }
  >();
  for (const event of read.events) {
    const data = rec(event?.data);
    if (!data) continue;
    switch (event.type) {
      case 'assistant/message': {
        const usage = rec(data.usage);
        if (usage) {
          const n = (k: string) =>
            typeof usage[k] === 'number' && Number.isFinite(usage[k]) ? (usage[k] as number) : 0;
          input += n('inputTokens');
          output += n('outputTokens');
          cacheRead += n('cacheReadTokens');
          sawUsage = true;
        }
        const text = textOfBlocks(rec(data.message)?.content);
        if (text.trim() !== '') lastText = text;
        break;
      }
      case 'tool/call': {
        if (typeof data.callId !== 'string' || typeof data.name !== 'string') break;
        let args: unknown = data.arguments;
        if (typeof args === 'string') {
          try {
            args = JSON.parse(args);
          } catch {
            // keep the raw string
          }
        }
        calls.set(data.callId, { name: data.name, arguments: args, ok: false, completed: false });
        break;
      }
      case 'tool/result': {
        const message = rec(data.message);
        const block = Array.isArray(message?.content)
          ? rec((message.content as unknown[])[0])
          : undefined;
        const callId = typeof block?.toolCallId === 'string' ? block.toolCallId : undefined;
        const call = callId ? calls.get(callId) : undefined;
        if (call) {
          call.completed = true;
          call.ok = block?.isError !== true && data.error === undefined;
        }
        break;
      }
      case 'turn/end': {
        const kind = rec(data.reason)?.kind;
        if (typeof kind === 'string') lastTurnEnd = kind;
        break;
      }
      default:
        break;
    }
  }
  return {
    accessor: read.accessor,
    usage: sawUsage
      ? { inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead }
      : undefined,
    lastText,
    toolCalls: [...calls].map(([callId, c]) => ({ callId, ...c })),
    lastTurnEnd,
  };
}
