// The slice of the DSH host this adapter reads, as structural types. We never import
// `@deepseek-ai/*` at runtime (a plugin with no host imports loads from any path, and a host
// upgrade cannot break our module graph); test/host-contract.test.ts proves the real rc.8 types
// are assignable to these.

/** A content block as DSH passes it; only `text` blocks are read. */
export interface HostContentBlock {
  readonly type: string;
  readonly text?: string;
}

/** One session log entry (`SessionEvent`): `{ type, seq, time, data }`. */
export interface HostSessionEvent {
  readonly type: string;
  readonly seq: number;
  readonly time?: number;
  readonly data: unknown;
}

/**
 * `Session`. rc.8 exposes `events` (a frozen snapshot); later DSH exposes `snapshotEvents()` and
 * removed `events`. Both are optional here on purpose: readers must feature-detect.
 */
export interface HostSession {
  readonly id: string;
  readonly header: {
    readonly cwd?: string | undefined;
    readonly id?: string;
    /** Set on a subagent's session: its parent's session id. */
    readonly parentSession?: string | undefined;
  };
  readonly events?: readonly HostSessionEvent[];
  snapshotEvents?(): readonly HostSessionEvent[];
  append(type: unknown, data: unknown, ...rest: unknown[]): unknown;
}

/** A user message as `agent.followup/steer` takes it (`createUserMessage` output). */
export interface HostUserMessage {
  readonly id: string;
  readonly role: 'user';
  readonly content: readonly HostContentBlock[];
  readonly source: { readonly kind: string; readonly [key: string]: unknown };
}

/** `Agent`. */
export interface HostAgent {
  readonly id: string;
  readonly session: HostSession;
  readonly status?: string;
  followup?(message: unknown): void;
  steer?(message: unknown): void;
  inject?(message: unknown): void;
  whenIdle?(): Promise<void>;
  cancel?(cause: unknown, options?: unknown): void;
}

export interface HostSubagentCapabilities {
  readonly outputSchema?: boolean;
  readonly depthLimit?: boolean;
  readonly toolFilter?: boolean;
  readonly persona?: boolean;
  readonly agentOptions?: boolean;
}

export interface HostSubagentProvider {
  readonly name: string;
  readonly capabilities: HostSubagentCapabilities;
  readonly inheritsParentContext?: boolean;
}

export interface HostSubagentResult {
  readonly output: readonly HostContentBlock[];
  readonly structured?: unknown;
  readonly diagnostic?: string;
  readonly stopReason: string;
}

export interface HostSubagentRun {
  readonly id: string;
  readonly localAgent: HostAgent | undefined;
  readonly result: Promise<HostSubagentResult>;
  dispose(): Promise<void>;
}

/** What we hand to `ctx.subagents.start` (a subset of `SubagentStartRequest`). */
export interface HostSubagentStartRequest {
  readonly label?: string;
  readonly prompt: { type: 'text'; text: string }[];
  readonly parent: HostAgent;
  readonly signal: AbortSignal;
  readonly agentOptions?: { provider?: string; model?: string; maxTokens?: number };
  readonly outputSchema?: { readonly [key: string]: unknown };
  readonly maxDepth?: number;
  readonly toolFilter?: { allow: string[] } | { deny: string[] };
}

/** `ctx.subagents`. */
export interface HostSubagents {
  getProvider(name: string): HostSubagentProvider | undefined;
  start(provider: string, request: unknown): Promise<HostSubagentRun>;
}

/**
 * The host's event hooks (the plugin's Cordis context): `agent/request` is the waterfall DSH runs
 * before every model request of every agent (retries included); a listener that throws stops
 * that request. `on` returns a disposer.
 */
export interface HostRequestHooks {
  on(
    event: 'agent/request',
    listener: (payload: { readonly agent?: HostAgent }, next: () => Promise<unknown>) => unknown,
  ): unknown;
}

/** `ctx.tools`: only the visible-schema listing is read. */
export interface HostTools {
  schemas(scope?: unknown): readonly { readonly name: string }[];
}

export type HostApprovalOutcome = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable';

/** `ctx.approval` (optional service). */
export interface HostApproval {
  request(request: {
    agent: unknown;
    toolName: string;
    reason?: string;
    signal?: AbortSignal;
  }): Promise<HostApprovalOutcome>;
}

export interface HostQuestion {
  id: string;
  question: string;
  detail?: string;
  header?: string;
  options?: { label: string; description?: string }[];
  multiSelect?: boolean;
}

/** `ctx.userQuestions` (optional service). */
export interface HostUserQuestions {
  ask(request: {
    questions: HostQuestion[];
    agent?: unknown;
    signal?: AbortSignal;
  }): Promise<{ answers: { id: string; selected: string[]; custom?: string }[] }>;
}

export interface HostJobOutcome {
  status: 'completed' | 'killed' | 'failed';
  detail?: string;
  output?: string;
}

/** `ctx.jobs` (optional service). */
export interface HostJobs {
  start(spec: {
    kind: unknown;
    label: string;
    owner?: unknown;
    run(): { cancel(reason?: string): void; done: Promise<HostJobOutcome>; readOutput?(): string };
  }): string;
}

export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';

/** `ctx.sandboxPolicy` (optional service). */
export interface HostSandboxPolicy {
  resolve(request?: { session?: unknown }): {
    readonly mode: string;
    readonly workspaceRoot?: string;
  };
}
