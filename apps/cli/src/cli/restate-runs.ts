// One view of a Restate run: `wf runs/show/events/report --restate URL` read the run's durable
// record in Restate (start, every attempt's events whichever worker ran them, finish) and give it
// the shape the run store gives the local verbs; `wf run --engine restate` records the finished
// run in this directory's store from the same record. @wf/restate is loaded only here.
import type { RunSnapshot, RunStore } from '@wf/catalog-fs/run-store';
import { CliError } from './errors.js';
import { adminNextTo, cliErrorOf } from './restate-common.js';

type Restate = typeof import('@wf/restate');
type RemoteRun = NonNullable<Awaited<ReturnType<Restate['fetchRun']>>>;

/** A run as the read verbs use it (runs.ts loadRun's shape). */
export interface LoadedRun {
  readonly runId: string;
  readonly summary: {
    readonly runId: string;
    readonly snapshot: RunSnapshot;
    readonly active: boolean;
    readonly displayName?: string;
  };
  readonly snapshot: RunSnapshot;
  readonly events: readonly unknown[];
  readonly result: { value: unknown } | undefined;
}

/** run.json's fields, from the durable record. */
export function snapshotOf(run: RemoteRun): RunSnapshot {
  const { start, finish } = run;
  const last = run.events.at(-1);
  const paused = !finish && last?.type === 'workflow-paused';
  return {
    format: 'wf.run',
    version: 1,
    runId: run.runId,
    workflow: start.workflow,
    status: finish?.status ?? (paused ? 'paused' : 'running'),
    execution: start.trust,
    startedAt: start.startedAt,
    updatedAt: finish?.endedAt ?? last?.time ?? start.startedAt,
    eventCount: run.events.length,
    lastSeq: last?.seq ?? 0,
    artifacts: [],
    ...(finish ? { endedAt: finish.endedAt, cost: finish.cost } : {}),
    ...(finish?.error ? { error: finish.error } : {}),
    ...(start.provider === undefined ? {} : { provider: start.provider }),
    ...(start.simulated === undefined ? {} : { simulated: start.simulated }),
    engine: 'restate',
    attempts: run.attempts,
  } as unknown as RunSnapshot;
}

const notFound = (runId: string, ingress: string) =>
  new CliError(
    'WF_CLI_RUN_NOT_FOUND',
    `no run ${JSON.stringify(runId)} on the Restate server at ${ingress}`,
    {
      hint: '`wf runs --restate <ingress URL>` lists the runs the server holds',
    },
  );

async function restate(): Promise<Restate> {
  return import('@wf/restate');
}

/** `last`: the most recently started run the server holds. */
async function resolveRemote(ingress: string, admin: string, target: string): Promise<string> {
  if (target !== 'last') return target;
  const { fetchRun, listRuns } = await restate();
  let best: { runId: string; at: number } | undefined;
  for (const runId of await listRuns(admin)) {
    const run = await fetchRun(ingress, runId, { events: false });
    if (run && (!best || run.start.startedAt > best.at)) best = { runId, at: run.start.startedAt };
  }
  if (!best)
    throw new CliError('WF_CLI_RUN_NOT_FOUND', `the Restate server at ${ingress} holds no run`);
  return best.runId;
}

export async function loadRemoteRun(
  ingress: string,
  admin: string | undefined,
  target: string,
): Promise<LoadedRun> {
  try {
    const { fetchRun, probeIngress } = await restate();
    await probeIngress(ingress);
    const runId = await resolveRemote(ingress, admin ?? adminNextTo(ingress), target);
    const run = await fetchRun(ingress, runId);
    if (!run) throw notFound(runId, ingress);
    const snapshot = snapshotOf(run);
    return {
      runId,
      summary: { runId, snapshot, active: run.finish === undefined },
      snapshot,
      events: run.events,
      result: run.finish && 'result' in run.finish ? { value: run.finish.result } : undefined,
    };
  } catch (e) {
    throw cliErrorOf(e);
  }
}

/** The runs the server holds, newest first, as the run store's summaries. */
export async function listRemoteRuns(
  ingress: string,
  admin: string | undefined,
): Promise<{ runId: string; active: boolean; snapshot: RunSnapshot }[]> {
  try {
    const { fetchRun, listRuns, probeIngress } = await restate();
    await probeIngress(ingress);
    const out: { runId: string; active: boolean; snapshot: RunSnapshot }[] = [];
    for (const runId of await listRuns(admin ?? adminNextTo(ingress))) {
      const run = await fetchRun(ingress, runId);
      if (run) out.push({ runId, active: run.finish === undefined, snapshot: snapshotOf(run) });
    }
    return out.sort((a, b) => Number(b.snapshot.startedAt) - Number(a.snapshot.startedAt));
  } catch (e) {
    throw cliErrorOf(e);
  }
}

/** Events after `after` from the run's durable record, and whether it has ended. */
export async function remoteEvents(
  ingress: string,
  runId: string,
  after: number,
): Promise<{
  events: readonly { seq: number; type: string; time: number; data: unknown }[];
  ended: boolean;
}> {
  try {
    const { fetchRun } = await restate();
    const run = await fetchRun(ingress, runId, { after });
    if (!run) throw notFound(runId, ingress);
    return { events: run.events, ended: run.finish !== undefined };
  } catch (e) {
    throw cliErrorOf(e);
  }
}

/**
 * Records a finished Restate run in this directory's store from its durable record (the
 * submitter's own history). A run the store already holds (a worker here recorded it) is left
 * as it is. Resolves whether it recorded it.
 */
export async function recordRemoteRun(
  store: RunStore,
  ingress: string,
  runId: string,
): Promise<boolean> {
  const shown = await store.show(runId);
  if (shown.ok) return false;
  const { fetchRun } = await restate();
  const run = await fetchRun(ingress, runId);
  if (!run?.finish) return false;
  await store.begin(run.start);
  for (const event of run.events) store.event(event);
  await store.finish(runId, run.finish);
  return true;
}

/** `wf delete-run --restate`: an ended run's journal, record and the answers only it stored. */
export async function deleteRemoteRun(
  ingress: string,
  admin: string | undefined,
  runId: string,
): Promise<number> {
  try {
    const { deleteRun, probeIngress } = await restate();
    await probeIngress(ingress);
    const out = await deleteRun(ingress, admin ?? adminNextTo(ingress), runId);
    if (out.deleted) return out.blobsReleased;
    if (out.reason === 'active')
      throw new CliError(
        'WF_CLI_RUN_ACTIVE',
        `run ${runId} has not ended: an active run is never deleted`,
        {
          hint: `wait for it to end, or stop it: wf stop ${runId} --restate ${ingress}`,
        },
      );
    throw notFound(runId, ingress);
  } catch (e) {
    throw cliErrorOf(e);
  }
}
