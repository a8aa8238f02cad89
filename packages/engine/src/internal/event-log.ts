// A run's event stream: monotonic seq, forwarded to the recorder, readable by any number of
// async iterators (each starts at the first event and ends when the run closes the log).
import type { RunEvent, RunEventType, RunRecorder } from '../ports.js';

export interface EventLog {
  /** `time` defaults to now; the start and terminal events pass the time the run record holds. */
  emit(type: RunEventType, data: { readonly [key: string]: unknown }, time?: number): RunEvent;
  /**
   * From now on events go to the recorder but readers do not see them until `release()`: the
   * terminal event reaches readers only once the run's end is recorded (invariant 12).
   */
  hold(): void;
  release(): void;
  close(): void;
  all(): readonly RunEvent[];
  readonly iterable: AsyncIterable<RunEvent>;
}

export function createEventLog(runId: string, recorder: RunRecorder): EventLog {
  const events: RunEvent[] = [];
  let closed = false;
  /** While held: how many events readers may see. */
  let held: number | undefined;
  let wake: (() => void)[] = [];
  const notify = () => {
    const ws = wake;
    wake = [];
    for (const w of ws) w();
  };
  return {
    emit(type, data, time = Date.now()) {
      const event: RunEvent = { seq: events.length + 1, runId, type, time, data };
      // After the run's final event nothing is recorded (a late straggler must not throw).
      if (closed) return event;
      events.push(event);
      try {
        recorder.event(event);
      } catch {
        // A failing recorder must not break the run; the in-memory copy stays complete.
      }
      notify();
      return event;
    },
    hold() {
      held ??= events.length;
    },
    release() {
      held = undefined;
      notify();
    },
    close() {
      closed = true;
      notify();
    },
    all: () => events,
    iterable: {
      [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
        let i = 0;
        return {
          async next(): Promise<IteratorResult<RunEvent>> {
            const seen = () => held ?? events.length;
            while (i >= seen() && !(closed && held === undefined))
              await new Promise<void>((r) => wake.push(r));
            if (i < seen()) return { value: events[i++] as RunEvent, done: false };
            return { value: undefined, done: true };
          },
          async return(): Promise<IteratorResult<RunEvent>> {
            i = Number.POSITIVE_INFINITY;
            return { value: undefined, done: true };
          },
        };
      },
    },
  };
}
