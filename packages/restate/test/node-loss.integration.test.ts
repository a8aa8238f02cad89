// Losing a server node: Restate as a three-node cluster on 127.0.0.1 (replicated log and
// metadata, replication 2), one worker process, a run submitted to a node that does not lead the
// partition. The node leading the run's partition is SIGKILLed mid-run: the run completes on the
// remaining two with the uninterrupted result, and no child that had completed a second before
// the kill starts again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awaitRun, probeIngress, registerDeployment, submitRun } from '../src/index.js';
import { logLines } from './helpers/counted-agents.js';
import { FLOW_CHILDREN, flowStart, referenceRun } from './helpers/flow.js';
import { type RestateCluster, startRestateCluster } from './helpers/restate-cluster.js';
import { spawnWorker, type WorkerProcess } from './helpers/workers.js';

let cluster: RestateCluster;
let worker: WorkerProcess | undefined;
let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wf-restate-node-loss-'));
  cluster = await startRestateCluster(3);
  sandbox = await createSandbox({ poolSize: 1 });
}, 180_000);

afterAll(async () => {
  await worker?.kill('SIGTERM');
  await sandbox?.close();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

it('SIGKILL of the node leading the run partition mid-run: the run completes with its uninterrupted result', async () => {
  const leader = await cluster.leader();
  expect(leader).toBeDefined();
  const [near, far] = cluster.nodes.filter((n) => n !== leader);
  if (!near || !far) throw new Error('a cluster of three has two followers');
  const log = join(dir, 'agents.log');
  // The worker talks to one surviving node's ingress; the run is submitted through the other's.
  worker = await spawnWorker(near.ingress, log, 250, 16);
  await registerDeployment(near.admin, `http://127.0.0.1:${worker.port}`);
  // The registration reaches the other nodes' ingresses through the replicated metadata.
  const known = Date.now() + 30_000;
  for (;;) {
    const ok = await probeIngress(far.ingress, { needWorker: true }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (Date.now() > known) throw new Error(`${far.name} never learnt of the worker`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const runId = 'node-loss';
  const reference = await referenceRun(sandbox, runId, 11);
  await submitRun(far.ingress, flowStart(runId, 11));
  const ended = () =>
    logLines(log).filter((l) => l.kind === 'end' && l.key.startsWith(`${runId}/`));
  const deadline = Date.now() + 60_000;
  while (ended().length < 4) {
    if (Date.now() > deadline) throw new Error(`4 children did not end: ${worker.output()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await (leader as NonNullable<typeof leader>).kill();
  const killedAt = Date.now();
  const completed = ended()
    .filter((l) => l.at <= killedAt - 1_000)
    .map((l) => l.key);

  const done = await awaitRun(far.ingress, runId);
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
  // Another node leads the partition now.
  expect(await cluster.leader()).not.toBe(leader);
  const starts = new Map<string, number>();
  for (const l of logLines(log).filter((x) => x.kind === 'start' && x.key.startsWith(`${runId}/`)))
    starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
  for (const key of completed) expect(starts.get(key), `${key} completed before the kill`).toBe(1);
  expect(new Set(ended().map((l) => l.key)).size).toBe(FLOW_CHILDREN);
  process.stdout.write(
    `node loss: run completed ${Date.now() - killedAt} ms after SIGKILL of ${leader?.name}, the partition leader\n`,
  );
}, 180_000);
