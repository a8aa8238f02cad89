// The execution backend port (issue 15): where a run's journal lives, how its children are
// launched and what caps children across a deployment. The embedded backend (the default) keeps
// all three in this process; a durable backend (@wf/restate) keeps them in a durable engine so
// another machine can continue the run. The engine imports no backend (DESIGN.md section 3).
import type { AgentProvider, JournalEntry } from './ports.js';

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
}
