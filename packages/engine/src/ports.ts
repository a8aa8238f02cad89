// The engine's ports: interfaces that other packages implement structurally (catalog-fs: the
// RunRecorder; dsh-adapter: the AgentProvider and Approver) and apps/plugin wires together.
// The engine never imports those packages (docs/design.md#layers). Task-level vocabulary (model
// hints, isolation, verification) and the run records (events, journal, start/finish) are the
// @wf/bridge contract's, not redeclared here; the records are re-exported for existing importers.
import type { IsolationMode, ModelHint, TaskVerification, Trust } from '@wf/bridge';

export type { JournalEntry, RunCost, RunEvent, RunEventType, RunFinishRecord } from '@wf/bridge';
export type { RunRecorder, RunStartRecord, RunStatus, Trust } from '@wf/bridge';

/** A JSON Schema object (the subset providers and ajv accept). */
export type JsonSchema = { readonly [key: string]: unknown };

/** The bridge's `ModelHint`, under the name providers know. */
export type ModelTier = ModelHint;

/** What a provider (transport) can honour. A task needing a missing one is refused before launch. */
export interface ProviderCapabilities {
  /** Can restrict a child's tools; required for `readOnly` tasks. */
  readonly toolFilter: boolean;
  /** Can make a child return a schema-shaped value; required for `outputSchema` tasks. */
  readonly outputSchema: boolean;
  /** Can send a message to a running child (`wf.send`). */
  readonly steer: boolean;
  /** Can run a child in an isolated worktree (`isolation: 'worktree'`). */
  readonly worktree?: boolean;
  /** Honours per-child `provider` / `model` / `maxTokens` / `effort`. */
  readonly agentOptions?: boolean;
}

/** A task's `verification`, as the bridge contract defines it. */
export type VerificationRequest = TaskVerification;

/** One child to launch, as the engine hands it to a provider (already validated). */
export interface AgentRequest {
  readonly runId: string;
  /** Engine-assigned, unique within the run (e.g. `task-3`). */
  readonly taskId: string;
  readonly kind: 'task' | 'synthesis' | 'repair';
  readonly name: string;
  /** The full prompt text, with scope/constraints/evidence already folded in. */
  readonly prompt: string;
  readonly phase?: string;
  readonly readOnly: boolean;
  readonly subagentType?: string;
  readonly modelHint?: ModelTier;
  readonly provider?: string;
  readonly model?: string;
  readonly maxTokens?: number;
  readonly effort?: string;
  readonly isolation?: IsolationMode;
  readonly evidenceRefs?: readonly string[];
  readonly verification?: VerificationRequest;
  readonly outputSchema?: JsonSchema;
  readonly terseResult?: boolean;
  /** The child must get no tools at all (the structured-output repair child). */
  readonly toolFree?: boolean;
}

export interface AgentUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens?: number;
}

/** How a child ended. `result` promises never reject: failures are data. */
export interface AgentResult {
  readonly status: 'completed' | 'failed' | 'stopped';
  readonly text: string;
  readonly structured?: unknown;
  readonly usage?: AgentUsage;
  readonly error?: { readonly code: string; readonly message: string };
  /** Verification evidence the provider collected (read paths, mutation calls...), if any. */
  readonly verification?: {
    readonly ok: boolean;
    readonly reasons: readonly string[];
    readonly readPaths?: readonly string[];
    readonly changedPaths?: readonly string[];
  };
}

/** A published child. The engine calls `dispose()` exactly once (invariant 7). */
export interface AgentHandle {
  /** The provider's id for the child (DSH: the subagent id). */
  readonly id: string;
  readonly result: Promise<AgentResult>;
  send?(text: string): Promise<void>;
  stop(reason?: string): void | Promise<void>;
  dispose(): void | Promise<void>;
  /** The child's latest assistant text, for `wf.output` / `wf.snapshot`. */
  lastText?(): string | undefined;
}

/** Why the engine refuses a child's next model call (a run-control code and a message). */
export interface MeterRefusal {
  readonly code: string;
  readonly message: string;
}

/**
 * How a child's spending reaches the run's token budget while it runs (invariant 6). A provider
 * that meters its children reports their cumulative usage as it learns it and asks before each
 * model call; a refused call is not made: the child ends (`failed`, with the refusal as its
 * error). The run's overrun is then bounded by one model call per running child. A provider that
 * ignores the meter is charged when each child ends, and its children are stopped when the run
 * is over its budget.
 */
export interface AgentMeter {
  /** The child's usage so far, every model call included (cumulative, never a delta). */
  report(usage: AgentUsage): void;
  /**
   * Asked before each model call with the usage so far (charged first). Undefined: make the call.
   * A refusal: do not make it, end the child.
   */
  beforeCall(usage: AgentUsage): MeterRefusal | undefined | Promise<MeterRefusal | undefined>;
  /**
   * Set when the child's spending is kept by a durable backend's shared allowance (a child
   * launched on another machine meters against `ledger` under `child`).
   */
  readonly ref?: { readonly ledger: string; readonly child: string };
}

export interface AgentProvider {
  /** A short name shown in events and run records (`simulated`, `dsh:spawn`...). */
  readonly name: string;
  /** True for providers whose children call no model (the simulated agents). */
  readonly simulated?: boolean;
  readonly capabilities: ProviderCapabilities;
  /**
   * Tokens a text costs as this provider counts them (its tokenizer estimate): what a child's
   * prompt and inputs reserve before it starts. Default: about four characters a token.
   */
  estimateTokens?(text: string): number;
  /**
   * Launches a child and resolves once it is published (has an id). Rejects only when the child
   * could not be launched at all; `signal` aborts a launch in progress. `meter`, when given,
   * receives the child's spending as it happens and gates each of its model calls.
   */
  start(request: AgentRequest, signal: AbortSignal, meter?: AgentMeter): Promise<AgentHandle>;
}

export interface ApprovalRequest {
  readonly runId: string;
  readonly workflow: string;
  readonly trust: Trust;
  /** One-line human summary: trust class, agent/concurrency caps, read-only or may mutate. */
  readonly summary: string;
}

export type ApprovalDecision = 'allowed' | 'rejected' | 'cancelled' | 'unavailable';

export interface Approver {
  request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision>;
}
