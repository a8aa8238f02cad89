// The records a run leaves: status, events, journal entries, start and finish records. Declared
// once here because the engine writes them and @wf/catalog-fs stores them, and neither may import
// the other (docs/design.md#layers). Types only; the RunRecorder port is the engine's, declared here
// with its records so the disk store can extend it.

import type { CapsuleRequires } from './capsule.js';

/** How far a workflow is trusted; decides sandboxing and approval. */
export type Trust = 'trusted-package' | 'capability-generated' | 'trusted-local';

export type RunStatus =
  | 'running'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'stopped'
  | 'denied'
  | 'interrupted';

/** The statuses a run ends in; a run in one of them never changes again. */
export type TerminalRunStatus = Exclude<RunStatus, 'running' | 'paused'>;

export type RunEventType =
  | 'workflow-started'
  | 'workflow-log'
  | 'workflow-completed'
  | 'workflow-failed'
  | 'workflow-stopped'
  | 'workflow-paused'
  | 'workflow-resumed'
  | 'phase-started'
  | 'phase-completed'
  | 'agent-started'
  | 'agent-completed'
  | 'agent-message'
  | 'synthesis-started'
  | 'synthesis-completed'
  | 'nested-started'
  | 'nested-completed'
  | 'artifact-written'
  | 'cache-hit'
  /** WARN_RATIO (80%) of a run limit used: data `{ limit, used, max, ratio, message }`. */
  | 'limit-warning';

/**
 * One line of a run's event log. `seq` is monotonic per run, starting at 1. `T` widens the type
 * for stores, which keep whatever event type they are given.
 */
export interface RunEvent<T extends string = RunEventType> {
  readonly seq: number;
  readonly runId: string;
  readonly type: T;
  /** Host wall-clock epoch ms when the event was emitted. */
  readonly time: number;
  readonly data: { readonly [key: string]: unknown };
}

export interface RunCost {
  readonly wallClockDurationMs: number;
  readonly agentsStarted: number;
  readonly agentsCompleted: number;
  readonly cacheHits: number;
  readonly tokenUsage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly totalTokens: number;
  };
  readonly peakConcurrency: number;
}

/** What the recorder is told when a run starts: enough to re-execute it for resume. */
export interface RunStartRecord {
  readonly runId: string;
  readonly workflow: string;
  readonly trust: Trust;
  readonly manifest: unknown;
  /** Source of a source-based run; absent for trusted-local host functions. */
  readonly source?: string;
  readonly args: unknown;
  readonly seed: number;
  /** Epoch ms the guest's logical clock starts at. */
  readonly startTime: number;
  readonly startedAt: number;
  readonly resumedFromRunId?: string;
  /** Set on a resumed run: the run it replays and when the resume started (epoch ms). */
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
  /** The agent provider's name (`simulated`, `dsh:spawn`...): resume refuses a different kind. */
  readonly provider?: string;
  /** True when the children are simulated (no model is called). */
  readonly simulated?: boolean;
  readonly sourceRunId?: string;
  readonly revisionOf?: string;
  /** The capsule's `requires`: resume checks it again against the host it resumes on. */
  readonly requires?: CapsuleRequires;
}

/** One journaled host call: what the guest asked, what it got, and when (logical time). */
export interface JournalEntry {
  /** Order in which the guest issued the call, from 1. */
  readonly seq: number;
  /** Order in which the result was delivered to the guest, from 1. */
  readonly settleSeq: number;
  readonly method: string;
  readonly input: unknown;
  readonly outcome:
    | { readonly ok: true; readonly value: unknown }
    | {
        readonly ok: false;
        readonly error: {
          readonly code: string;
          readonly message: string;
          readonly data?: unknown;
        };
      };
  /** Logical epoch ms the guest clock was set to when this result was delivered. */
  readonly settledAt: number;
  /**
   * Delivered after the run was stopped or failed and shaped by that (a stopped child, a refused
   * call): kept for the record, never replayed on resume, where the call runs again live.
   */
  readonly afterHalt?: true;
}

export interface RunFinishRecord {
  readonly status: TerminalRunStatus;
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly cost: RunCost;
  readonly endedAt: number;
}

/**
 * Where a run is recorded. Calls are made in order; `event` and `journal` must not block the
 * engine (buffer and flush). The in-memory recorder ships in @wf/engine; the disk one in
 * @wf/catalog-fs (`openRunStore`).
 */
export interface RunRecorder {
  begin(run: RunStartRecord): Promise<void>;
  /**
   * Optional, for durable backends that re-execute a run after its executor was lost (a worker
   * restarted in place, another sharing the store): begins the run, or continues recording one
   * this recorder holds under the same start, appending (`continued: true`). A different run under
   * the id is refused.
   */
  beginOrContinue?(run: RunStartRecord): Promise<{ readonly continued: boolean }>;
  /** Optional: stops recording a live run without ending it (its executor moved elsewhere). */
  detach?(runId: string): Promise<void>;
  event(event: RunEvent): void;
  /**
   * `text`, when given, is `JSON.stringify(entry)` as the engine already computed it (to charge
   * `maxJournalBytes`): a recorder may store it instead of serialising the entry a second time.
   */
  journal(runId: string, entry: JournalEntry, text?: string): void;
  /** Write-once JSON artifact; rejects when the name was already written in this run. */
  artifact(
    runId: string,
    name: string,
    value: unknown,
  ): Promise<{ readonly name: string; readonly ref: string }>;
  /** Coalesced snapshot fields (status, phase, counts...); the recorder decides when to persist. */
  update(runId: string, patch: { readonly [key: string]: unknown }): void;
  finish(runId: string, record: RunFinishRecord): Promise<void>;
  /** For resume: the start record and the journal of an earlier run, or undefined. */
  load?(
    runId: string,
  ): Promise<
    { readonly start: RunStartRecord; readonly journal: readonly JournalEntry[] } | undefined
  >;
}
