// The workflow service behind the tools and the /workflow command: one explicit state object
// (state.ts) and the modules that act on it: project (engine, run store, catalog, resolver per
// working directory), workflows (listing, resolution), launch, trusted-local, runs-index,
// lineage and review-run. This class is the façade the tools, command and manager call.
import type { ShippedWorkflows } from '@wf/catalog-fs';
import type { HostAgent } from '@wf/dsh-adapter';
import type { PluginConfig } from './config.js';
import type { OptionalServices, PluginHost } from './host-context.js';
import { EXIT_STOP_REASON, pendingAmong, registerInterruptedNotice } from './interrupted.js';
import { renderResult, replyOf, startRun } from './launch.js';
import { rerun, resumeRun, saveRun } from './lineage.js';
import { writeRunReport } from './report.js';
import { startReview } from './review-run.js';
import {
  controlRun,
  deleteRun,
  findRun,
  listRuns,
  pruneRuns,
  recentRuns,
  waitForRun,
} from './runs-index.js';
import {
  createServiceState,
  type LaunchContext,
  ownToolNames,
  type ServiceState,
  type StartContext,
  type StartInput,
} from './state.js';
import { catalogFor, listWorkflows } from './workflows.js';

// Return types are those of the module functions each method delegates to.
export class WorkflowService {
  private readonly state: ServiceState;

  constructor(
    ctx: PluginHost,
    readonly config: PluginConfig,
    services: () => OptionalServices,
    shipped: ShippedWorkflows,
  ) {
    this.state = createServiceState(ctx, config, services, shipped);
  }

  /** Our own tool names: children never see them. */
  get ownToolNames(): readonly string[] {
    return ownToolNames(this.config);
  }

  list(agent: HostAgent) {
    return listWorkflows(this.state, agent);
  }

  start(input: StartInput, context: StartContext) {
    return startRun(this.state, input, context);
  }

  renderResult(value: unknown): string {
    return renderResult(this.state, value);
  }

  /** A run as a reply (status, duration, agents, result, error), to show it like a finished call. */
  replyFor(run: Parameters<typeof replyOf>[0]) {
    return replyOf(run, run);
  }

  listRuns(agent: HostAgent) {
    return listRuns(this.state, agent);
  }

  /** The newest runs (this process's and the run store's newest, via its index) and a count. */
  recentRuns(agent: HostAgent) {
    return recentRuns(this.state, agent);
  }

  /** Among `runs`, those DSH cut short (it exited) that no later run continues. */
  interrupted(runs: Parameters<typeof pendingAmong>[0]) {
    return pendingAmong(runs, this.state);
  }

  /** Writes the run's HTML report into the project; resolves to its path. */
  writeReport(agent: HostAgent, target: string | undefined) {
    return writeRunReport(this.state, agent, target);
  }

  /** Tells the model, per request, about runs DSH cut short (see interrupted.ts). */
  noticeInterrupted(): () => void {
    return registerInterruptedNotice(this.state);
  }

  isActive(runId: string): boolean {
    return this.state.active.has(runId);
  }

  findRun(agent: HostAgent, target: string | undefined, prefer?: 'active' | 'latest') {
    return findRun(this.state, agent, target, prefer);
  }

  control(agent: HostAgent, action: 'pause' | 'resume' | 'stop', target?: string) {
    return controlRun(this.state, agent, action, target);
  }

  waitFor(runId: string) {
    return waitForRun(this.state, runId);
  }

  rerun(agent: HostAgent, target: string, args: unknown, context: LaunchContext) {
    return rerun(this.state, agent, target, args, context);
  }

  startReview(
    agent: HostAgent,
    diff: string,
    range: string,
    options: { wait: boolean; signal: AbortSignal },
  ) {
    return startReview(this.state, agent, diff, range, options);
  }

  resumeRun(agent: HostAgent, target: string, context: LaunchContext) {
    return resumeRun(this.state, agent, target, context);
  }

  saveRun(agent: HostAgent, target: string, name: string, scope?: 'project' | 'personal') {
    return saveRun(this.state, agent, target, name, scope);
  }

  catalogOp(agent: HostAgent) {
    return catalogFor(this.state, agent);
  }

  prune(agent: HostAgent, keep: number) {
    return pruneRuns(this.state, agent, keep);
  }

  deleteRun(agent: HostAgent, target: string) {
    return deleteRun(this.state, agent, target);
  }

  activeRunIds(): string[] {
    return [...this.state.active.keys()];
  }

  /** Unload: refuse new runs, stop every active one, and await them all (and close engines). */
  async dispose(): Promise<void> {
    const state = this.state;
    state.closed = true;
    const live = [...state.active.values()];
    // recorded as cut short by DSH, so the next session offers to resume them
    for (const r of live) r.handle.stop(EXIT_STOP_REASON);
    await Promise.allSettled(live.map((r) => r.done));
    const projects = await Promise.allSettled([...state.projects.values()]);
    for (const p of projects) {
      if (p.status !== 'fulfilled') continue;
      await p.value.engine.close().catch(() => {});
      await p.value.store.close().catch(() => {});
    }
  }
}
