// Public types of the engine API (start options, handles, limits); the task types come from @wf/bridge.
import type {
  CapsuleRequires,
  TaskResult as ApiTaskResult,
  TaskFailure,
  TaskInput,
  TaskSnapshot as ApiTaskSnapshot,
  TaskStatus,
  WorkflowApi,
} from '@wf/bridge';
import type { ExecutionBackend, NestedScope } from './backend.js';
import type {
  AgentProvider,
  Approver,
  ModelTier,
  RunCost,
  RunEvent,
  RunRecorder,
  Trust,
} from './ports.js';

export type { TaskFailure, TaskInput, TaskStatus };

/** Engine-wide limits; a run gets the tighter of these and its manifest. */
export interface EngineLimits {
  /** Children per run (the manifest's maxAgents is also applied). Default 100. */
  readonly maxAgents: number;
  /** Concurrent children per run (the manifest's maxConcurrency is also applied). Default 8. */
  readonly maxConcurrency: number;
  /** Concurrent children across every run of this engine. Default 16. */
  readonly deploymentConcurrency: number;
  /** Per-run wall limit in ms, paused time excluded; null (the default) means none. */
  readonly wallMs: number | null;
  /**
   * Token budget of a run whose manifest sets none; with both, the tighter applies. null (the
   * engine default) means none; apps set one (the DSH plugin and the CLI do by default).
   */
  readonly tokenBudget: number | null;
  /**
   * Wall limit of one child in ms: a child still running after it is stopped and ends `failed`
   * with WF_ENGINE_CHILD_TIMEOUT (a child stuck in a retry loop cannot run for ever). null (the
   * engine default) means none.
   */
  readonly childWallMs: number | null;
  /**
   * Tokens reserved for a task without `maxTokens` when the run has a budget, capped at an even
   * share of the budget: min(defaultTaskTokens, floor(budget / run concurrency)). Default 16000.
   */
  readonly defaultTaskTokens: number;
  /** Host calls per run (every `wf` call, nested included). Default 10000. */
  readonly maxCalls: number;
  /** Bytes of `wf.log` messages and data per run (JSON size). Default 1 MiB. */
  readonly maxLogBytes: number;
  /** Bytes of `wf.artifact` values per run (JSON size, all artifacts). Default 16 MiB. */
  readonly maxArtifactBytes: number;
  /** Bytes (JSON) of the run's journal: every call's input and answer. Default 128 MiB. */
  readonly maxJournalBytes: number;
  /** Largest file `wf.readFile` returns, in bytes. Default 1 MiB. */
  readonly readFileMaxBytes: number;
  /** How long replay waits for a journaled call the workflow has not issued. Default 10 s. */
  readonly replayStallMs: number;
  /** How long a stopped child, or a dispose call, may take before the engine moves on. Default 10 s. */
  readonly stopGraceMs: number;
  /** Passed to the sandbox (memoryBytes, stackBytes, cpuSliceMs, maxHostCalls...). */
  readonly sandbox: { readonly [key: string]: number };
}

/** A workflow the engine can run: source-based (sandboxed) or a trusted-local host function. */
export type WorkflowInput =
  | { readonly manifest: unknown; readonly source: string; readonly name?: string }
  | {
      readonly manifest: unknown;
      readonly run: (wf: HostWorkflowApi, args: unknown) => unknown;
      readonly name?: string;
    };

/** The sandbox surface the engine uses (docs/design.md#pinned-api; `@wf/sandbox` provides it). */
export interface SandboxLike {
  run(request: {
    source: string;
    args?: unknown;
    capabilities: Record<string, (input: unknown, ctx: HostCallContext) => unknown>;
    prelude?: string;
    limits?: { readonly [key: string]: number };
    seed?: number;
    startTime?: number;
    signal?: AbortSignal;
  }): Promise<
    | { status: 'completed'; value: unknown; stats?: unknown }
    | { status: string; error: { code: string; message: string }; stats?: unknown }
  >;
  close(): Promise<void>;
}

export interface HostCallContext {
  readonly signal: AbortSignal;
  readonly callId: number;
  setNow(epochMs: number): void;
}

export type SourceCheck = (source: string) =>
  | { ok: true; warnings?: readonly unknown[] }
  | {
      ok: false;
      errors: readonly { code: string; message: string; line?: number; column?: number }[];
    };

/** A catalog workflow for `wf.workflow(name, args)`. Trusted-local is never granted nested. */
export interface ResolvedWorkflow {
  readonly manifest: unknown;
  readonly source: string;
  readonly trust?: Exclude<Trust, 'trusted-local'>;
}

/**
 * What the host can offer a run, for preflight of a capsule's `requires` (each list absent means
 * "cannot tell", which refuses a requirement on it: fail closed).
 */
export interface HostFacts {
  /** Tool names a child of this run can be given. */
  readonly tools?: readonly string[];
  readonly mcpServers?: readonly string[];
  readonly skills?: readonly string[];
  /** Model tiers this deployment routes to a configured model. */
  readonly modelTiers?: readonly ModelTier[];
  /** Whether a user can answer questions during the run. */
  readonly userInteraction?: boolean;
  /** Why not, when `userInteraction` is false (shown in the refusal). */
  readonly userInteractionWhy?: string;
}

export interface EngineOptions {
  readonly agents: AgentProvider;
  readonly recorder?: RunRecorder;
  readonly sandbox?: SandboxLike;
  readonly limits?: Partial<EngineLimits>;
  /** Consulted before every run when set; anything but `allowed` ends the run `denied`. */
  readonly approver?: Approver;
  /** Resolves `wf.workflow(name)`; without it nested workflows are refused. */
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  /** Root directory for `wf.readFile`; without it readFile is refused. */
  readonly workspace?: string;
  /**
   * `wf.readFile` never reads these roots (the run store and catalog directories the app uses),
   * nor any `.dsh/` directory; such reads fail `WF_ENGINE_READ_PROTECTED`. `allow` names subtrees
   * of `.dsh/` the app itself wrote for workflows to read (e.g. review packets); a deny root
   * still wins inside them.
   */
  readonly readFile?: { readonly deny?: readonly string[]; readonly allow?: readonly string[] };
  /** The static source contract; defaults to `checkWorkflowSource` from @wf/source-contract. */
  readonly checkSource?: SourceCheck | false;
  /**
   * Host facts for a run's `requires` preflight; without it every requirement but the
   * environment ones is refused (the engine cannot confirm them).
   */
  readonly hostFacts?: (run: { readonly runId: string }) => HostFacts | Promise<HostFacts>;
  /**
   * Where journals live, how children launch and what caps them deployment-wide. Default: the
   * embedded backend (all in this process). See `ExecutionBackend`.
   */
  readonly backend?: ExecutionBackend;
}

export interface StartOptions {
  readonly workflow: WorkflowInput;
  readonly args?: unknown;
  readonly trust: Trust;
  readonly runId?: string;
  readonly signal?: AbortSignal;
  /** Math.random seed for the guest; default random (recorded for resume). */
  readonly seed?: number;
  /** Epoch ms the guest's logical clock starts at; default now. */
  readonly startTime?: number;
  /** Per-run overrides, still capped by the engine's limits where they are caps. */
  readonly limits?: Partial<
    Pick<EngineLimits, 'maxAgents' | 'maxConcurrency' | 'wallMs' | 'tokenBudget' | 'childWallMs'>
  >;
  /**
   * The capsule's `requires`, enforced in preflight before any child starts (git repo around the
   * workspace, tools, MCP servers, skills, model tiers, user interaction).
   */
  readonly requires?: CapsuleRequires;
  /** Lineage recorded in the start record. */
  readonly sourceRunId?: string;
  readonly revisionOf?: string;
  /**
   * Set by a durable backend running a nested `wf.workflow` as its own run: the run is a nested
   * scope (it cannot nest again) and its guest sees the parent's run id, budget and task ids.
   */
  readonly nested?: NestedScope;
}

export interface ResumeOptions {
  /** Id of the new run; default a fresh one. */
  readonly runId?: string;
  readonly signal?: AbortSignal;
  readonly limits?: StartOptions['limits'];
  /**
   * Resume with this engine's agents even when the run was recorded with the other kind (real
   * vs simulated); without it such a resume is refused (`WF_ENGINE_RESUME_PROVIDER_MISMATCH`).
   * The resumed run records this engine's provider.
   */
  readonly allowProviderChange?: boolean;
}

export interface RunDone {
  readonly status: 'completed' | 'failed' | 'stopped' | 'denied' | 'interrupted';
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly cost: RunCost;
  /**
   * Set for a run started with `StartOptions.nested`: its highest task number and children
   * admitted, replayed ones included, so the parent continues from them.
   */
  readonly nested?: { readonly lastTaskSeq: number; readonly agents: number };
  /**
   * Set when the recorder could not store the run (invariant 12: "done" means durable). `begin`:
   * its start could not be recorded, so nothing ran (status `failed`) and nothing is recorded.
   * `finish`: the run ended as `status` says, but its terminal record and result are not durable;
   * what the recorder holds stays resumable (the disk store keeps retrying while its process
   * lives). A surface must not report such a run as completed without saying so.
   */
  readonly unrecorded?: {
    readonly stage: 'begin' | 'finish';
    readonly code: string;
    readonly message: string;
  };
}

export interface RunHandle {
  readonly runId: string;
  readonly events: AsyncIterable<RunEvent>;
  readonly done: Promise<RunDone>;
  pause(): void;
  resume(): void;
  stop(reason?: string): void;
}

export interface Engine {
  start(options: StartOptions): Promise<RunHandle>;
  /** Re-executes a recorded run, answering journaled calls from the journal, then continues live. */
  resume(runId: string, options?: ResumeOptions): Promise<RunHandle>;
  /** Runs currently active on this engine. */
  active(): readonly string[];
  /** Stops every active run and closes a sandbox the engine created itself. */
  close(): Promise<void>;
  readonly limits: EngineLimits;
}

// The task types and the `wf` API are the bridge's (one contract, docs/design.md#layers): the
// engine re-exports them and never redeclares them. `structured` is `unknown` on the engine side:
// it holds whatever passed the task's own schema.

/** What `wait` / `runAgent` return for a finished child (the bridge's `TaskResult`). */
export type TaskResult = ApiTaskResult<unknown>;

/** Live state of a task (the bridge's `TaskSnapshot`). */
export type TaskSnapshot = ApiTaskSnapshot<unknown>;

/** The `wf` a trusted-local host function receives: the same `WorkflowApi` as the guest's. */
export type HostWorkflowApi = WorkflowApi;
