// Supervised restarts: a worker restarted in place (same port, same run store directory, as
// systemd or Kubernetes would restart it), or another worker sharing that directory, continues a
// run the killed worker had begun: its store recognises the run by id and recorded start and
// appends (it refused a second begin, and the run ended WF_CATALOG_RUN_EXISTS). The race both
// ways: the restarted worker is up before Restate's retry lands (one worker: the retry can only
// land there), and the retry lands first (on the other worker sharing the directory), then the
// killed worker comes back in place while the other runs it.
import { readFileSync } from 'node:fs';
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

const DELAY_MS = 200;
let server: RestateServer;
let balancer: Balancer;
let sandbox: Sandbox;
let dir: string;
let log: string;
let project: string;
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wf-restate-restart-'));
  log = join(dir, 'agents.log');
  project = join(dir, 'project');
  server = await startRestateServer();
  balancer = await startBalancer([]);
  sandbox = await createSandbox({ poolSize: 1 });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.kill('SIGTERM')));
  await balancer?.close();
  await sandbox?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const spawn = (port?: number) =>
  spawnWorker(server.ingress, log, DELAY_MS, 16, 1, 'source', {
    store: project,
    ...(port === undefined ? {} : { port }),
  });

async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ended = (runId: string) =>
  logLines(log).filter((l) => l.kind === 'end' && l.key.startsWith(`${runId}/`)).length;
const begins = (runId: string) =>
  logLines(log).filter((l) => l.kind === 'begin' && l.key === runId);

/** The run as the shared store recorded it: run.json and the event log. */
function recorded(runId: string) {
  const runDir = join(project, '.dsh', 'workflow-runs', runId);
  const snapshot = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
  const events = readFileSync(join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq: number; type: string; data?: { taskId?: string } });
  return { snapshot, events };
}

async function expectCompleted(runId: string, seed: number): Promise<void> {
  const reference = await referenceRun(sandbox, runId, seed);
  const done = await awaitRun(server.ingress, runId);
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
  // One record of the whole run: completed, its events numbered on from the first attempt's,
  // every child there once as completed (live or replayed).
  const { snapshot, events } = recorded(runId);
  expect(snapshot.status).toBe('completed');
  const seqs = events.map((e) => e.seq);
  const shown = events.map((e) => `${e.seq}:${e.type}:${e.data?.taskId ?? ''}`).join(' ');
  expect(seqs, shown).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(events.filter((e) => e.type === 'workflow-started').length).toBeGreaterThanOrEqual(2);
  const done13 = new Set(
    events
      .filter((e) => e.type === 'agent-completed' || e.type === 'cache-hit')
      .map((e) => e.data?.taskId),
  );
  expect(done13.size).toBe(FLOW_CHILDREN);
}

it('restarted in place before Restate retries: the same directory continues the run', async () => {
  const first = await spawn();
  workers = [first];
  balancer.setBackends([first.port]);
  await registerDeployment(server.admin, balancer.url);
  const runId = 'restart-before';
  await submitRun(server.ingress, flowStart(runId, 5));
  await until('4 children to end', () => ended(runId) >= 4);
  await first.kill('SIGKILL');
  // The supervisor restarts it on its port, with its directory: Restate's retry lands here.
  const again = await spawn(first.port);
  workers = [again];
  await expectCompleted(runId, 5);
  expect(begins(runId).at(-1)?.pid).toBe(String(again.pid));
}, 120_000);

it('the retry lands first on a worker sharing the directory, then the killed one returns in place', async () => {
  const pair = await Promise.all([spawn(), spawn()]);
  workers = pair;
  balancer.setBackends(pair.map((w) => w.port));
  const runId = 'restart-after';
  await submitRun(server.ingress, flowStart(runId, 6));
  await until('the run to begin', () => begins(runId).length > 0);
  await until('5 children to end', () => ended(runId) >= 5);
  const executing = begins(runId).at(-1)?.pid;
  const victim = pair.find((w) => String(w.pid) === executing) as WorkerProcess;
  const other = pair.find((w) => w !== victim) as WorkerProcess;
  await victim.kill('SIGKILL');
  balancer.setBackends([other.port]);
  await until('the other worker to continue the run', () =>
    begins(runId).some((b) => b.pid === String(other.pid)),
  );
  // Back in place while the other runs it: its store's recovery must leave that run alone.
  const back = await spawn(victim.port);
  workers = [other, back];
  balancer.setBackends([other.port, back.port]);
  await expectCompleted(runId, 6);
  expect(recorded(runId).snapshot.owner.pid).toBe(other.pid);
}, 120_000);
