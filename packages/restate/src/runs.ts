// Reading a run's durable record from Restate (the WfJournal object): one view of the run,
// whichever workers executed it (start, every attempt's events, finish), and the runs a server
// holds (through the admin API's SQL over the services' state).
import type { RunEvent, RunFinishRecord, RunStartRecord } from '@wf/engine';
import { RestateBackendError } from './errors.js';
import { fromRef } from './internal/blobs.js';
import { callPatiently, checkUrl, httpJson, parseAnswer } from './internal/http.js';
import type { RunRecord } from './internal/journal-object.js';
import { BLOB_OBJECT, isRunId, JOURNAL_OBJECT, RUN_SERVICE } from './internal/names.js';
import { DEFAULT_MAX_ANSWER_BYTES, deploymentHealth } from './worker.js';

export interface RestateRun {
  readonly runId: string;
  readonly start: RunStartRecord;
  /** Absent while the run has not ended. */
  readonly finish?: RunFinishRecord;
  /** Events after `after`, in seq order (every attempt's: a continued attempt's follow). */
  readonly events: readonly RunEvent[];
  /** Attempts Restate made of the run (1 when no worker was lost). */
  readonly attempts: number;
}

const base = (ingress: string, runId: string) =>
  `${checkUrl('ingress', ingress)}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}`;

/**
 * A run's record from Restate, or undefined when the server holds none under that id. Events
 * after `after` (default all); a large result stored by reference is fetched and checked.
 */
export async function fetchRun(
  ingress: string,
  runId: string,
  options: { after?: number; events?: boolean; maxResultBytes?: number } = {},
): Promise<RestateRun | undefined> {
  if (!isRunId(runId)) return undefined;
  const url = base(ingress, runId);
  const what = `reading the record of run ${runId}`;
  const record = parseAnswer<RunRecord>(
    what,
    await callPatiently(what, () => httpJson('POST', `${url}/record`, null), undefined, 10_000),
  );
  if (!record.start) return undefined;
  const events: RunEvent[] = [];
  let after = options.after ?? 0;
  while (options.events !== false) {
    const page = parseAnswer<{ events: RunEvent[]; more: boolean }>(
      what,
      await callPatiently(
        what,
        () => httpJson('POST', `${url}/events`, { after }),
        undefined,
        10_000,
      ),
    );
    events.push(...page.events);
    const last = page.events.at(-1);
    if (!page.more || !last) break;
    after = last.seq;
  }
  const finish =
    record.finish?.result === undefined
      ? record.finish
      : {
          ...record.finish,
          result: await fromRef(
            {
              ingress: checkUrl('ingress', ingress),
              maxBytes: options.maxResultBytes ?? DEFAULT_MAX_ANSWER_BYTES,
            },
            record.finish.result,
            `the result of run ${runId}`,
          ),
        };
  return {
    runId,
    start: record.start,
    ...(finish ? { finish } : {}),
    events,
    attempts: record.attempts,
  };
}

/** The ids of the runs the server holds a record of (admin API, SQL over the services' state). */
export async function listRuns(admin: string): Promise<string[]> {
  const keys = await query(
    admin,
    `SELECT service_key FROM state WHERE service_name = '${JOURNAL_OBJECT}' AND key = 'start'`,
  );
  return keys.filter(isRunId);
}

/**
 * Deletes an ended run from Restate: releases the large answers it stored (a blob chunk is
 * cleared once no run that stored it remains), then clears its journal and record. An active run
 * is never deleted. Idempotent: a delete interrupted halfway is finished by the next one.
 */
export async function deleteRun(
  ingress: string,
  admin: string,
  runId: string,
): Promise<
  { deleted: true; blobsReleased: number } | { deleted: false; reason: 'active' | 'not-found' }
> {
  const run = await fetchRun(ingress, runId, { events: false });
  if (!run) return { deleted: false, reason: 'not-found' };
  if (!run.finish) return { deleted: false, reason: 'active' };
  const keys = await query(
    admin,
    `SELECT service_key FROM state WHERE service_name = '${BLOB_OBJECT}' AND key = 'owners' AND value_utf8 LIKE '%"${runId}"%'`,
  );
  const ingressBase = checkUrl('ingress', ingress);
  for (const key of keys) {
    const what = `releasing blob ${key} of run ${runId}`;
    parseAnswer(
      what,
      await callPatiently(
        what,
        () =>
          httpJson('POST', `${ingressBase}/${BLOB_OBJECT}/${encodeURIComponent(key)}/release`, {
            owner: runId,
          }),
        undefined,
        10_000,
      ),
    );
  }
  const what = `deleting run ${runId}`;
  const cleared = parseAnswer<{ cleared: boolean }>(
    what,
    await callPatiently(
      what,
      () => httpJson('POST', `${base(ingress, runId)}/clear`, null),
      undefined,
      10_000,
    ),
  );
  return cleared.cleared
    ? { deleted: true, blobsReleased: keys.length }
    : { deleted: false, reason: 'active' };
}

/** The service keys an admin SQL query returns (`SELECT service_key ...`). */
async function query(admin: string, sql: string): Promise<string[]> {
  const url = `${checkUrl('admin', admin)}/query`;
  const what = 'querying the server state';
  const answer = await callPatiently(
    what,
    () => httpJson('POST', url, { query: sql }, { accept: 'application/json' }),
    undefined,
    10_000,
  );
  const rows = parseAnswer<{ rows?: { service_key?: unknown }[] }>(what, answer).rows;
  if (!Array.isArray(rows))
    throw new RestateBackendError('WF_RESTATE_REQUEST_FAILED', `${what}: no rows in the answer`);
  return rows.map((r) => r.service_key).filter((k): k is string => typeof k === 'string');
}

/**
 * Where a run's invocation stands in Restate (admin API, SQL over its invocations): its status,
 * how often Restate retried it and why it last failed, and the deployment (address) it is pinned
 * to, with whether anything answers there. Undefined when the server has no such invocation.
 */
export async function runProgress(
  admin: string,
  runId: string,
): Promise<
  | {
      status: string;
      retries: number;
      lastFailure?: string;
      deployment?: { id: string; uri: string; answers: boolean };
    }
  | undefined
> {
  if (!isRunId(runId)) return undefined;
  const url = `${checkUrl('admin', admin)}/query`;
  const what = `reading the progress of run ${runId}`;
  const sql = `SELECT status, retry_count, last_failure, pinned_deployment_id, last_attempt_deployment_id FROM sys_invocation WHERE target_service_name = '${RUN_SERVICE}' AND target_service_key = '${runId}'`;
  const rows = parseAnswer<{ rows?: Record<string, unknown>[] }>(
    what,
    await callPatiently(
      what,
      () => httpJson('POST', url, { query: sql }, { accept: 'application/json' }),
      undefined,
      3_000,
    ),
  ).rows;
  const row = rows?.[0];
  if (!row) return undefined;
  const id = String(row.pinned_deployment_id ?? row.last_attempt_deployment_id ?? '');
  const deployment =
    id === '' ? undefined : (await deploymentHealth(admin)).find((d) => d.id === id);
  return {
    status: String(row.status ?? ''),
    retries: Number(row.retry_count ?? 0) || 0,
    ...(typeof row.last_failure === 'string' && row.last_failure !== ''
      ? { lastFailure: row.last_failure.slice(0, 300) }
      : {}),
    ...(deployment ? { deployment } : {}),
  };
}
