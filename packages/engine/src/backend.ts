// The execution backend port: where a run's journal lives, how its children are
// launched and what caps children across a deployment. The embedded backend (the default) keeps
// all three in this process; a durable backend (@wf/restate) keeps them in a durable engine so
// another machine can continue the run. The engine imports no backend (docs/design.md#layers).
import type { AllowanceRefusal } from './allowance.js';
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
  /**
   * The run tree's shared allowance (`SharedAllowance.ledger` of the root run): the nested run's
   * children are admitted and reserved there, as they start, with the parent's and its siblings'.
   */
  readonly allowance?: string;
  /** The root run's maxAgents, which the whole tree shares. */
  readonly maxAgents?: number;
}

/**
 * The agents and tokens of a run tree, kept by a durable backend where every worker reaches them
 * (@wf/engine's RunAllowance rules, one per root run): the root run and its nested runs admit and
 * reserve their children there as each starts; children the backend launches meter against it
 * (AgentMeter.ref) and are refused their next model call once the tree is over its budget.
 */
export interface SharedAllowance {
  /** The ledger's key (the root run id): nested runs and remote children name it. */
  readonly ledger: string;
  /** Counts a child (`key` unique in the tree) against the tree's maxAgents. */
  admit(key: string, what: string): Promise<AllowanceRefusal | undefined>;
  /** Counts children admitted before the run began sharing (idempotent). */
  seed(keys: readonly string[]): Promise<void>;
  /** Reserves a child's known cost before it starts. */
  reserve(key: string, tokens: number, what: string): Promise<AllowanceRefusal | undefined>;
  /** A child ended with this cumulative usage (what its executor did not report itself). */
  end(key: string, tokens: number): Promise<void>;
  /**
   * Refuses every later start and model call of the tree. The engine never calls it: only the
   * backend knows when a root run's end is final (an attempt it retries is not), and closes then.
   */
  close(refusal: AllowanceRefusal): Promise<void>;
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
  /**
   * The parent's caps: the nested run draws its children from the tree's shared allowance
   * (`scope.allowance`), so the tree as a whole never exceeds them.
   */
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
  /**
   * The shared allowance of the run tree rooted at `root` (its budget and maxAgents). Used when a
   * run has a token budget or belongs to a nesting tree; default: the run's own, in process.
   */
  allowance?(tree: {
    readonly root: string;
    readonly budget: number | null;
    readonly maxAgents: number;
  }): SharedAllowance;
}
