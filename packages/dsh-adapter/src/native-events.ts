// The native `tool-workflow/*` session events DSH Web draws its workflow card from. Invariant 11:
// we write exactly the fields the host schema defines (dsh-tool-workflow types), nothing more:
// the earlier plugin's extra `turn: null` on run-start made a later DSH session migration reject
// its users' sessions. Persistence also refuses logs with unknown event types, so only these four
// known types are ever appended.
import type { HostSession } from './host.js';

export const NATIVE_EVENT_TYPES = [
  'tool-workflow/run-start',
  'tool-workflow/agent-start',
  'tool-workflow/agent-end',
  'tool-workflow/run-end',
] as const;

export type NativeAgentOutcome = 'completed' | 'failed' | 'cancelled';
export type NativeStopReason = 'completed' | 'cancelled' | 'error';

/** The exact payload field lists, per type (the tests compare against these). */
export const NATIVE_EVENT_FIELDS = {
  'tool-workflow/run-start': ['runId', 'name'],
  'tool-workflow/agent-start': ['runId', 'seq', 'label', 'phase', 'childId'],
  'tool-workflow/agent-end': ['runId', 'seq', 'outcome'],
  'tool-workflow/run-end': ['runId', 'stopReason'],
} as const;

export interface NativeRunEvents {
  /** Appends `run-start {runId, name}` once per run id. */
  runStart(runId: string, name: string): void;
  /** Appends `agent-start`; returns the member's seq (1, 2, ... per run). */
  agentStart(input: {
    runId: string;
    label: string;
    phase?: string | undefined;
    childId: string;
  }): number;
  /** Appends `agent-end` once for a started member; later calls are ignored. */
  agentEnd(runId: string, seq: number, outcome: NativeAgentOutcome): void;
  /**
   * Appends `run-end` once. Members still open are ended `cancelled` first so every agent-start
   * has its agent-end (the UI otherwise shows them running forever).
   */
  runEnd(runId: string, stopReason: NativeStopReason): void;
  /** Appends that failed (the host refused); the run itself never fails for them. */
  readonly failures: readonly { type: string; message: string }[];
}

interface RunState {
  nextSeq: number;
  open: Set<number>;
  ended: boolean;
}

/** A writer bound to one parent session. Never throws: a refused append is recorded in `failures`. */
export function createNativeRunEvents(session: HostSession): NativeRunEvents {
  const runs = new Map<string, RunState>();
  const failures: { type: string; message: string }[] = [];
  const append = (type: (typeof NATIVE_EVENT_TYPES)[number], data: Record<string, unknown>) => {
    try {
      session.append(type, data);
    } catch (error) {
      failures.push({ type, message: error instanceof Error ? error.message : String(error) });
    }
  };
  const state = (runId: string): RunState => {
    let s = runs.get(runId);
    if (!s) {
      s = { nextSeq: 1, open: new Set(), ended: false };
      runs.set(runId, s);
    }
    return s;
  };
  return {
    failures,
    runStart(runId, name) {
      if (runs.has(runId)) return;
      state(runId);
      append('tool-workflow/run-start', { runId, name });
    },
    agentStart({ runId, label, phase, childId }) {
      const s = state(runId);
      const seq = s.nextSeq++;
      if (s.ended) return seq;
      s.open.add(seq);
      const data: Record<string, unknown> = { runId, seq, label };
      if (typeof phase === 'string' && phase !== '') data.phase = phase;
      data.childId = childId;
      append('tool-workflow/agent-start', data);
      return seq;
    },
    agentEnd(runId, seq, outcome) {
      const s = runs.get(runId);
      if (!s?.open.delete(seq)) return;
      append('tool-workflow/agent-end', { runId, seq, outcome });
    },
    runEnd(runId, stopReason) {
      const s = state(runId);
      if (s.ended) return;
      for (const seq of [...s.open].sort((a, b) => a - b)) {
        s.open.delete(seq);
        append('tool-workflow/agent-end', { runId, seq, outcome: 'cancelled' });
      }
      s.ended = true;
      append('tool-workflow/run-end', { runId, stopReason });
    },
  };
}

/** Maps our run status to the host's stop-reason vocabulary. */
export function nativeStopReason(status: string): NativeStopReason {
  if (status === 'completed') return 'completed';
  if (status === 'stopped' || status === 'interrupted' || status === 'denied') return 'cancelled';
  return 'error';
}
