// Failover: two worker processes behind one balancer address; the worker executing a
// run is SIGKILLed at five points (before any child finished, during the parallel reviews,
// during the verifications, before the synthesis, right after the last child ended but before the
// run's result was recorded). The other worker completes the run with the
// uninterrupted result, and no child that had completed before the kill starts again (counted
// from the agents' side, across processes).
import { afterAll, expect, it } from 'vitest';
import { awaitRun, submitRun } from '../src/index.js';
import { replaceWorker, useCluster } from './helpers/cluster.js';
import { logLines } from './helpers/counted-agents.js';
import { FLOW_CHILDREN, flowStart, referenceRun } from './helpers/flow.js';

const DELAY_MS = 250;
const c = useCluster('wf-restate-failover-', DELAY_MS, 16);

async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const failoverMs: number[] = [];

/** `completed` once the WfRun invocation has its output, else `running` (Restate answers 470). */
async function runStatus(runId: string): Promise<'completed' | 'running'> {
  const res = await fetch(`${c.server.ingress}/restate/workflow/WfRun/${runId}/output`);
  await res.arrayBuffer();
  return res.status === 200 ? 'completed' : 'running';
}

it.each([
  ['before any child finished', 0],
  ['during the parallel reviews', 3],
  ['during the verifications', 8],
  ['before the synthesis', 12],
  // The synthesis (the last child) just ended: its answer is on its way to the journal and the
  // run's result is not recorded yet. The continued run must not run the 12 others again.
  ['after the last child ended, before the result was recorded', FLOW_CHILDREN],
])(
  'SIGKILL of the executing worker %s: the other completes it',
  async (_label, endsBeforeKill) => {
    const runId = `failover-${endsBeforeKill}`;
    const seed = 77 + endsBeforeKill;
    const reference = await referenceRun(c.sandbox, runId, seed);
    expect(reference.status).toBe('completed');

    await submitRun(c.server.ingress, flowStart(runId, seed));
    const mine = (kind: string) =>
      logLines(c.log).filter((l) => l.kind === kind && l.key.startsWith(`${runId}/`));
    await until('the run to begin', () =>
      logLines(c.log).some((l) => l.kind === 'begin' && l.key === runId),
    );
    await until(`${endsBeforeKill} children to end`, () => mine('end').length >= endsBeforeKill);
    const executing = logLines(c.log)
      .filter((l) => l.kind === 'begin' && l.key === runId)
      .at(-1)?.pid;
    const victim = c.workers.find((w) => String(w.pid) === executing);
    expect(victim, `worker ${executing} executes ${runId}`).toBeDefined();
    await victim?.kill('SIGKILL');
    const killedAt = Date.now();
    // The kill must have come before the run ended, or this case tests nothing.
    expect(await runStatus(runId), 'the run was still going at the kill').not.toBe('completed');
    // Completed = its end was logged at least 100 ms before the kill (its result had left the
    // process); a child still in flight on the killed worker may run again (at-least-once).
    const completed = mine('end')
      .filter((l) => l.at <= killedAt - 100)
      .map((l) => l.key);

    // Keep two workers: a replacement joins behind the same address.
    await replaceWorker(c, victim, DELAY_MS);

    const done = await awaitRun(c.server.ingress, runId);
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
    // the probe used at the kill does see a finished run
    expect(await runStatus(runId)).toBe('completed');

    const begins = logLines(c.log).filter((l) => l.kind === 'begin' && l.key === runId);
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
      `failover: continued on another worker after ${failoverMs.join(', ')} ms (min-max ${Math.min(...failoverMs)}-${Math.max(...failoverMs)} ms)\n`,
    );
});
