// `/workflow report [run]` and workflow_manage `report`: the run's self-contained HTML report, the
// page `wf report` writes (same renderer, @wf/report), written into the project under
// .dsh/workflow-reports/ beside the run store, so a report never lands among the user's files.
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
import type { HostAgent } from '@wf/dsh-adapter';
import { renderRunReport } from '@wf/report';
import { projectOf } from './project.js';
import { findRun } from './runs-index.js';
import { cwdOf, fail, type RunSummary, type ServiceResult, type ServiceState } from './state.js';

/** Where reports go, relative to the session's working directory. */
export const REPORTS_DIRECTORY = '.dsh/workflow-reports';

/** Writes the report of `target` (a run id, alias, workflow name or `last`; default the latest). */
export async function writeRunReport(
  state: ServiceState,
  agent: HostAgent,
  target: string | undefined,
): Promise<ServiceResult<{ runId: string; path: string; bytes: number }>> {
  const found = await findRun(state, agent, target);
  if (!found.ok) return found;
  const run = found.run;
  const cwd = cwdOf(agent);
  const { store } = await projectOf(state, cwd);
  const shown = await store.show(run.runId).catch(() => undefined);
  const snapshot = shown?.ok ? shown.run.snapshot : undefined;
  const events = await store.events(run.runId).catch(() => run.events);
  const html = renderRunReport({
    run: {
      ...(snapshot ?? snapshotOf(run)),
      // a run of this process has its whole result in memory; a stored one's comes from its events
      ...(!run.stored && run.result !== undefined ? { result: run.result } : {}),
    },
    events,
  });
  const dir = resolve(cwd, REPORTS_DIRECTORY);
  const path = join(dir, `${run.runId}.report.html`);
  const temp = join(dir, `.${run.runId}.${randomUUID()}.tmp`);
  try {
    await fsp.mkdir(dir, { recursive: true });
    // a reader never sees half a page: written aside, then renamed over the old report
    await fsp.writeFile(temp, html, { encoding: 'utf8', flag: 'wx' });
    await fsp.rename(temp, path);
  } catch (error) {
    await fsp.rm(temp, { force: true }).catch(() => {});
    return fail(
      'WF_PLUGIN_REPORT_UNWRITABLE',
      `cannot write the report of run ${run.runId} to ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { ok: true, runId: run.runId, path, bytes: Buffer.byteLength(html) };
}

/** A run without a readable run.json (not recorded yet): the snapshot fields the report reads. */
function snapshotOf(run: RunSummary): Record<string, unknown> {
  return {
    runId: run.runId,
    workflow: run.workflow,
    status: run.status,
    startedAt: run.startedAt,
    ...(run.endedAt !== undefined ? { endedAt: run.endedAt } : {}),
    ...(run.error ? { error: run.error } : {}),
  };
}
