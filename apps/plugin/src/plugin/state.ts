// The workflow service's state as one explicit object, and the shapes its modules share
// (project, launch, trusted-local, runs-index, lineage): each module is functions over this state.
import type { WorkflowManifest } from '@wf/bridge';
import type {
  Catalog,
  RunStore,
  ShippedWorkflows,
  WorkflowResolver,
  WorkflowSource,
} from '@wf/catalog-fs';
import type { HostAgent, HostSession, NativeRunEvents } from '@wf/dsh-adapter';
import type { Engine, RunDone, RunEvent, RunHandle, Trust } from '@wf/engine';
import { type Failure, failure } from '@wf/errors';
import type { PluginConfig } from './config.js';
import type { OptionalServices, PluginHost } from './host-context.js';
import type { RunRouter } from './routing.js';

export const PLUGIN_NAME = 'wf-workflows';

export type RunSource = WorkflowSource;

/** Manifest and source: what save, rerun and resume re-use. */
export interface RunProgram {
  readonly manifest: WorkflowManifest;
  readonly source: string;
}

export interface RunSummary {
  readonly runId: string;
  readonly workflow: string;
  readonly source: RunSource;
  readonly trust: Trust;
  status: RunDone['status'] | 'running' | 'paused';
  readonly startedAt: number;
  endedAt?: number;
  result?: unknown;
  error?: { code: string; message: string };
  jobId?: string;
  readonly cwd: string;
  readonly args: unknown;
  readonly capsule?: RunProgram;
  readonly events: RunEvent[];
  /** Read back from the run store (an earlier process), not launched here. */
  readonly stored?: boolean;
  /** A resumed run: the run it continues and when the resume started (epoch ms). */
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
  /** True when the run's children were simulated (a run recorded by the `wf` command line). */
  readonly simulated?: boolean;
}

export interface RunReply {
  readonly runId: string;
  /** The workflow's name (the manifest's, or the catalog entry's). */
  readonly workflow?: string;
  readonly status: RunSummary['status'];
  /** From start to end; absent while running. */
  readonly durationMs?: number;
  /** The run's children by outcome, as the run report counts them. */
  readonly agents?: RunAgentCounts;
  readonly result?: unknown;
  /** `hint` names what would have allowed a denied run (an option, a mode). */
  readonly error?: { code: string; message: string; hint?: string };
  readonly jobId?: string;
  readonly note?: string;
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
}

export interface RunAgentCounts {
  readonly total: number;
  readonly completed: number;
  /** Replayed from the journal on a resume (counted as completed in the summary line). */
  readonly cached: number;
  readonly failed: number;
  readonly stopped: number;
  readonly running: number;
}

/** The one failure shape of the kit: `{ ok: false, error: { code, message, hint? } }`. */
export type ServiceFailure = Failure;
export type ServiceResult<T> = ({ readonly ok: true } & T) | ServiceFailure;

export const fail = (code: string, message: string): ServiceFailure => failure(code, message);

export interface StartInput {
  readonly name?: string;
  readonly source?: string;
  readonly manifest?: unknown;
  readonly args?: unknown;
  readonly wait?: boolean;
}

export interface StartContext {
  readonly agent: HostAgent;
  /** The calling step's signal; bound to the run only when waiting. */
  readonly signal: AbortSignal;
  /** A one-shot grant (e.g. a `/workflow create` handoff) that counts as explicit approval. */
  readonly preApproved?: boolean;
  readonly lineage?: { readonly sourceRunId?: string; readonly revisionOf?: string };
  /** Re-execute this recorded run (journal replay) instead of starting fresh. */
  readonly resumeOf?: string;
}

/** A start context for runs made from runs (rerun, resume), which may not wait. */
export type LaunchContext = StartContext & { wait?: boolean };

/** What the plugin keeps per project directory: one engine, its router and its run store. */
export interface Project {
  readonly cwd: string;
  readonly engine: Engine;
  readonly router: RunRouter;
  readonly store: RunStore;
}

/** What the plugin reports of a finished run (the cost stays in the run store). */
export type RunOutcome = Pick<RunDone, 'status' | 'result' | 'error'>;

export interface ActiveRun {
  readonly handle: RunHandle;
  readonly done: Promise<RunOutcome>;
  readonly summary: RunSummary;
}

export interface ServiceState {
  readonly ctx: PluginHost;
  readonly config: PluginConfig;
  readonly services: () => OptionalServices;
  readonly shipped: ShippedWorkflows;
  readonly projects: Map<string, Promise<Project>>;
  /** Catalogs per project directory, apart from projects: listing works with no run store. */
  readonly catalogs: Map<string, Promise<Catalog | undefined>>;
  readonly resolvers: Map<string, WorkflowResolver>;
  readonly runs: Map<string, RunSummary>;
  readonly active: Map<string, ActiveRun>;
  readonly writers: WeakMap<HostSession, NativeRunEvents>;
  closed: boolean;
}

export function createServiceState(
  ctx: PluginHost,
  config: PluginConfig,
  services: () => OptionalServices,
  shipped: ShippedWorkflows,
): ServiceState {
  return {
    ctx,
    config,
    services,
    shipped,
    projects: new Map(),
    catalogs: new Map(),
    resolvers: new Map(),
    runs: new Map(),
    active: new Map(),
    writers: new WeakMap(),
    closed: false,
  };
}

export function cwdOf(agent: HostAgent): string {
  return agent.session.header.cwd ?? process.cwd();
}

/** Our own tool names: children never see them. */
export function ownToolNames(config: PluginConfig): readonly string[] {
  return [config.listToolName, config.runToolName, config.manageToolName];
}
