// Nested `wf.workflow` on Restate: the nested run is its own WfRun invocation keyed
// from the parent run id and call number. Two worker processes behind one address; the worker
// executing the nested run, or the one executing the parent, is SIGKILLed during the nested run.
// The run completes with the embedded engine's result (byte-identical JSON), the parent
// re-attaches to the same nested run (one nested run id ever begun), and no child that had
// completed before the kill starts again, counted from the agents' side.
import { expect, it } from 'vitest';
import { awaitRun, submitRun } from '../src/index.js';
import { replaceWorker, useCluster } from './helpers/cluster.js';
import { type LogLine, logLines } from './helpers/counted-agents.js';
import { NESTED_CHILDREN, nestedReferenceRun, nestedStart } from './helpers/flow.js';

const DELAY_MS = 250;
const c = useCluster('wf-restate-nested-', DELAY_MS, 16);

async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const lines = (kind: string, test: (l: LogLine) => boolean) =>
  logLines(c.log).filter((l) => l.kind === kind && test(l));

it('a nested workflow runs as its own WfRun invocation, with the embedded result', async () => {
  const runId = 'nested-plain';
  const reference = await nestedReferenceRun(c.sandbox, runId, 5);
  expect(reference.status).toBe('completed');
  await submitRun(c.server.ingress, nestedStart(runId, 5));
  const done = await awaitRun(c.server.ingress, runId);
  expect(done.error).toBeUndefined();
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
  expect(done.cost.agentsStarted).toBe(reference.cost.agentsStarted);
  // its own run (begun in a worker's mirror under `<runId>.wf<call>-<hash>`), its own children
  const nested = [
    ...new Set(lines('begin', (l) => l.key.startsWith(`${runId}.wf`)).map((l) => l.key)),
  ];
  expect(nested).toHaveLength(1);
  expect(nested[0]).toMatch(new RegExp(`^${runId}\\.wf\\d+-[0-9a-f]{8}$`));
  expect(lines('start', (l) => l.key.startsWith(`${nested[0]}/`))).toHaveLength(
    NESTED_CHILDREN.nested,
  );
  expect(lines('start', (l) => l.key.startsWith(`${runId}/`))).toHaveLength(NESTED_CHILDREN.parent);
}, 120_000);

const failoverMs: number[] = [];

it.each([
  ['the nested run', 5],
  ['the parent', 2],
] as const)(
  'SIGKILL of the worker executing %s during the nested run: re-attached, nothing completed re-runs',
  async (whose, nestedEndsBeforeKill) => {
    const runId = `nested-kill-${whose === 'the parent' ? 'parent' : 'nested'}`;
    const seed = 11 + nestedEndsBeforeKill;
    const reference = await nestedReferenceRun(c.sandbox, runId, seed);
    expect(reference.status).toBe('completed');
    await submitRun(c.server.ingress, nestedStart(runId, seed));
    const nestedBegins = () => lines('begin', (l) => l.key.startsWith(`${runId}.wf`));
    await until('the nested run to begin', () => nestedBegins().length > 0);
    const nestedId = nestedBegins()[0]?.key as string;
    const nestedEnds = () => lines('end', (l) => l.key.startsWith(`${nestedId}/`));
    await until(
      `${nestedEndsBeforeKill} nested children to end`,
      () => nestedEnds().length >= nestedEndsBeforeKill,
    );
    // Children that ended at least 100 ms before the kill count as journaled (below): wait that
    // long, or an idle machine kills within 100 ms of the last awaited end and counts one short.
    await new Promise((r) => setTimeout(r, 150));
    const executing = (key: string) => lines('begin', (l) => l.key === key).at(-1)?.pid;
    const victimPid = whose === 'the parent' ? executing(runId) : executing(nestedId);
    const sameWorker = executing(runId) === executing(nestedId);
    const victim = c.workers.find((w) => String(w.pid) === victimPid);
    expect(victim, `worker ${victimPid} executes ${whose}`).toBeDefined();
    await victim?.kill('SIGKILL');
    const killedAt = Date.now();
    const completed = logLines(c.log)
      .filter(
        (l) =>
          l.kind === 'end' &&
          l.at <= killedAt - 100 &&
          (l.key.startsWith(`${runId}/`) || l.key.startsWith(`${nestedId}/`)),
      )
      .map((l) => l.key);
    expect(completed.length).toBeGreaterThanOrEqual(nestedEndsBeforeKill);

    await replaceWorker(c, victim, DELAY_MS);

    const done = await awaitRun(c.server.ingress, runId);
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    // (the cost is the last execution's, as for any continued run: not compared here)
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));

    // The continued parent attached to the same nested run: no other nested run id was begun.
    expect(new Set(nestedBegins().map((l) => l.key))).toEqual(new Set([nestedId]));
    const resumed = logLines(c.log).find(
      (l) =>
        l.kind === 'begin' &&
        (l.key === runId || l.key === nestedId) &&
        l.pid !== victimPid &&
        l.at >= killedAt,
    );
    expect(resumed, 'another worker continued').toBeDefined();
    failoverMs.push((resumed?.at ?? killedAt) - killedAt);

    const starts = new Map<string, number>();
    for (const l of logLines(c.log))
      if (l.kind === 'start') starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
    for (const key of completed)
      expect(starts.get(key), `${key} completed before the kill`).toBe(1);
    expect(new Set(nestedEnds().map((l) => l.key)).size).toBe(NESTED_CHILDREN.nested);
    process.stdout.write(
      `nested failover (${whose}, ${sameWorker ? 'one worker ran both' : 'parent and nested on different workers'}): continued after ${failoverMs.at(-1)} ms, ${completed.length} completed children not re-run\n`,
    );
  },
  120_000,
);
