// Starting a run: resolve, gate (approval; trusted-local confirmation), bind the run's DSH ports,
// start it on the project's engine, mirror its events into the summary and the native session
// events, and either wait for it or hand it to DSH jobs.
import { randomUUID } from 'node:crypto';
import type { WorkflowEntry } from '@wf/catalog-fs';
import {
  createDshAgentProvider,
  createDshApprover,
  detectHostFacts,
  nativeStopReason,
  startJob,
} from '@wf/dsh-adapter';
import type { ApprovalDecision, Approver, RunHandle, WorkflowInput } from '@wf/engine';
import { agentCounts, foldRunEvents } from '@wf/report';
import type { PluginConfig } from './config.js';
import { PluginError } from './errors.js';
import { nativeWriter, projectOf } from './project.js';
import {
  cwdOf,
  fail,
  ownToolNames,
  PLUGIN_NAME,
  type Project,
  type RunAgentCounts,
  type RunOutcome,
  type RunReply,
  type RunSummary,
  type ServiceResult,
  type ServiceState,
  type StartContext,
  type StartInput,
} from './state.js';
import { capped, runText, valueText } from './run-text.js';
import { confirmAndImport } from './trusted-local.js';
import { resolveInput } from './workflows.js';

/** Starts a run. With `wait`, resolves when it ends; otherwise hands it to DSH jobs. */
export async function startRun(
  state: ServiceState,
  input: StartInput,
  context: StartContext,
  pre?: WorkflowEntry,
): Promise<ServiceResult<{ reply: RunReply }>> {
  if (state.closed)
    return fail('WF_PLUGIN_UNLOADING', 'the workflow plugin is unloading; no new runs');
  const { agent } = context;
  let entry = pre;
  if (!entry) {
    const r = await resolveInput(state, agent, input);
    if (!r.ok) return r;
    entry = r.entry;
  }
  const cwd = cwdOf(agent);
  let project: Project;
  try {
    project = await projectOf(state, cwd);
  } catch (error) {
    if (PluginError.is(error)) return fail(error.code, error.message);
    throw error;
  }
  const services = state.services();

  let workflow: WorkflowInput;
  if (entry.execution === 'trusted-local') {
    const imported = await confirmAndImport(state, entry, agent, context.signal);
    if (!imported.ok) return imported;
    workflow = imported.workflow;
  } else {
    workflow = { manifest: entry.capsule.manifest, source: entry.capsule.source, name: entry.name };
  }

  const { config } = state;
  const runId = `run-${randomUUID()}`;
  const native = nativeWriter(state, agent);
  const agents = createDshAgentProvider({
    subagents: state.ctx.subagents,
    tools: state.ctx.tools,
    parent: agent,
    transport: config.provider,
    readOnlyTools: config.readOnlyTools,
    ownToolNames: ownToolNames(config),
    tiers: config.tiers,
    nativeEvents: native,
    cwd,
    pluginName: PLUGIN_NAME,
    maxChildModelCalls: config.maxChildModelCalls,
  });
  const approver = gateWatch(
    createDshApprover({
      approval: services.approval,
      sandboxPolicy: services.sandboxPolicy,
      agent,
      mode: context.preApproved && config.approvalMode !== 'always' ? 'never' : config.approvalMode,
      toolName: config.runToolName,
    }),
  );
  project.router.bind(runId, {
    agents,
    approver,
    // read at preflight, so a tool or provider mounted since the call started counts
    facts: () =>
      detectHostFacts({
        tools: state.ctx.tools,
        parent: agent,
        ownToolNames: ownToolNames(config),
        userQuestions: services.userQuestions,
        tiers: config.tiers,
      }),
  });

  // A named capsule run without args runs with its first example (as `wf run <name>` does).
  const args =
    input.args ??
    (entry.execution === 'trusted-local' ? undefined : entry.capsule.inputs?.examples?.[0]) ??
    {};
  const summary: RunSummary = {
    runId,
    workflow: entry.name,
    source: entry.source,
    trust: entry.execution,
    status: 'running',
    startedAt: Date.now(),
    cwd,
    args,
    ...(entry.execution !== 'trusted-local'
      ? { capsule: { manifest: entry.capsule.manifest, source: entry.capsule.source } }
      : {}),
    events: [],
    ...(context.resumeOf ? { resumedFrom: { runId: context.resumeOf, at: Date.now() } } : {}),
  };
  state.runs.set(runId, summary);
  native.runStart(runId, entry.name);

  // The run's own controller: a background run must outlive the launching step (its signal is
  // aborted when the step or Code-Mode program settles), so only a waiting call binds it.
  let handle: RunHandle;
  try {
    handle = context.resumeOf
      ? await project.engine.resume(context.resumeOf, { runId })
      : await project.engine.start({
          workflow,
          args,
          trust: entry.execution,
          runId,
          ...(entry.execution !== 'trusted-local' && entry.capsule.requires
            ? { requires: entry.capsule.requires }
            : {}),
          ...(context.lineage?.sourceRunId ? { sourceRunId: context.lineage.sourceRunId } : {}),
          ...(context.lineage?.revisionOf ? { revisionOf: context.lineage.revisionOf } : {}),
        });
  } catch (error) {
    project.router.unbind(runId);
    native.runEnd(runId, 'error');
    const e = error as { code?: unknown; message?: unknown };
    if (e.code === 'WF_ENGINE_RESUME_PROVIDER_MISMATCH') {
      // Refused before anything was recorded: no run to list, the caller gets the named error.
      state.runs.delete(runId);
      return fail(e.code, String(e.message));
    }
    summary.status = 'failed';
    summary.endedAt = Date.now();
    summary.error = {
      code: typeof e.code === 'string' ? e.code : 'WF_PLUGIN_START_FAILED',
      message: typeof e.message === 'string' ? e.message : String(error),
    };
    return { ok: true, reply: replyOf(summary, summary) };
  }
  mirrorEvents(handle, summary);
  const settled = settle(handle).then((d) => {
    summary.status = d.status;
    summary.endedAt = Date.now();
    if (d.result !== undefined) summary.result = d.result;
    if (d.error) {
      const hint = d.status === 'denied' ? denialHint(approver.lastOutcome(), config) : undefined;
      summary.error = { ...d.error, ...(hint ? { hint } : {}) };
    }
    native.runEnd(runId, nativeStopReason(d.status));
    project.router.unbind(runId);
    state.active.delete(runId);
    return d;
  });
  state.active.set(runId, { handle, done: settled, summary });

  const onAbort = () => handle.stop('the calling tool call was cancelled');
  if (context.signal.aborted) onAbort();
  else context.signal.addEventListener('abort', onAbort, { once: true });
  if (input.wait !== false) {
    await settled;
    context.signal.removeEventListener('abort', onAbort);
    return { ok: true, reply: replyOf(summary, summary) };
  }
  // A background run is approved while its call is still open: DSH asks approvals inside a tool
  // call's turn, and once the call has answered nobody can be asked (the run would be denied).
  const gate = await Promise.race([approver.decided, settled.then(() => undefined)]);
  context.signal.removeEventListener('abort', onAbort);
  if (gate === undefined || gate !== 'allowed') {
    await settled;
    return { ok: true, reply: replyOf(summary, summary) };
  }

  const job = startJob(services.jobs, {
    kind: 'workflow',
    label: `workflow ${entry.name} (${runId})`,
    owner: agent,
    cancel: (reason) => handle.stop(reason ?? 'killed through DSH jobs'),
    done: settled.then((d) => ({
      status: d.status === 'completed' ? 'completed' : d.status === 'stopped' ? 'killed' : 'failed',
      detail: d.error ? `${d.error.code}: ${d.error.message}` : d.status,
      output: runText(replyOf(summary, summary), config.maxResultChars),
    })),
    readOutput: () => runText(replyOf(summary, summary), config.maxResultChars),
  });
  if (job.ok) summary.jobId = job.jobId;
  return {
    ok: true,
    reply: {
      runId,
      workflow: summary.workflow,
      status: summary.status,
      ...(summary.resumedFrom ? { resumedFrom: summary.resumedFrom } : {}),
      ...(job.ok
        ? { jobId: job.jobId }
        : {
            note: `running in the background; DSH jobs ${job.error.code === 'WF_DSH_SERVICE_UNAVAILABLE' ? 'unavailable' : 'failed'}: manage it with ${config.manageToolName}`,
          }),
    },
  };
}

/** An approver that also tells when its decision is made (`decided`), whatever the decision. */
function gateWatch<A extends Approver>(approver: A): A & { decided: Promise<ApprovalDecision> } {
  let decide: (decision: ApprovalDecision) => void = () => {};
  const decided = new Promise<ApprovalDecision>((resolve) => {
    decide = resolve;
  });
  return Object.assign(Object.create(approver) as A, {
    decided,
    async request(request: Parameters<A['request']>[0], signal: AbortSignal) {
      const decision = await approver.request(request, signal).catch(() => 'unavailable' as const);
      decide(decision);
      return decision;
    },
  });
}

/** Keeps the summary's events and paused/running status current; the outcome comes from `done`. */
function mirrorEvents(handle: RunHandle, summary: RunSummary): void {
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
}

/**
 * The run's outcome; a port that threw on the host side becomes a failed run, not a rejection.
 * The plugin reports status, result and error only, so no cost is made up for a run that threw.
 */
function settle(handle: RunHandle): Promise<RunOutcome> {
  return handle.done.then(
    (d): RunOutcome => d,
    (error): RunOutcome => ({
      status: 'failed',
      error: {
        code: 'WF_PLUGIN_HOST_ERROR',
        message: error instanceof Error ? error.message : String(error),
      },
    }),
  );
}

/** The run as its caller sees it: status, name, duration, agents by outcome, result, error. */
export function replyOf(summary: RunSummary, d: RunOutcome | RunSummary): RunReply {
  return {
    runId: summary.runId,
    workflow: summary.workflow,
    status: d.status,
    ...(summary.endedAt !== undefined && d.status !== 'running' && d.status !== 'paused'
      ? { durationMs: Math.max(0, summary.endedAt - summary.startedAt) }
      : {}),
    agents: countAgents(summary),
    ...(summary.jobId ? { jobId: summary.jobId } : {}),
    ...(summary.resumedFrom ? { resumedFrom: summary.resumedFrom } : {}),
    ...(d.result !== undefined ? { result: d.result } : {}),
    ...(d.error ? { error: { ...d.error } } : {}),
  };
}

/** The run's children by outcome, from its event log (the run report's own count). */
export function countAgents(summary: Pick<RunSummary, 'events'>): RunAgentCounts {
  const model = foldRunEvents(summary.events);
  return { total: model.agents.length, ...agentCounts(model) };
}

/**
 * What would have let a denied run start, named by the option that controls it: headless DSH has
 * no approval prompt at all, so there the answer is `approvalMode`, not "ask again".
 */
export function denialHint(outcome: string | undefined, config: PluginConfig): string | undefined {
  const row = "the wf-workflows row of the profile's cordis.patch.yml";
  if (outcome === 'unavailable')
    return `nothing in this DSH session can answer an approval prompt (headless DSH has none), so every run that needs approval is denied. To run inline and local workflows here unasked, set approvalMode: never on ${row} (README, "Use it in DSH"); full-access sessions (DSH_PERMISSION_MODE=danger-full-access) are never asked.`;
  if (outcome === 'rejected' || outcome === 'cancelled')
    return `the approval was ${outcome}. Which runs ask is approvalMode (now ${config.approvalMode}) on ${row}: never runs them unasked, always asks for every run.`;
  return undefined;
}

/** The run tool's answer: a reply as readable text (run-text.ts); anything else as JSON text. */
export function renderResult(state: ServiceState, value: unknown): string {
  const max = state.config.maxResultChars;
  return isReply(value) ? runText(value, max) : capped(valueText(value), max);
}

function isReply(value: unknown): value is RunReply {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { runId?: unknown }).runId === 'string' &&
    typeof (value as { status?: unknown }).status === 'string'
  );
}
