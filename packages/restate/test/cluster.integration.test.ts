// Two worker processes behind one balancer address, deployment concurrency 2:
// the WfSemaphore cap holds across both workers (counted from the agents' side), and a run
// survives a SIGKILL of the Restate server mid-run (restarted on the same data dir) with the
// uninterrupted result and no completed child started again.
import { expect, it } from 'vitest';
import { awaitRun, submitRun } from '../src/index.js';
import { useCluster } from './helpers/cluster.js';
import { logLines, readAgentLog } from './helpers/counted-agents.js';
import { FLOW_CHILDREN, flowStart, referenceRun } from './helpers/flow.js';

const CAP = 2;
const c = useCluster('wf-restate-cluster-', 200, CAP);

it('the deployment-wide cap holds across two workers', async () => {
  const runIds = ['cap-a', 'cap-b', 'cap-c'];
  // 3 runs x 3 concurrent reviews each: 9 children want to run at once, the cap is 2.
  await Promise.all(runIds.map((id, i) => submitRun(c.server.ingress, flowStart(id, i))));
  const dones = await Promise.all(runIds.map((id) => awaitRun(c.server.ingress, id)));
  for (const d of dones) expect(d.status, JSON.stringify(d.error)).toBe('completed');
  const counted = readAgentLog(c.log);
  const capRuns = [...counted.started.keys()].filter((k) => k.startsWith('cap-'));
  expect(capRuns.length).toBe(3 * FLOW_CHILDREN);
  expect(counted.peak).toBeLessThanOrEqual(CAP);
  expect(counted.peak).toBe(CAP);
  // both workers ran children
  const pids = new Set(
    logLines(c.log)
      .filter((l) => l.kind === 'start')
      .map((l) => l.pid),
  );
  expect(pids.size).toBe(2);
}, 120_000);

it('a run survives a SIGKILL of the server mid-run', async () => {
  const runId = 'server-restart';
  const reference = await referenceRun(c.sandbox, runId, 5);
  await submitRun(c.server.ingress, flowStart(runId, 5));
  const mine = (kind: string) =>
    logLines(c.log).filter((l) => l.kind === kind && l.key.startsWith(`${runId}/`));
  const deadline = Date.now() + 60_000;
  while (mine('end').length < 3) {
    if (Date.now() > deadline) throw new Error('the run did not progress');
    await new Promise((r) => setTimeout(r, 10));
  }
  // A child's result reaches the server's disk shortly after it ends: one that ended just before
  // a server crash may run again (measured below). One that ended a second before must not.
  await new Promise((r) => setTimeout(r, 1_200));
  await c.server.kill();
  const killedAt = Date.now();
  const completed = mine('end')
    .filter((l) => l.at <= killedAt - 1_000)
    .map((l) => l.key);
  expect(completed.length).toBeGreaterThanOrEqual(3);
  await c.server.restart();
  const back = Date.now() - killedAt;
  const done = await awaitRun(c.server.ingress, runId);
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
  const rerun = [...new Set(mine('start').map((l) => l.key))].filter(
    (k) => mine('start').filter((l) => l.key === k).length > 1,
  );
  const starts = new Map<string, number>();
  for (const l of mine('start')) starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
  for (const key of completed) expect(starts.get(key), `${key} completed before the kill`).toBe(1);
  expect(new Set(mine('end').map((l) => l.key)).size).toBe(FLOW_CHILDREN);
  process.stdout.write(
    `server restart: healthy ${back} ms after the kill, run completed ${Date.now() - killedAt} ms after it; children started twice: ${rerun.length} (${rerun.join(', ')})\n`,
  );
}, 180_000);

it('with a token budget (kept in the tree WfAllowance), a run survives a SIGKILL of the server', async () => {
  // The server's loss ends the attempt on a live worker: its engine halts, and that halt must not
  // close the tree's allowance (only the run's final end does), or the retried attempt would be
  // refused every child. Its reservations for the same children are the same entries.
  const runId = 'server-restart-budget';
  const reference = await referenceRun(c.sandbox, runId, 9);
  const start = flowStart(runId, 9);
  await submitRun(c.server.ingress, {
    ...start,
    workflow: {
      ...start.workflow,
      manifest: { ...start.workflow.manifest, tokenBudget: 1_000_000 },
    },
  });
  const ended = () =>
    logLines(c.log).filter((l) => l.kind === 'end' && l.key.startsWith(`${runId}/`)).length;
  const deadline = Date.now() + 60_000;
  while (ended() < 3) {
    if (Date.now() > deadline) throw new Error('the run did not progress');
    await new Promise((r) => setTimeout(r, 10));
  }
  // As the test above: a child that ended just before the crash may run again; wait a second.
  await new Promise((r) => setTimeout(r, 1_200));
  await c.server.kill();
  await c.server.restart();
  const done = await awaitRun(c.server.ingress, runId);
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
}, 180_000);
