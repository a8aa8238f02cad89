// The engine's state: what createEngine resolves once (limits, guarded recorder, deployment
// semaphore, schema cache, active runs, the sandbox), the per-run context, and small helpers.
import type { WorkflowManifest } from '@wf/bridge';
import { createSandbox } from '@wf/sandbox';
import { checkWorkflowSource } from '@wf/source-contract';
import { EngineError } from '../errors.js';
import { resolveLimits, type WallClock } from '../limits.js';
import { createMemoryRecorder } from '../memory-recorder.js';
import type { DeploymentSemaphore, ExecutionBackend } from '../backend.js';
import type { AgentProvider, JournalEntry, RunCost, RunRecorder } from '../ports.js';
import type {
  EngineLimits,
  EngineOptions,
  HostCallContext,
  RunDone,
  SandboxLike,
  StartOptions,
} from '../types.js';
import type { EventLog } from './event-log.js';
import { cloneJson } from './json.js';
import type { Run } from './run.js';
import { createSemaphore, type Gate } from './semaphore.js';
import { createSchemaCheck, type SchemaCheck } from './structured.js';

export type Cap = (input: unknown, ctx: HostCallContext) => Promise<unknown>;

export interface Prepared {
  readonly runId: string;
  readonly options: StartOptions;
  readonly replay?: readonly JournalEntry[];
  readonly resumedFromRunId?: string;
  /** The run a resumed run continues across resumes (its guest's wf.runId). */
  readonly logicalRunId?: string;
  /** The recorded source and args a resumed run replays (divergence messages compare them). */
  readonly replayedFrom?: { readonly source?: string; readonly args: unknown };
}

/** Everything one engine instance holds; the preflight, execute and handle modules take it first. */
export interface EngineState {
  readonly options: EngineOptions;
  readonly limits: EngineLimits;
  readonly recorder: RunRecorder;
  /** The backend's, or `options.agents` (embedded). */
  readonly agents: AgentProvider;
  readonly deployment: DeploymentSemaphore;
  readonly backend: ExecutionBackend;
  readonly schemas: SchemaCheck;
  readonly active: Map<string, { stop(reason: string): void; done: Promise<RunDone> }>;
  /** The sandbox this engine created (closed by engine.close), if it needed one. */
  ownSandbox: Promise<SandboxLike> | undefined;
}

/** One run between begin and finish: what execute() and the handle share. */
export interface RunContext {
  readonly prepared: Prepared;
  readonly runId: string;
  readonly start: StartOptions;
  readonly events: EventLog;
  readonly gate: Gate;
  readonly wall: WallClock;
  /** Aborts a pending approval when the run is stopped during preflight. */
  readonly preflight: AbortController;
  run: Run | undefined;
  stopRequest: string | undefined;
}

export function createEngineState(options: EngineOptions): EngineState {
  const agents = options?.backend?.agents ?? options?.agents;
  if (!options || typeof agents?.start !== 'function') {
    throw new EngineError(
      'WF_ENGINE_INVALID_START',
      'createEngine needs { agents: AgentProvider }',
    );
  }
  const limits: EngineLimits = resolveLimits(options.limits);
  const recorder: RunRecorder = guardRecorder(options.recorder ?? createMemoryRecorder());
  const backend: ExecutionBackend = options.backend ?? { name: 'embedded' };
  const deployment = backend.deployment ?? createSemaphore(limits.deploymentConcurrency);
  const schemas = createSchemaCheck();
  const active = new Map<string, { stop(reason: string): void; done: Promise<RunDone> }>();
  return {
    options,
    limits,
    recorder,
    agents,
    deployment,
    backend,
    schemas,
    active,
    ownSandbox: undefined,
  };
}

export async function sandbox(e: EngineState): Promise<SandboxLike> {
  if (e.options.sandbox) return e.options.sandbox;
  e.ownSandbox ??= createSandbox();
  return e.ownSandbox;
}

// Invariant 4: the static contract is defence in depth; the sandbox still contains everything.
export async function checkSource(e: EngineState, source: string) {
  if (e.options.checkSource === false) return { ok: true as const };
  if (e.options.checkSource) return e.options.checkSource(source);
  return checkWorkflowSource(source);
}

/** The cost of a run that never started a child (refused in preflight or before it). */
export function emptyCost(): RunCost {
  return {
    wallClockDurationMs: 0,
    agentsStarted: 0,
    agentsCompleted: 0,
    cacheHits: 0,
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    peakConcurrency: 0,
  };
}

/**
 * `event`, `journal` and `update` must not block or break a run: a recorder that throws there is
 * ignored for that call (the run's in-memory events stay complete). The async methods keep their
 * failures: `begin` failing fails the run, `artifact` failing is the workflow's ordinary error.
 */
function guardRecorder(inner: RunRecorder): RunRecorder {
  const quiet =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args);
      } catch {
        // see above
      }
    };
  return {
    begin: (run) => inner.begin(run),
    event: quiet((e) => inner.event(e)),
    journal: quiet((runId, entry, text) => inner.journal(runId, entry, text)),
    artifact: (runId, name, value) => inner.artifact(runId, name, value),
    update: quiet((runId, patch) => inner.update(runId, patch)),
    finish: (runId, record) => inner.finish(runId, record),
    ...(inner.load
      ? { load: (runId: string) => inner.load?.(runId) ?? Promise.resolve(undefined) }
      : {}),
  };
}

export function recordable(value: unknown): unknown {
  const cloned = cloneJson(value);
  return cloned.ok ? cloned.value : null;
}

export function sandboxError(
  status: string,
  error: { code: string; message: string },
): { code: string; message: string } {
  if (status === 'failed') return { code: error.code, message: error.message };
  return {
    code: error.code,
    message: `the workflow ended with sandbox status ${status}: ${error.message}`,
  };
}

export function issuesText(issues: readonly { path: string; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ');
}

export function summaryOf(m: WorkflowManifest, trust: string): string {
  return `${trust} workflow ${m.name}: up to ${m.maxAgents} agents, ${m.maxConcurrency} at a time, ${m.readOnly ? 'read-only' : 'may modify files'}${m.tokenBudget ? `, token budget ${m.tokenBudget}` : ''}`;
}

export function safeEmit(
  events: EventLog,
  type: Parameters<EventLog['emit']>[0],
  data: Record<string, unknown>,
  time?: number,
): void {
  try {
    events.emit(type, data, time);
  } catch {
    // the log is closed: the run has finished
  }
}
