// Starting a run: resolve, gate (approval; trusted-local confirmation), bind the run's DSH ports,
// start it on the project's engine, mirror its events into the summary and the native session
// events, and either wait for it or hand it to DSH jobs.
import { randomUUID } from 'node:crypto';
import type { WorkflowEntry } from '@wf/catalog-fs';
import {
  createDshAgentProvider,
  createDshApprover,
  detectHostFacts,
  type HostRequestHooks,
  nativeStopReason,
  startJob,
} from '@wf/dsh-adapter';
import type { RunHandle, WorkflowInput } from '@wf/engine';
import { PluginError } from './errors.js';
import { nativeWriter, projectOf } from './project.js';
import {
  cwdOf,
  fail,
  ownToolNames,
  PLUGIN_NAME,
  type Project,
  type RunOutcome,
  type RunReply,
  type RunSummary,
  type ServiceResult,
  type ServiceState,
  type StartContext,
  type StartInput,
} from './state.js';
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
    // The token budget's gate before each model request of a child (DSH's agent/request hook).
    ...(typeof state.ctx.on === 'function'
      ? { hooks: state.ctx as unknown as HostRequestHooks }
      : {}),
  });
  const approver = createDshApprover({
    approval: services.approval,
    sandboxPolicy: services.sandboxPolicy,
    agent,
    mode: context.preApproved && config.approvalMode !== 'always' ? 'never' : config.approvalMode,
    toolName: config.runToolName,
  });
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
    return { ok: true, reply: { runId, status: 'failed', error: summary.error } };
  }
  mirrorEvents(handle, summary);
  const settled = settle(handle).then((d) => {
    summary.status = d.status;
    summary.endedAt = Date.now();
    if (d.result !== undefined) summary.result = d.result;
    if (d.error) summary.error = { ...d.error };
    native.runEnd(runId, nativeStopReason(d.status));
    project.router.unbind(runId);
    state.active.delete(runId);
    return d;
  });
  state.active.set(runId, { handle, done: settled, summary });

  if (input.wait !== false) {
    const onAbort = () => handle.stop('the calling tool call was cancelled');
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
    const d = await settled;
    context.signal.removeEventListener('abort', onAbort);
    return { ok: true, reply: replyOf(summary, d) };
  }

  const job = startJob(services.jobs, {
    kind: 'workflow',
    label: `workflow ${entry.name} (${runId})`,
    owner: agent,
    cancel: (reason) => handle.stop(reason ?? 'killed through DSH jobs'),
    done: settled.then((d) => ({
      status: d.status === 'completed' ? 'completed' : d.status === 'stopped' ? 'killed' : 'failed',
      detail: d.error ? `${d.error.code}: ${d.error.message}` : d.status,
      output: renderResult(state, d.result),
    })),
    readOutput: () => (summary.result === undefined ? '' : renderResult(state, summary.result)),
  });
  if (job.ok) summary.jobId = job.jobId;
  return {
    ok: true,
    reply: {
      runId,
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

function replyOf(summary: RunSummary, d: RunOutcome): RunReply {
  return {
    runId: summary.runId,
    status: d.status,
    ...(summary.resumedFrom ? { resumedFrom: summary.resumedFrom } : {}),
    ...(d.result !== undefined ? { result: d.result } : {}),
    ...(d.error ? { error: { ...d.error } } : {}),
  };
}

export function renderResult(state: ServiceState, value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'null');
  } catch {
    text = String(value);
  }
  const max = state.config.maxResultChars;
  return text.length > max ? `${text.slice(0, max)}\n… (truncated at ${max} characters)` : text;
}
