// Failover (issue 15): two worker processes behind one balancer address; the worker executing a
// run is SIGKILLed at several points (before any child finished, during the parallel reviews,
// during the verifications, before the synthesis). The other worker completes the run with the
// uninterrupted result, and no child that had completed before the kill starts again (counted
// from the agents' side, across processes).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awaitRun, registerDeployment, submitRun } from '../src/index.js';
import { type Balancer, startBalancer } from './helpers/balancer.js';
import { logLines } from './helpers/counted-agents.js';
import { FLOW_CHILDREN, flowStart, referenceRun } from './helpers/flow.js';
import { type RestateServer, startRestateServer } from './helpers/server.js';
import { spawnWorker, type WorkerProcess } from './helpers/workers.js';

const DELAY_MS = 250;
let server: RestateServer;
let balancer: Balancer;
let sandbox: Sandbox;
let dir: string;
let log: string;
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wf-restate-failover-'));
  log = join(dir, 'agents.log');
  server = await startRestateServer();
  workers = await Promise.all([0, 1].map(() => spawnWorker(server.ingress, log, DELAY_MS, 16)));
  balancer = await startBalancer(workers.map((w) => w.port));
  await registerDeployment(server.admin, balancer.url);
  sandbox = await createSandbox({ poolSize: 1 });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.kill('SIGTERM')));
  await balancer?.close();
  await sandbox?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const failoverMs: number[] = [];

it.each([
  ['before any child finished', 0],
  ['during the parallel reviews', 3],
  ['during the verifications', 8],
  ['before the synthesis', 12],
])(
  'SIGKILL of the executing worker %s: the other completes it',
  async (_label, endsBeforeKill) => {
    const runId = `failover-${endsBeforeKill}`;
    const seed = 77 + endsBeforeKill;
    const reference = await referenceRun(sandbox, runId, seed);
    expect(reference.status).toBe('completed');

    await submitRun(server.ingress, flowStart(runId, seed));
    const mine = (kind: string) =>
      logLines(log).filter((l) => l.kind === kind && l.key.startsWith(`${runId}/`));
    await until('the run to begin', () =>
      logLines(log).some((l) => l.kind === 'begin' && l.key === runId),
    );
    await until(`${endsBeforeKill} children to end`, () => mine('end').length >= endsBeforeKill);
    const executing = logLines(log)
      .filter((l) => l.kind === 'begin' && l.key === runId)
      .at(-1)?.pid;
    const victim = workers.find((w) => String(w.pid) === executing);
    expect(victim, `worker ${executing} executes ${runId}`).toBeDefined();
    await victim?.kill('SIGKILL');
    const killedAt = Date.now();
    // Completed = its end was logged at least 100 ms before the kill (its result had left the
    // process); a child still in flight on the killed worker may run again (at-least-once).
    const completed = mine('end')
      .filter((l) => l.at <= killedAt - 100)
      .map((l) => l.key);

    // Keep two workers: a replacement joins behind the same address.
    const survivor = workers.filter((w) => w !== victim);
    const replacement = await spawnWorker(server.ingress, log, DELAY_MS, 16);
    workers = [...survivor, replacement];
    balancer.setBackends(workers.map((w) => w.port));

    const done = await awaitRun(server.ingress, runId);
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));

    const begins = logLines(log).filter((l) => l.kind === 'begin' && l.key === runId);
    const resumed = begins.find((l) => l.pid !== executing && l.at >= killedAt);
    expect(resumed, 'another worker continued the run').toBeDefined();
    failoverMs.push((resumed?.at ?? killedAt) - killedAt);

    const starts = new Map<string, number>();
    for (const l of mine('start')) starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
    for (const key of completed)
      expect(starts.get(key), `${key} completed before the kill`).toBe(1);
    const ended = new Set(mine('end').map((l) => l.key));
    expect(ended.size).toBe(FLOW_CHILDREN);
  },
  120_000,
);

afterAll(() => {
  if (failoverMs.length > 0)
    process.stdout.write(
      `failover: continued on another worker after ${failoverMs.join(', ')} ms\n`,
    );
});
