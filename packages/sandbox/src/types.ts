// Public types of @wf/sandbox (the pinned API: docs/design.md#pinned-api).

/** What a capability receives besides its JSON input. */
export interface CapabilityContext {
  /** Aborted when the run times out, is aborted, or is otherwise stopped while this call is outstanding. */
  readonly signal: AbortSignal;
  /** 1-based sequence number of this host call within the run. */
  readonly callId: number;
  /** Sets the guest's logical clock (`Date.now()`) to take effect when this call's result is delivered. */
  setNow(epochMs: number): void;
}

/** An async host function the guest may call with one JSON input. */
export type Capability = (input: unknown, ctx: CapabilityContext) => unknown | Promise<unknown>;

export interface SandboxLimits {
  /**
   * Hard bound on the run's WebAssembly linear memory (engine, kernel and guest heap; at least
   * 16 MiB is used whatever the value). Allocations past it fail inside the engine.
   */
  memoryBytes: number;
  /** QuickJS stack limit, 256 KiB to 1 MiB. */
  stackBytes: number;
  /** Most CPU time one uninterrupted synchronous guest slice may use (thread CPU time on Linux). */
  cpuSliceMs: number;
  /** Total CPU time the run's guest code may use across all its slices (default 10,000). */
  cpuMs: number;
  /** Wall-clock bound for the whole run, including draining host calls. */
  wallMs: number;
  /** Total host calls a run may make. */
  maxHostCalls: number;
  /** Host calls a run may have in flight at once. */
  maxOutstandingCalls: number;
  /** Largest capability input (UTF-8 bytes of its JSON). */
  maxArgBytes: number;
  /** Largest final result, and largest capability result delivered into the guest. */
  maxResultBytes: number;
  /** Deepest array/object nesting of any JSON crossing. */
  maxJsonDepth: number;
  /** How long outstanding capability calls get to settle after their signal is aborted. */
  abortGraceMs: number;
}

export interface SandboxOptions {
  /** Worker threads kept warm (default: the number of cores). */
  poolSize?: number;
  /** Defaults for every run; a request's `limits` override them. */
  limits?: Partial<SandboxLimits>;
  /** Retire a WASM module once its linear memory exceeds this (default 128 MiB). */
  moduleHighWaterBytes?: number;
  /** Retire a WASM module after this many runs (default 2000). */
  moduleMaxRuns?: number;
  /**
   * `false` sets V8's `--liftoff-only` for the whole process, from the first worker thread once
   * Node has booted it and before it compiles QuickJS: WebAssembly then runs on V8's baseline
   * compiler only (default `true`: V8's own tiering). For short-lived processes, such as a
   * command line: with tier-up, V8's optimizing compiler is still compiling QuickJS in the
   * background when a short process wants to exit, and the exit waits for it. The cost: CPU-heavy
   * guests run slower once warm (their CPU limits are unchanged). Process-wide and not
   * undone by `close()`: every WebAssembly module compiled afterwards in the process is affected.
   */
  wasmTierUp?: boolean;
}

export interface SandboxRequest {
  /** The guest program, defining `async function run(api, args)`. */
  source: string;
  /** JSON arguments (cloned; `__proto__`/`constructor`/`prototype` keys dropped). */
  args?: unknown;
  capabilities: Record<string, Capability>;
  /** Trusted guest JS: the source of a function expression called as `prelude(caps, meta)`. */
  prelude?: string;
  limits?: Partial<SandboxLimits>;
  /** Math.random seed (a safe non-negative integer); default: random, reported in stats. */
  seed?: number;
  /** Epoch ms the logical clock starts at; default: now. */
  startTime?: number;
  signal?: AbortSignal;
}

export interface SandboxStats {
  elapsedMs: number;
  /** CPU time spent executing guest code (thread CPU time where available, else wall time). */
  cpuMs: number;
  /** Host calls accepted. */
  hostCalls: number;
  /** Highest sampled guest heap usage in bytes. */
  peakMemoryBytes: number;
  seed: number;
  startTime: number;
  workerId: string;
  moduleId: string;
  /**
   * WASM modules the run's worker had retired after trouble (an interrupted run, a stack
   * overflow, the memory maximum, an engine fault) when the run ended; wear (`moduleMaxRuns`,
   * `moduleHighWaterBytes`) is not counted. A diagnostic: a later run on the same worker shows
   * whether a troubled module was retired rather than kept for reuse.
   */
  retiredAfterTrouble: number;
}

export type SandboxFailureStatus =
  | 'failed'
  | 'timeout'
  | 'memory'
  | 'stack'
  | 'deadlock'
  | 'aborted'
  | 'limit';

export interface SandboxOutcomeError {
  code: string;
  message: string;
  /** The `code` string of the guest's thrown error, when it had one (guest data: never trust it). */
  guestCode?: string;
}

export type SandboxOutcome =
  | { status: 'completed'; value: unknown; stats: SandboxStats }
  | { status: SandboxFailureStatus; error: SandboxOutcomeError; stats: SandboxStats };

export interface Sandbox {
  run(request: SandboxRequest): Promise<SandboxOutcome>;
  close(): Promise<void>;
}
