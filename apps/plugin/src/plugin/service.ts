// The workflow service behind the tools and the /workflow command: resolves workflows, gates
// them, runs them on one engine per project, records them, writes the native session events and
// hands background runs to DSH jobs. Unload stops and awaits every active run.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parseManifest, type WorkflowCapsule, type WorkflowManifest } from '@wf/bridge';
import { buildReviewPackets, writeReviewPackets } from '@wf/patterns';
import {
  type Catalog,
  type CatalogEntry,
  openCatalog,
  openRunStore,
  type RunStore,
} from '@wf/catalog-fs';
import {
  confirmWithUser,
  createDshAgentProvider,
  createDshApprover,
  createNativeRunEvents,
  type HostAgent,
  type HostSession,
  type NativeRunEvents,
  nativeStopReason,
  startJob,
} from '@wf/dsh-adapter';
import {
  createEngine,
  createMemoryRecorder,
  type Engine,
  type RunRecorder,
  type RunDone,
  type RunEvent,
  type RunHandle,
  type Trust,
  type WorkflowInput,
} from '@wf/engine';
import { shippedSource } from './builtins.js';
import type { PluginConfig } from './config.js';
import type { OptionalServices, PluginHost } from './host-context.js';
import { createRunRouter, type RunRouter } from './routing.js';

export const PLUGIN_NAME = 'wf-workflows';

export type RunSource = 'built-in' | 'pattern' | 'project' | 'personal' | 'inline' | 'run-snapshot';

export interface ResolvedWorkflow {
  readonly name: string;
  readonly source: RunSource;
  readonly trust: Trust;
  readonly workflow: WorkflowInput;
  /** Present for source-based workflows: what save/rerun re-use. */
  readonly capsule?: { readonly manifest: WorkflowManifest; readonly source: string };
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
  readonly capsule?: { readonly manifest: WorkflowManifest; readonly source: string };
  readonly events: RunEvent[];
  /** Read back from the run store (an earlier process), not launched here. */
  readonly stored?: boolean;
}

export interface RunReply {
  readonly runId: string;
  readonly status: RunSummary['status'];
  readonly result?: unknown;
  readonly error?: { code: string; message: string };
  readonly jobId?: string;
  readonly note?: string;
}

export type ServiceFailure = {
  readonly ok: false;
  readonly code: string;
  readonly message: string;
};
export type ServiceResult<T> = ({ readonly ok: true } & T) | ServiceFailure;

const fail = (code: string, message: string): ServiceFailure => ({ ok: false, code, message });

interface Project {
  readonly cwd: string;
  readonly engine: Engine;
  readonly router: RunRouter;
  readonly recorder: RunRecorder;
  /** The on-disk run store, when it could be opened (else runs are kept in memory only). */
  readonly store: RunStore | undefined;
  catalog(): Promise<Catalog | undefined>;
}

interface ActiveRun {
  readonly handle: RunHandle;
  readonly done: Promise<RunDone>;
  readonly summary: RunSummary;
}

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

export class WorkflowService {
  private readonly projects = new Map<string, Promise<Project>>();
  private readonly runs = new Map<string, RunSummary>();
  private readonly active = new Map<string, ActiveRun>();
  private readonly writers = new WeakMap<HostSession, NativeRunEvents>();
  private closed = false;

  constructor(
    private readonly ctx: PluginHost,
    readonly config: PluginConfig,
    private readonly services: () => OptionalServices,
    private readonly builtins: () => readonly WorkflowCapsule[],
  ) {}

  /** Our own tool names: children never see them. */
  get ownToolNames(): readonly string[] {
    return [this.config.listToolName, this.config.runToolName, this.config.manageToolName];
  }

  private cwdOf(agent: HostAgent): string {
    return agent.session.header.cwd ?? process.cwd();
  }

  private personalDir(): string {
    if (this.config.personalDirectory) return this.config.personalDirectory;
    const home = process.env.DSH_HOME ?? join(process.env.HOME ?? homedir(), '.dsh');
    return join(home, 'workflows');
  }

  private project(cwd: string): Promise<Project> {
    let p = this.projects.get(cwd);
    if (!p) {
      p = this.openProject(cwd);
      this.projects.set(cwd, p);
    }
    return p;
  }

  private async openProject(cwd: string): Promise<Project> {
    const transport = this.config.provider;
    const subagents = this.ctx.subagents;
    const hostCaps = () => {
      try {
        return subagents.getProvider(transport)?.capabilities;
      } catch {
        return undefined;
      }
    };
    const router = createRunRouter(`dsh:${transport}`, () => {
      const c = hostCaps();
      return {
        toolFilter: c?.toolFilter === true,
        outputSchema: c?.outputSchema === true,
        steer: true,
        worktree: false,
        agentOptions: c?.agentOptions !== false,
      };
    });
    const store = await openRunStore({
      project: cwd,
      root: this.config.runDirectory,
      maxResultChars: this.config.maxResultChars,
    }).catch(() => undefined);
    const recorder: RunRecorder = store ?? createMemoryRecorder();
    const engine = createEngine({
      agents: router.agents,
      approver: router.approver,
      recorder,
      workspace: cwd,
      // The run store and both catalogs stay out of wf.readFile's reach (WF_ENGINE_READ_PROTECTED).
      readFile: {
        deny: [
          resolve(cwd, this.config.runDirectory),
          resolve(cwd, this.config.projectDirectory),
          this.personalDir(),
        ],
      },
      limits: {
        maxAgents: this.config.maxAgents,
        maxConcurrency: this.config.maxConcurrency,
        deploymentConcurrency: this.config.deploymentConcurrency,
        wallMs: this.config.wallMs > 0 ? this.config.wallMs : null,
      },
      resolveWorkflow: async (name) => {
        const found = await this.resolveNamed(cwd, name, { nested: true });
        if (!found.ok || !found.resolved.capsule || found.resolved.trust === 'trusted-local')
          return undefined;
        return { ...found.resolved.capsule, trust: found.resolved.trust };
      },
    });
    let catalog: Promise<Catalog | undefined> | undefined;
    const projectDir = isAbsolute(this.config.projectDirectory)
      ? this.config.projectDirectory
      : resolve(cwd, this.config.projectDirectory);
    return {
      cwd,
      engine,
      router,
      recorder,
      store,
      catalog: () => {
        catalog ??= openCatalog({ project: projectDir, personal: this.personalDir() }).catch(
          () => undefined,
        );
        return catalog;
      },
    };
  }

  private nativeWriter(agent: HostAgent): NativeRunEvents {
    let w = this.writers.get(agent.session);
    if (!w) {
      w = createNativeRunEvents(agent.session);
      this.writers.set(agent.session, w);
    }
    return w;
  }

  /** Built-ins and patterns, then the catalog's project/personal entries. */
  async list(agent: HostAgent): Promise<{
    entries: {
      name: string;
      source: RunSource;
      trust: Trust;
      description?: string;
      valid: boolean;
      error?: string;
    }[];
    truncated: boolean;
  }> {
    const entries: {
      name: string;
      source: RunSource;
      trust: Trust;
      description?: string;
      valid: boolean;
      error?: string;
    }[] = this.builtins().map((c) => ({
      name: c.manifest.name,
      source: shippedSource(c),
      trust: 'trusted-package',
      description: c.manifest.description,
      valid: true,
    }));
    const catalog = await (await this.project(this.cwdOf(agent))).catalog();
    let truncated = false;
    if (catalog) {
      const listing = await catalog.list();
      truncated = listing.truncated;
      const taken = new Set(entries.map((e) => e.name));
      for (const e of listing.entries) {
        if (taken.has(e.name)) continue; // nothing shadows built-ins or patterns
        entries.push({
          name: e.name,
          source: e.scope,
          trust: e.execution,
          valid: e.valid,
          ...(e.error ? { error: e.error } : {}),
        });
      }
    }
    return { entries, truncated };
  }

  private async resolveNamed(
    cwd: string,
    name: string,
    options: { nested?: boolean } = {},
  ): Promise<ServiceResult<{ resolved: ResolvedWorkflow; entry?: CatalogEntry }>> {
    const builtin = this.builtins().find((c) => c.manifest.name === name);
    if (builtin)
      return {
        ok: true,
        resolved: {
          name,
          source: shippedSource(builtin),
          trust: 'trusted-package',
          workflow: { manifest: builtin.manifest, source: builtin.source, name },
          capsule: { manifest: builtin.manifest, source: builtin.source },
        },
      };
    const catalog = await (await this.project(cwd)).catalog();
    if (!catalog)
      return fail(
        'WF_PLUGIN_NOT_FOUND',
        `no workflow named "${name}" (the catalog could not be opened)`,
      );
    const loaded = await catalog.load(name);
    if (!loaded.ok) return fail(loaded.error.code, loaded.error.message);
    const { entry, capsule } = loaded;
    if (!entry.valid)
      return fail(
        'WF_PLUGIN_INVALID_WORKFLOW',
        `workflow "${name}" is invalid: ${entry.error ?? 'unknown'}`,
      );
    if (capsule)
      return {
        ok: true,
        entry,
        resolved: {
          name,
          source: entry.scope,
          trust: 'capability-generated',
          workflow: { manifest: capsule.manifest, source: capsule.source, name },
          capsule: { manifest: capsule.manifest, source: capsule.source },
        },
      };
    if (options.nested)
      return fail('WF_PLUGIN_TRUSTED_LOCAL_NESTED', 'trusted-local workflows are never run nested');
    return {
      ok: true,
      entry,
      resolved: {
        name,
        source: entry.scope,
        trust: 'trusted-local',
        // imported only after confirmation (invariant 10); see start()
        workflow: { manifest: {}, run: () => undefined, name },
      },
    };
  }

  /** A manifest for inline source that came without one. */
  private defaultManifest(): WorkflowManifest {
    return {
      name: 'inline-workflow',
      description: 'Inline workflow authored in the conversation',
      phases: ['run'],
      readOnly: false,
      maxAgents: this.config.maxAgents,
      maxConcurrency: Math.min(this.config.maxConcurrency, this.config.maxAgents),
      patterns: ['fan-out-and-synthesize'],
    };
  }

  /** Resolves a tool/command input to a runnable workflow, validating an inline manifest. */
  async resolveInput(
    agent: HostAgent,
    input: StartInput,
  ): Promise<ServiceResult<{ resolved: ResolvedWorkflow }>> {
    const hasName = typeof input.name === 'string' && input.name !== '';
    const hasSource = typeof input.source === 'string' && input.source !== '';
    if (hasName === hasSource)
      return fail(
        'WF_PLUGIN_INVALID_INPUT',
        'give exactly one of `name` (a catalog workflow) or `source` (inline JS)',
      );
    if (hasName) return this.resolveNamed(this.cwdOf(agent), input.name as string);
    if (
      input.manifest !== undefined &&
      (typeof input.manifest !== 'object' || input.manifest === null)
    )
      return fail('WF_PLUGIN_INVALID_INPUT', '`manifest` must be a JSON object');
    const parsed = parseManifest(input.manifest ?? this.defaultManifest(), {
      limits: { maxAgents: this.config.maxAgents, maxConcurrency: this.config.maxConcurrency },
    });
    if (!parsed.ok)
      return fail(
        'WF_PLUGIN_INVALID_INPUT',
        `manifest: ${parsed.issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
      );
    const manifest = parsed.manifest;
    const source = input.source as string;
    return {
      ok: true,
      resolved: {
        name: manifest.name,
        source: 'inline',
        trust: 'capability-generated',
        workflow: { manifest, source, name: manifest.name },
        capsule: { manifest, source },
      },
    };
  }

  /** Starts a run. With `wait`, resolves when it ends; otherwise hands it to DSH jobs. */
  async start(
    input: StartInput,
    context: StartContext,
    pre?: ResolvedWorkflow,
  ): Promise<ServiceResult<{ reply: RunReply }>> {
    if (this.closed)
      return fail('WF_PLUGIN_UNLOADING', 'the workflow plugin is unloading; no new runs');
    const { agent } = context;
    let resolved = pre;
    if (!resolved) {
      const r = await this.resolveInput(agent, input);
      if (!r.ok) return r;
      resolved = r.resolved;
    }
    const cwd = this.cwdOf(agent);
    const project = await this.project(cwd);
    const services = this.services();

    if (resolved.trust === 'trusted-local') {
      // Invariant 10: confirm first, then import; once per execution.
      const confirmed = await confirmWithUser(services.userQuestions, {
        id: 'workflow-trusted-local',
        header: 'Workflow',
        question: `Run trusted-local workflow "${resolved.name}"?`,
        detail: 'It executes local JavaScript/TypeScript with your full authority (no sandbox).',
        yesLabel: 'Run',
        noLabel: 'Cancel',
        agent,
        signal: context.signal,
      });
      if (!confirmed.confirmed)
        return fail(
          'WF_PLUGIN_CONFIRMATION_REQUIRED',
          confirmed.reason === 'declined'
            ? `trusted-local workflow "${resolved.name}" was not confirmed; nothing ran`
            : `trusted-local workflow "${resolved.name}" needs your confirmation, but nothing here can answer questions (${confirmed.message}); nothing ran`,
        );
      const catalog = await project.catalog();
      const listing = catalog
        ? (await catalog.list()).entries.find((e) => e.name === resolved?.name)
        : undefined;
      if (!catalog || !listing)
        return fail('WF_PLUGIN_NOT_FOUND', `workflow "${resolved.name}" disappeared`);
      const imported = await catalog.importTrustedLocal(listing, { confirmed: true });
      if (!imported.ok) return fail(imported.error.code, imported.error.message);
      const m = imported.module;
      const manifest = {
        ...this.defaultManifest(),
        name: resolved.name,
        ...(typeof m.manifest === 'object' && m.manifest !== null ? (m.manifest as object) : {}),
      };
      resolved = {
        ...resolved,
        workflow: {
          manifest,
          run: m.run as (wf: unknown, args: unknown) => unknown,
          name: resolved.name,
        },
      };
    }

    const runId = `run-${randomUUID()}`;
    const native = this.nativeWriter(agent);
    const agents = createDshAgentProvider({
      subagents: this.ctx.subagents,
      tools: this.ctx.tools,
      parent: agent,
      transport: this.config.provider,
      readOnlyTools: this.config.readOnlyTools,
      ownToolNames: this.ownToolNames,
      tiers: this.config.tiers,
      nativeEvents: native,
      cwd,
      pluginName: PLUGIN_NAME,
    });
    const approver = createDshApprover({
      approval: services.approval,
      sandboxPolicy: services.sandboxPolicy,
      agent,
      mode:
        context.preApproved && this.config.approvalMode !== 'always'
          ? 'never'
          : this.config.approvalMode,
      toolName: this.config.runToolName,
    });
    project.router.bind(runId, { agents, approver });

    const summary: RunSummary = {
      runId,
      workflow: resolved.name,
      source: resolved.source,
      trust: resolved.trust,
      status: 'running',
      startedAt: Date.now(),
      cwd,
      args: input.args ?? {},
      ...(resolved.capsule ? { capsule: resolved.capsule } : {}),
      events: [],
    };
    this.runs.set(runId, summary);
    native.runStart(runId, resolved.name);

    // The run's own controller: a background run must outlive the launching step (its signal is
    // aborted when the step or Code-Mode program settles), so only a waiting call binds it.
    let handle: RunHandle;
    try {
      handle = context.resumeOf
        ? await project.engine.resume(context.resumeOf, { runId })
        : await project.engine.start({
            workflow: resolved.workflow,
            args: input.args ?? {},
            trust: resolved.trust,
            runId,
            ...(context.lineage?.sourceRunId ? { sourceRunId: context.lineage.sourceRunId } : {}),
            ...(context.lineage?.revisionOf ? { revisionOf: context.lineage.revisionOf } : {}),
          });
    } catch (error) {
      project.router.unbind(runId);
      native.runEnd(runId, 'error');
      const e = error as { code?: unknown; message?: unknown };
      summary.status = 'failed';
      summary.endedAt = Date.now();
      summary.error = {
        code: typeof e.code === 'string' ? e.code : 'WF_PLUGIN_START_FAILED',
        message: typeof e.message === 'string' ? e.message : String(error),
      };
      return { ok: true, reply: { runId, status: 'failed', error: summary.error } };
    }
    void (async () => {
      try {
        for await (const event of handle.events) {
          summary.events.push(event);
          if (event.type === 'workflow-paused') summary.status = 'paused';
          if (event.type === 'workflow-resumed') summary.status = 'running';
        }
      } catch {
        // the event stream is advisory; the run's outcome comes from `done`
      }
    })();
    const done = handle.done.then(
      (d) => d,
      (error): RunDone => ({
        status: 'failed',
        error: {
          code: 'WF_PLUGIN_HOST_ERROR',
          message: error instanceof Error ? error.message : String(error),
        },
        cost: {
          wallClockDurationMs: 0,
          agentsStarted: 0,
          agentsCompleted: 0,
          cacheHits: 0,
          tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          peakConcurrency: 0,
        },
      }),
    );
    const settled = done.then((d) => {
      summary.status = d.status;
      summary.endedAt = Date.now();
      if (d.result !== undefined) summary.result = d.result;
      if (d.error) summary.error = { ...d.error };
      native.runEnd(runId, nativeStopReason(d.status));
      project.router.unbind(runId);
      this.active.delete(runId);
      return d;
    });
    this.active.set(runId, { handle, done: settled, summary });

    if (input.wait !== false) {
      const onAbort = () => handle.stop('the calling tool call was cancelled');
      if (context.signal.aborted) onAbort();
      else context.signal.addEventListener('abort', onAbort, { once: true });
      const d = await settled;
      context.signal.removeEventListener('abort', onAbort);
      return { ok: true, reply: this.reply(summary, d) };
    }

    const job = startJob(services.jobs, {
      kind: 'workflow',
      label: `workflow ${resolved.name} (${runId})`,
      owner: agent,
      cancel: (reason) => handle.stop(reason ?? 'killed through DSH jobs'),
      done: settled.then((d) => ({
        status:
          d.status === 'completed' ? 'completed' : d.status === 'stopped' ? 'killed' : 'failed',
        detail: d.error ? `${d.error.code}: ${d.error.message}` : d.status,
        output: this.renderResult(d.result),
      })),
      readOutput: () => (summary.result === undefined ? '' : this.renderResult(summary.result)),
    });
    if (job.ok) summary.jobId = job.jobId;
    return {
      ok: true,
      reply: {
        runId,
        status: summary.status,
        ...(job.ok
          ? { jobId: job.jobId }
          : {
              note: `running in the background; DSH jobs ${job.reason}: manage it with ${this.config.manageToolName}`,
            }),
      },
    };
  }

  private reply(summary: RunSummary, d: RunDone): RunReply {
    return {
      runId: summary.runId,
      status: d.status,
      ...(d.result !== undefined ? { result: d.result } : {}),
      ...(d.error ? { error: { ...d.error } } : {}),
    };
  }

  renderResult(value: unknown): string {
    let text: string;
    try {
      text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'null');
    } catch {
      text = String(value);
    }
    const max = this.config.maxResultChars;
    return text.length > max ? `${text.slice(0, max)}\n… (truncated at ${max} characters)` : text;
  }

  // ---- management -------------------------------------------------------------------------

  /** Runs of this agent's project: this process's, then the run store's (newest first). */
  async listRuns(agent: HostAgent): Promise<RunSummary[]> {
    const cwd = this.cwdOf(agent);
    const live = [...this.runs.values()].filter((r) => r.cwd === cwd);
    const seen = new Set(live.map((r) => r.runId));
    const project = await this.project(cwd);
    const stored = (await project.store?.list().catch(() => [])) ?? [];
    for (const s of stored) {
      if (seen.has(s.runId) || !s.snapshot) continue;
      const snap = s.snapshot;
      live.push({
        runId: s.runId,
        workflow: snap.workflow,
        source: 'run-snapshot',
        trust: snap.execution as Trust,
        status: snap.status as RunSummary['status'],
        startedAt: snap.startedAt,
        ...(snap.endedAt !== undefined ? { endedAt: snap.endedAt } : {}),
        ...(snap.resultSummary !== undefined ? { result: snap.resultSummary } : {}),
        ...(snap.error ? { error: { ...snap.error } } : {}),
        cwd,
        args: undefined,
        events: [],
        stored: true,
      });
    }
    return live.sort((a, b) => b.startedAt - a.startedAt);
  }

  async findRun(
    agent: HostAgent,
    target: string | undefined,
    prefer: 'active' | 'latest' = 'latest',
  ): Promise<ServiceResult<{ run: RunSummary }>> {
    const runs = await this.listRuns(agent);
    if (!target) {
      const pick = prefer === 'active' ? runs.find((r) => this.active.has(r.runId)) : runs[0];
      return pick
        ? { ok: true, run: await this.hydrate(agent, pick) }
        : fail('WF_PLUGIN_NOT_FOUND', prefer === 'active' ? 'no active run' : 'no runs yet');
    }
    const exact = runs.find((r) => r.runId === target);
    if (exact) return { ok: true, run: await this.hydrate(agent, exact) };
    const byName = runs.filter((r) => r.workflow === target);
    if (byName.length === 1 && byName[0])
      return { ok: true, run: await this.hydrate(agent, byName[0]) };
    if (byName.length > 1)
      return fail(
        'WF_PLUGIN_AMBIGUOUS',
        `"${target}" names ${byName.length} runs; use a run id (${byName.map((r) => r.runId).join(', ')})`,
      );
    return fail('WF_PLUGIN_NOT_FOUND', `no run "${target}"`);
  }

  /** Fills a stored run's args, source and events from the run store. */
  private async hydrate(agent: HostAgent, run: RunSummary): Promise<RunSummary> {
    if (!run.stored) return run;
    const store = (await this.project(this.cwdOf(agent))).store;
    const loaded = await store?.load(run.runId).catch(() => undefined);
    const events = ((await store?.events(run.runId, { limit: 500 }).catch(() => [])) ??
      []) as RunEvent[];
    const start = loaded?.start;
    return {
      ...run,
      args: start?.args,
      events: [...events],
      ...(start?.source !== undefined && start.manifest !== undefined
        ? { capsule: { manifest: start.manifest as WorkflowManifest, source: start.source } }
        : {}),
    };
  }

  async control(
    agent: HostAgent,
    action: 'pause' | 'resume' | 'stop',
    target?: string,
  ): Promise<ServiceResult<{ run: RunSummary }>> {
    const found = await this.findRun(agent, target, 'active');
    if (!found.ok) return found;
    const live = this.active.get(found.run.runId);
    if (!live)
      return fail(
        'WF_PLUGIN_NOT_ACTIVE',
        `run ${found.run.runId} is not active (${found.run.status})`,
      );
    if (action === 'pause') live.handle.pause();
    else if (action === 'resume') live.handle.resume();
    else live.handle.stop('stopped by the user');
    return { ok: true, run: found.run };
  }

  async waitFor(runId: string): Promise<RunDone | undefined> {
    return this.active.get(runId)?.done;
  }

  async rerun(
    agent: HostAgent,
    target: string,
    args: unknown,
    context: StartContext & { wait?: boolean },
  ): Promise<ServiceResult<{ reply: RunReply }>> {
    const found = await this.findRun(agent, target);
    if (!found.ok) {
      // a saved workflow name reruns that workflow
      return this.start({ name: target, args, wait: context.wait ?? true }, context);
    }
    const run = found.run;
    if (!run.capsule)
      return this.start(
        { name: run.workflow, args: args ?? run.args, wait: context.wait ?? true },
        context,
      );
    return this.start(
      {
        source: run.capsule.source,
        manifest: run.capsule.manifest,
        args: args ?? run.args,
        wait: context.wait ?? true,
      },
      { ...context, lineage: { sourceRunId: run.runId } },
      {
        name: run.workflow,
        source: 'run-snapshot',
        trust: run.trust === 'trusted-package' ? 'trusted-package' : 'capability-generated',
        workflow: {
          manifest: run.capsule.manifest,
          source: run.capsule.source,
          name: run.workflow,
        },
        capsule: run.capsule,
      },
    );
  }

  /**
   * `/workflow review`: splits the diff into immutable review packets under
   * `<cwd>/.dsh/review-packets/<rangeId>/` and runs the `scoped-review` built-in over them.
   */
  async startReview(
    agent: HostAgent,
    diff: string,
    range: string,
    options: { wait: boolean; signal: AbortSignal },
  ): Promise<ServiceResult<{ reply: RunReply }>> {
    if (!this.builtins().some((c) => c.manifest.name === 'scoped-review'))
      return fail(
        'WF_PLUGIN_NOT_FOUND',
        'the scoped-review built-in is not available in this build',
      );
    const built = buildReviewPackets(diff);
    if (!built.ok) return fail(built.error.code, `review: ${built.error.message}`);
    const cwd = this.cwdOf(agent);
    const root = join(cwd, '.dsh', 'review-packets');
    await mkdir(root, { recursive: true });
    const written = await writeReviewPackets(root, {
      rangeId: built.rangeId,
      packets: built.packets,
      files: built.files,
    });
    const base = `${resolve(cwd)}/`;
    const rel = (p: string) => (p.startsWith(base) ? p.slice(base.length) : p);
    return this.start(
      {
        name: 'scoped-review',
        // packets go by workspace path (read with wf.readFile), keeping the args small
        args: {
          packetFiles: written.packets.map((p) => rel(p.path)),
          request: `Review the change ${range}.`,
        },
        wait: options.wait,
      },
      { agent, signal: options.signal, preApproved: true },
    );
  }

  /** Re-executes a recorded run: journaled calls replay, the rest continues live. */
  async resumeRun(
    agent: HostAgent,
    target: string,
    context: StartContext & { wait?: boolean },
  ): Promise<ServiceResult<{ reply: RunReply }>> {
    const found = await this.findRun(agent, target);
    if (!found.ok) return found;
    const run = found.run;
    if (this.active.has(run.runId))
      return fail('WF_PLUGIN_RUN_ACTIVE', `run ${run.runId} is still active`);
    if (run.trust === 'trusted-local' || !run.capsule)
      return fail('WF_PLUGIN_NOT_RESUMABLE', `run ${run.runId} has no recorded source to resume`);
    return this.start(
      { args: run.args, wait: context.wait ?? true },
      { ...context, resumeOf: run.runId, lineage: { sourceRunId: run.runId } },
      {
        name: run.workflow,
        source: 'run-snapshot',
        trust: run.trust,
        workflow: {
          manifest: run.capsule.manifest,
          source: run.capsule.source,
          name: run.workflow,
        },
        capsule: run.capsule,
      },
    );
  }

  async saveRun(
    agent: HostAgent,
    target: string,
    name: string,
    scope: 'project' | 'personal' = 'project',
  ): Promise<ServiceResult<{ path: string }>> {
    const found = await this.findRun(agent, target);
    if (!found.ok) return found;
    if (!found.run.capsule)
      return fail('WF_PLUGIN_NOT_SAVEABLE', `run ${found.run.runId} has no source to save`);
    const catalog = await (await this.project(this.cwdOf(agent))).catalog();
    if (!catalog) return fail('WF_PLUGIN_CATALOG_UNAVAILABLE', 'the catalog could not be opened');
    const capsule = {
      format: 'dsh.workflow',
      version: 1,
      workflowApiVersion: 1,
      minDshVersion: '0.1.0-rc.8',
      manifest: { ...found.run.capsule.manifest, name },
      source: found.run.capsule.source,
      provenance: {
        fromRunId: found.run.runId,
        createdAt: new Date().toISOString(),
        dshVersion: '0.1.0-rc.8',
        pluginVersion: '0.0.0',
      },
    };
    const saved = await catalog.save(name, capsule, { scope });
    if (!saved.ok) return fail(saved.error.code, saved.error.message);
    return { ok: true, path: saved.entry.path };
  }

  async catalogOp(agent: HostAgent): Promise<ServiceResult<{ catalog: Catalog }>> {
    const catalog = await (await this.project(this.cwdOf(agent))).catalog();
    return catalog
      ? { ok: true, catalog }
      : fail('WF_PLUGIN_CATALOG_UNAVAILABLE', 'the catalog could not be opened');
  }

  /** Forgets old terminal runs, here and in the run store (which never touches active runs). */
  async prune(agent: HostAgent, keep: number): Promise<readonly string[]> {
    const project = await this.project(this.cwdOf(agent));
    const terminal = (await this.listRuns(agent)).filter((r) => !this.active.has(r.runId));
    const pruned = new Set<string>(
      project.store
        ? (await project.store.prune({ keep })).pruned
        : terminal.slice(keep).map((r) => r.runId),
    );
    for (const id of pruned) this.runs.delete(id);
    return [...pruned];
  }

  async deleteRun(agent: HostAgent, target: string): Promise<ServiceResult<{ runId: string }>> {
    const found = await this.findRun(agent, target);
    if (!found.ok) return found;
    const runId = found.run.runId;
    // invariant 9: an active run can never be deleted, even with force
    if (this.active.has(runId))
      return fail('WF_PLUGIN_RUN_ACTIVE', `run ${runId} is active; stop it first`);
    const store = (await this.project(this.cwdOf(agent))).store;
    if (store) {
      const out = await store.delete(runId);
      if (!out.ok) return fail(out.error.code, out.error.message);
    }
    this.runs.delete(runId);
    return { ok: true, runId };
  }

  activeRunIds(): string[] {
    return [...this.active.keys()];
  }

  /** Unload: refuse new runs, stop every active one, and await them all (and close engines). */
  async dispose(): Promise<void> {
    this.closed = true;
    const live = [...this.active.values()];
    for (const r of live) r.handle.stop('the workflow plugin is unloading');
    await Promise.allSettled(live.map((r) => r.done));
    const projects = await Promise.allSettled([...this.projects.values()]);
    for (const p of projects) {
      if (p.status !== 'fulfilled') continue;
      await p.value.engine.close().catch(() => {});
      await p.value.store?.close().catch(() => {});
    }
  }
}
