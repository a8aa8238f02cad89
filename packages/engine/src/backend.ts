// The execution backend port: where a run's journal lives, how its children are
// launched and what caps children across a deployment. The embedded backend (the default) keeps
// all three in this process; a durable backend (@wf/restate) keeps them in a durable engine so
// another machine can continue the run. The engine imports no backend (docs/design.md#layers).
import type { AgentProvider, JournalEntry } from './ports.js';
import type { ResolvedWorkflow, RunDone } from './types.js';

/** A run's journal as a backend holds it: what to replay, and where new entries go. */
export interface BackendJournal {
  /**
   * Entries already recorded for this run id, any order (the engine orders them by settleSeq).
   * Non-empty when the run is being continued after its previous executor was lost: those calls
   * are answered from here, in their recorded delivery order, and unfinished children relaunch.
   */
  readonly entries: readonly JournalEntry[];
  /**
   * Persists one entry. Called in delivery (settleSeq) order, replayed entries included, so the
   * stored journal is always a prefix of one execution. It must not throw; a backend that cannot
   * keep the journal fails the run through `fail`.
   */
  append(entry: JournalEntry): void;
}

/** The deployment-wide cap on running children (invariant 6), shared by every run it serves. */
export interface DeploymentSemaphore {
  /** Resolves with a release function once a slot is free; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

/**
 * What a nested run started by a durable backend must look like to its guest: the parent's run
 * id and token budget, and task ids continuing the parent's (the embedded engine runs a nested
 * workflow inside the parent's run, so the guest sees exactly these).
 */
export interface NestedScope {
  readonly guestRunId: string;
  /** The parent's highest task number when the nested run began. */
  readonly firstTaskSeq: number;
  readonly budgetTotal: number | null;
}

/** One `wf.workflow` call handed to a durable backend (after the engine checked it). */
export interface NestedRunCall {
  readonly parentRunId: string;
  /** The parent guest's host call number: the same call gets the same number on every replay. */
  readonly callId: number;
  readonly name: string;
  readonly workflow: ResolvedWorkflow;
  /** Validated against the nested manifest. */
  readonly args: unknown;
  readonly seed: number;
  readonly startTime: number;
  readonly scope: NestedScope;
  /** What the parent has left: the nested run may use no more (a nested run shares its caps). */
  readonly limits: { readonly maxAgents: number; readonly tokenBudget?: number };
  /** The parent run's signal: aborted when it stops or fails. */
  readonly signal: AbortSignal;
}

export interface ExecutionBackend {
  /** Shown in the run's `workflow-started` event (`embedded`, `restate`...). */
  readonly name: string;
  /**
   * Opens the journal of a run about to execute; `fail` ends that run with a run-control error.
   * Default (embedded): the journal goes only to the RunRecorder and a run replays only on
   * `engine.resume`.
   */
  openJournal?(
    runId: string,
    fail: (error: { code: string; message: string }) => void,
  ): Promise<BackendJournal>;
  /** Launches children. Default: `EngineOptions.agents`. */
  readonly agents?: AgentProvider;
  /** Caps children across the deployment. Default: one in-process semaphore per engine. */
  readonly deployment?: DeploymentSemaphore;
  /**
   * Runs a nested `wf.workflow` as its own durable run (started with `StartOptions.nested`), so a
   * parent continued elsewhere re-attaches to it. Default: inside the parent's run.
   */
  nested?(call: NestedRunCall): Promise<RunDone>;
}
