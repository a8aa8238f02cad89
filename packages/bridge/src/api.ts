// The author-facing `wf` API: what a workflow's `run(wf, args)` receives. workflow.d.ts mirrors
// these declarations for editors (a test keeps the two identical).
import type { IsolationMode, ModelHint } from './constants.js';
import type { JsonValue } from './internal/json.js';

/** A pointer to evidence a child should consult: a file, a diff, a finding, or another task of this run. */
export type EvidenceRef =
  | `file:${string}`
  | `diff:${string}`
  | `finding:${string}`
  | `task_id:${string}`;

/** Post-completion checks of a write task's work (the host decides what it can enforce). */
export interface TaskVerification {
  readonly enforcement?: 'hard' | 'warn';
  readonly requiresMutation?: boolean;
  readonly requiredChangedPaths?: readonly string[];
  readonly requiredReadPaths?: readonly string[];
  readonly minFinalTextChars?: number;
  readonly rejectPreparatoryFinalText?: boolean;
}

/** A JSON Schema for structured output; the root must be `type: 'object'`. */
export interface JsonSchemaObject {
  readonly type: 'object';
  readonly [keyword: string]: JsonValue;
}

/** One child agent task. Fields a provider cannot honour are refused before launch, never ignored. */
export interface TaskInput {
  readonly name: string;
  readonly prompt: string;
  /** Defaults to the enclosing `wf.phase`. */
  readonly phase?: string;
  readonly scopeSummary?: string;
  readonly constraints?: readonly string[];
  /** Read-only children need a provider with a tool filter. */
  readonly readOnly?: boolean;
  readonly subagentType?: string;
  readonly modelHint?: ModelHint;
  readonly provider?: string;
  readonly model?: string;
  readonly isolation?: IsolationMode;
  readonly effort?: string;
  readonly maxTokens?: number;
  /** `task_id:` refs must name a task of this run. */
  readonly evidenceRefs?: readonly EvidenceRef[];
  readonly verification?: TaskVerification;
  /** Structured output: validated against this schema; one repair child on failure. */
  readonly outputSchema?: JsonSchemaObject;
  readonly terseResult?: boolean;
}

/** What `spawnAgent` resolves with, once the child is published. */
export interface TaskHandle {
  readonly taskId: string;
  readonly name: string;
}

/** How a task ended. `completed_unverified`: completed, but a `warn` verification did not pass. */
export type TaskStatus = 'completed' | 'completed_unverified' | 'failed' | 'stopped';

/** Token usage of one child. `totalTokens` counts input + output + cache reads. */
export interface TaskUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly totalTokens: number;
}

/** A stable, redacted reason a task or call failed. */
export interface WorkflowErrorInfo {
  readonly code: string;
  readonly message: string;
}

/** How a finished task's verification went (present when the task asked for `verification`). */
export interface TaskVerificationOutcome {
  readonly ok: boolean;
  /** Why it did not pass; empty when `ok`. */
  readonly reasons: readonly string[];
}

/**
 * The full result of a task (`wait` returns it even when the task failed). This is exactly what
 * the engine delivers, in both trust classes; the engine uses this type, it does not redeclare it.
 */
export interface TaskResult<S = JsonValue> {
  readonly taskId: string;
  readonly name: string;
  /** `synthesis` for the child of `wf.synthesize`, `task` for every other child. */
  readonly kind: 'task' | 'synthesis';
  readonly status: TaskStatus;
  /** The child's final text; `text` is the same string. */
  readonly finalText: string;
  readonly text: string;
  /** Present when the task had an `outputSchema` and its output validated. */
  readonly structured?: S;
  /** True when `structured` came from the one repair child, after the first answer failed its schema. */
  readonly repaired?: boolean;
  readonly usage: TaskUsage;
  readonly phase?: string;
  /** The provider's id for the child (the DSH subagent id); absent when it never launched. */
  readonly childId?: string;
  /** Why a task failed or stopped. */
  readonly error?: WorkflowErrorInfo;
  readonly stopReason?: string;
  /** Present when the task asked for `verification`: whether the child's work passed it. */
  readonly verification?: TaskVerificationOutcome;
  /**
   * Host wall-clock epoch ms when the child started and ended. Not the guest's logical clock
   * (`Date.now()` inside the workflow): results are journaled, so a resumed run sees the same
   * numbers without the clock having to agree with them.
   */
  readonly startedAt: number;
  readonly endedAt: number;
  /** `endedAt - startedAt`. */
  readonly durationMs: number;
  /** The agent provider's name (`simulated`, `dsh:spawn`...). */
  readonly provider: string;
  /** `replayed`: answered from the run journal on resume, not re-run. */
  readonly origin: 'executed' | 'replayed';
}

/** Live state of a task. */
export interface TaskSnapshot<S = JsonValue> {
  readonly taskId: string;
  readonly name: string;
  readonly status: 'queued' | 'running' | TaskStatus;
  readonly phase?: string;
  /** The provider's id for the child, once it launched. */
  readonly childId?: string;
  /** The child's latest assistant text, when the provider exposes it. */
  readonly lastText?: string;
  readonly finalText?: string;
  readonly structured?: S;
  /** Host wall-clock epoch ms, as in `TaskResult`. */
  readonly startedAt?: number;
  readonly endedAt?: number;
}

/** Why the most recent `runAgent` (or `parallel` lane) returned null. */
export interface TaskFailure {
  readonly taskId: string | null;
  readonly name: string;
  readonly status: 'failed' | 'stopped';
  readonly error: WorkflowErrorInfo;
}

/** The run's token budget. Numbers only: no `Infinity` ever crosses the bridge. */
export interface WorkflowBudget {
  /** `manifest.tokenBudget`, or null without one. */
  readonly total: number | null;
  /** Tokens measured so far (input + output + cache reads). */
  spent(): number;
  /** `total - spent - reserved`, or null when there is no budget. */
  remaining(): number | null;
}

export interface WaitOptions {
  readonly timeoutMs?: number;
}

export interface ParallelOptions {
  readonly concurrency?: number;
}

/** One stage of `pipeline`: receives the previous stage's value (the item for the first stage). */
export type PipelineStage<T> = (
  value: unknown,
  item: T,
  index: number,
) => Promise<unknown> | unknown;

export interface SynthesizeInput {
  readonly inputs: unknown;
  readonly rubric: string;
}

export interface ArtifactRef {
  readonly name: string;
  /** Where the run store keeps it; `ref` is the same string. */
  readonly path: string;
  readonly ref: string;
}

export interface LogEvent {
  readonly message: string;
  readonly data?: unknown;
}

/** The `wf` object a workflow receives (deep-frozen inside the sandbox). */
export interface WorkflowApi<A = unknown> {
  /** The run's id; a resumed run keeps the id of the run it continues, a nested run its parent's. */
  readonly runId: string;
  /** A deep-frozen copy of the run's args. */
  readonly args: A;
  readonly budget: WorkflowBudget;
  /** Runs `fn` inside a named phase; phases nest and tasks inherit the innermost one. */
  phase<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Starts a child; resolves once it is published. */
  spawnAgent(input: TaskInput): Promise<TaskHandle>;
  /** Starts a child and waits; null when it failed or was stopped (see `lastFailure()`). */
  runAgent<S = JsonValue>(input: TaskInput): Promise<TaskResult<S> | null>;
  /** The full result, even on failure; rejects on timeout. */
  wait<S = JsonValue>(task: string | TaskHandle, options?: WaitOptions): Promise<TaskResult<S>>;
  snapshot(task: string | TaskHandle): Promise<TaskSnapshot>;
  output(task: string | TaskHandle): Promise<TaskSnapshot>;
  /** Steers a running child, where the provider can. */
  send(task: string | TaskHandle, text: string): Promise<void>;
  stop(task: string | TaskHandle, reason?: string): Promise<void>;
  /** Runs thunks with bounded lanes; an ordinary failure becomes null, a run-control error propagates. */
  parallel<T>(
    thunks: readonly (() => Promise<T> | T)[],
    options?: ParallelOptions,
  ): Promise<(T | null)[]>;
  /** Runs each item through the stages in order; a failing item becomes null. */
  pipeline<T>(items: readonly T[], ...stages: PipelineStage<T>[]): Promise<unknown[]>;
  /** A read-only synthesis child. */
  synthesize(input: SynthesizeInput): Promise<{ text: string }>;
  /** Runs a catalog workflow nested one level, sharing this run's limits and budget. */
  workflow(name: string, args?: unknown): Promise<unknown>;
  /** Writes a write-once JSON artifact. */
  artifact(name: string, value: unknown): Promise<ArtifactRef>;
  log(event: string | LogEvent): void;
  /** Reads a UTF-8 file inside the workspace (size-capped; no `..`, no symlinks out). */
  readFile(path: string): Promise<string>;
  /** Why the last null from `runAgent`/`parallel` happened, or null. */
  lastFailure(): TaskFailure | null;
}

/** The shape of a workflow's entry point. */
export type WorkflowRun<A = unknown, R = unknown> = (wf: WorkflowApi<A>, args: A) => Promise<R>;
