// Runs made from runs: rerun (fresh, same or new args), resume (journal replay, then live), save
// (a run's source as a catalog capsule), each recording where it came from.
import type { WorkflowEntry } from '@wf/catalog-fs';
import type { HostAgent } from '@wf/dsh-adapter';
import { startRun } from './launch.js';
import { catalogOf } from './project.js';
import { findEndedRun, findRun } from './runs-index.js';
import {
  cwdOf,
  fail,
  type LaunchContext,
  type RunReply,
  type RunSummary,
  type ServiceResult,
  type ServiceState,
} from './state.js';
import { hostDshVersion } from './host-version.js';

/** A recorded run's program as an entry: what rerun and resume start again. */
function snapshotEntry(
  run: RunSummary & { capsule: NonNullable<RunSummary['capsule']> },
): WorkflowEntry {
  return {
    name: run.workflow,
    source: 'run-snapshot',
    execution: run.trust === 'trusted-package' ? 'trusted-package' : 'capability-generated',
    capsule: run.capsule,
    location: run.runId,
  };
}

export async function rerun(
  state: ServiceState,
  agent: HostAgent,
  target: string,
  args: unknown,
  context: LaunchContext,
): Promise<ServiceResult<{ reply: RunReply }>> {
  const wait = context.wait ?? true;
  const found = await findRun(state, agent, target);
  // a saved workflow name reruns that workflow
  if (!found.ok) return startRun(state, { name: target, args, wait }, context);
  const run = found.run;
  if (!run.capsule)
    return startRun(state, { name: run.workflow, args: args ?? run.args, wait }, context);
  return startRun(
    state,
    {
      source: run.capsule.source,
      manifest: run.capsule.manifest,
      args: args ?? run.args,
      wait,
    },
    { ...context, lineage: { sourceRunId: run.runId } },
    snapshotEntry({ ...run, capsule: run.capsule }),
  );
}

/** Re-executes a recorded run: journaled calls replay, the rest continues live. */
export async function resumeRun(
  state: ServiceState,
  agent: HostAgent,
  target: string,
  context: LaunchContext,
): Promise<ServiceResult<{ reply: RunReply }>> {
  const found = await findEndedRun(state, agent, target, 'is still active');
  if (!found.ok) return found;
  const run = found.run;
  if (run.trust === 'trusted-local' || !run.capsule)
    return fail('WF_PLUGIN_NOT_RESUMABLE', `run ${run.runId} has no recorded source to resume`);
  return startRun(
    state,
    { args: run.args, wait: context.wait ?? true },
    { ...context, resumeOf: run.runId, lineage: { sourceRunId: run.runId } },
    snapshotEntry({ ...run, capsule: run.capsule }),
  );
}

export async function saveRun(
  state: ServiceState,
  agent: HostAgent,
  target: string,
  name: string,
  scope: 'project' | 'personal' = 'project',
): Promise<ServiceResult<{ path: string }>> {
  const found = await findRun(state, agent, target);
  if (!found.ok) return found;
  if (!found.run.capsule)
    return fail('WF_PLUGIN_NOT_SAVEABLE', `run ${found.run.runId} has no source to save`);
  const catalog = await catalogOf(state, cwdOf(agent));
  if (!catalog) return fail('WF_PLUGIN_CATALOG_UNAVAILABLE', 'the catalog could not be opened');
  const capsule = {
    format: 'dsh.workflow',
    version: 1,
    workflowApiVersion: 1,
    minDshVersion: '0.1.0-rc.8',
    manifest: { ...found.run.capsule.manifest, name },
    source: found.run.capsule.source,
    // The run's args become the example, so running the saved workflow by name works as it ran.
    ...(isArgsObject(found.run.args)
      ? {
          inputs: {
            description: `the args of run ${found.run.runId}, which this workflow was saved from`,
            examples: [found.run.args],
          },
        }
      : {}),
    provenance: {
      fromRunId: found.run.runId,
      createdAt: new Date().toISOString(),
      dshVersion: hostDshVersion(),
      pluginVersion: '0.0.0',
    },
  };
  const saved = await catalog.save(name, capsule, { scope });
  if (!saved.ok) return fail(saved.error.code, saved.error.message);
  return { ok: true, path: saved.entry.path };
}

function isArgsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
