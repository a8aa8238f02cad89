// The runs a project knows: this process's (live summaries) merged with the run store's (earlier
// processes), found by id or workflow name, controlled while active, pruned and deleted.
import type { WorkflowManifest } from '@wf/bridge';
import type { RunStore } from '@wf/catalog-fs';
import type { HostAgent } from '@wf/dsh-adapter';
import type { RunEvent, Trust } from '@wf/engine';
import { projectOf } from './project.js';
import {
  cwdOf,
  fail,
  type RunOutcome,
  type RunSummary,
  type ServiceResult,
  type ServiceState,
} from './state.js';

/**
 * How many stored runs a listing reads: the newest, found through the run store's runs index
 * (`listRecent`), so listing costs the same with 10 or 10,000 runs on disk.
 */
export const RECENT_RUNS = 50;

type StoredRun = Awaited<ReturnType<RunStore['listRecent']>>['runs'][number];

/** A run read back from the run store, as the plugin shows it; undefined without a snapshot. */
function storedSummary(s: StoredRun, cwd: string): RunSummary | undefined {
  const snap = s.snapshot;
  if (!snap) return undefined;
  return {
    runId: s.runId,
    workflow: snap.workflow,
    source: 'run-snapshot',
    trust: snap.execution as Trust,
    status: snap.status as RunSummary['status'],
    startedAt: snap.startedAt,
    ...(snap.endedAt !== undefined ? { endedAt: snap.endedAt } : {}),
    ...(snap.resultSummary !== undefined ? { result: snap.resultSummary } : {}),
    ...(snap.error ? { error: { ...snap.error } } : {}),
    ...resumedFromOf(snap),
    ...(snap.simulated === true ? { simulated: true } : {}),
    cwd,
    args: undefined,
    events: [],
    stored: true,
  };
}

/**
 * Runs of this agent's project, newest first: this process's, then the run store's newest
 * `limit` (or every stored run with `'all'`, which reads each run.json). `total` counts every
 * run once, stored or live, so a caller can say how many were left out.
 */
export function recentRuns(
  state: ServiceState,
  agent: HostAgent,
  limit: number | 'all' = RECENT_RUNS,
): Promise<{ runs: RunSummary[]; total: number }> {
  return recentRunsAt(state, cwdOf(agent), limit);
}

/** `recentRuns` of the project in `cwd` (no agent needed: the plugin reads it at load). */
export async function recentRunsAt(
  state: ServiceState,
  cwd: string,
  limit: number | 'all' = RECENT_RUNS,
): Promise<{ runs: RunSummary[]; total: number }> {
  const live = [...state.runs.values()].filter((r) => r.cwd === cwd);
  const seen = new Set(live.map((r) => r.runId));
  const { store } = await projectOf(state, cwd);
  const listed =
    limit === 'all'
      ? await store
          .list()
          .then((runs) => ({ runs, total: runs.length }))
          .catch(() => ({ runs: [] as StoredRun[], total: 0 }))
      : await store.listRecent(limit).catch(() => ({ runs: [] as StoredRun[], total: 0 }));
  // Live runs are recorded too: each run counts once.
  let total = listed.total + seen.size;
  for (const s of listed.runs) {
    if (seen.has(s.runId)) {
      total--;
      continue;
    }
    const summary = storedSummary(s, cwd);
    if (summary) live.push(summary);
  }
  return {
    runs: live.sort((a, b) => b.startedAt - a.startedAt),
    total: Math.max(total, live.length),
  };
}

/** Runs of this agent's project: this process's, then the run store's newest (newest first). */
export async function listRuns(state: ServiceState, agent: HostAgent): Promise<RunSummary[]> {
  return (await recentRuns(state, agent)).runs;
}

/** One run by exact id: this process's, else read from the run store (its run.json only). */
async function runById(
  state: ServiceState,
  agent: HostAgent,
  runId: string,
): Promise<RunSummary | undefined> {
  const cwd = cwdOf(agent);
  const live = state.runs.get(runId);
  if (live && live.cwd === cwd) return live;
  const { store } = await projectOf(state, cwd);
  const shown = await store.show(runId).catch(() => undefined);
  return shown?.ok ? storedSummary(shown.run, cwd) : undefined;
}

export async function findRun(
  state: ServiceState,
  agent: HostAgent,
  target: string | undefined,
  prefer: 'active' | 'latest' = 'latest',
): Promise<ServiceResult<{ run: RunSummary }>> {
  if (target) {
    const exact = await runById(state, agent, target);
    if (exact) return { ok: true, run: await hydrate(state, agent, exact) };
  }
  // No target and `last` need only the newest runs; a workflow name needs every stored run (a
  // name used by an old run and a new one is ambiguous, as it always was).
  const runs =
    !target || target === 'last'
      ? await listRuns(state, agent)
      : (await recentRuns(state, agent, 'all')).runs;
  if (!target) {
    const pick = prefer === 'active' ? runs.find((r) => state.active.has(r.runId)) : runs[0];
    return pick
      ? { ok: true, run: await hydrate(state, agent, pick) }
      : fail('WF_PLUGIN_NOT_FOUND', prefer === 'active' ? 'no active run' : 'no runs yet');
  }
  // `last` is the most recently started run, as in the wf command line.
  if (target === 'last') {
    const latest = runs[0];
    return latest
      ? { ok: true, run: await hydrate(state, agent, latest) }
      : fail('WF_PLUGIN_NOT_FOUND', 'no runs yet, so there is no `last` run');
  }
  const byName = runs.filter((r) => r.workflow === target);
  if (byName.length === 1 && byName[0])
    return { ok: true, run: await hydrate(state, agent, byName[0]) };
  if (byName.length > 1)
    return fail(
      'WF_PLUGIN_AMBIGUOUS',
      `"${target}" names ${byName.length} runs; use a run id (${byName.map((r) => r.runId).join(', ')})`,
    );
  return fail('WF_PLUGIN_NOT_FOUND', `no run "${target}"`);
}

/** Fills a stored run's args, source and events from the run store. */
async function hydrate(
  state: ServiceState,
  agent: HostAgent,
  run: RunSummary,
): Promise<RunSummary> {
  if (!run.stored) return run;
  const { store } = await projectOf(state, cwdOf(agent));
  const loaded = await store.load(run.runId).catch(() => undefined);
  const events = (await store.events(run.runId, { limit: 500 }).catch(() => [])) as RunEvent[];
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

/** A run that is not active in this process; else WF_PLUGIN_RUN_ACTIVE, `run <id> <why>`. */
export async function findEndedRun(
  state: ServiceState,
  agent: HostAgent,
  target: string,
  why: string,
): Promise<ServiceResult<{ run: RunSummary }>> {
  const found = await findRun(state, agent, target);
  if (found.ok && state.active.has(found.run.runId))
    return fail('WF_PLUGIN_RUN_ACTIVE', `run ${found.run.runId} ${why}`);
  return found;
}

export async function controlRun(
  state: ServiceState,
  agent: HostAgent,
  action: 'pause' | 'resume' | 'stop',
  target?: string,
): Promise<ServiceResult<{ run: RunSummary }>> {
  const found = await findRun(state, agent, target, 'active');
  if (!found.ok) return found;
  const live = state.active.get(found.run.runId);
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

export function waitForRun(state: ServiceState, runId: string): Promise<RunOutcome | undefined> {
  return Promise.resolve(state.active.get(runId)?.done);
}

/** Forgets old terminal runs, here and in the run store (which never touches active runs). */
export async function pruneRuns(
  state: ServiceState,
  agent: HostAgent,
  keep: number,
): Promise<readonly string[]> {
  const { store } = await projectOf(state, cwdOf(agent));
  const pruned = new Set<string>((await store.prune({ keep })).pruned);
  for (const id of pruned) state.runs.delete(id);
  return [...pruned];
}

export async function deleteRun(
  state: ServiceState,
  agent: HostAgent,
  target: string,
): Promise<ServiceResult<{ runId: string }>> {
  // invariant 9: an active run can never be deleted, even with force
  const found = await findEndedRun(state, agent, target, 'is active; stop it first');
  if (!found.ok) return found;
  const { store } = await projectOf(state, cwdOf(agent));
  const out = await store.delete(found.run.runId);
  if (!out.ok) return fail(out.error.code, out.error.message);
  state.runs.delete(found.run.runId);
  return { ok: true, runId: found.run.runId };
}

/** `resumedFrom` of a stored run (older records name only `resumedFromRunId`). */
function resumedFromOf(snap: {
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
  readonly resumedFromRunId?: string;
  readonly startedAt: number;
}): { resumedFrom?: { runId: string; at: number } } {
  if (snap.resumedFrom && typeof snap.resumedFrom.runId === 'string')
    return { resumedFrom: { runId: snap.resumedFrom.runId, at: Number(snap.resumedFrom.at) } };
  if (typeof snap.resumedFromRunId === 'string')
    return { resumedFrom: { runId: snap.resumedFromRunId, at: snap.startedAt } };
  return {};
}
