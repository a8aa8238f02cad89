// One agent count and one token budget for a run tree on Restate (invariant 6), against the real
// server and one worker: nested runs draw from the parent's allowance (WfAllowance) as each child
// starts, so the same nesting workflow meets the same refusal on Restate as on the embedded
// engine; children running on a worker are charged as they spend and refused their next model
// call once the tree's budget is reached, so a run spends at most its budget plus one model call
// per running child.
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type RunDone,
  type SimulatedResponse,
} from '@wf/engine';
import { expect, it } from 'vitest';
import { ALLOWANCE_OBJECT, awaitRun, submitRun } from '../src/index.js';
import { useSingleWorker } from './helpers/single-worker.js';

/** What the worker's simulated children do, per test (by prompt marker). */
const respond = (r: { prompt: string }): SimulatedResponse | undefined =>
  r.prompt.startsWith('LOOP')
    ? { calls: 200, usage: { inputTokens: 4_000, outputTokens: 50 } }
    : undefined;
const agents = createSimulatedAgents({ seed: 3, respond });
const recorder = createMemoryRecorder();

const manifest = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  description: `allowance test ${name}`,
  phases: ['work'],
  readOnly: true,
  maxAgents: 50,
  maxConcurrency: 8,
  patterns: ['fan-out-and-synthesize'],
  ...over,
});

// A nested workflow of six children at once; `loops` makes each child loop (200 model calls).
const SIX = `async function run(wf, args) {
  const r = await wf.parallel([1, 2, 3, 4, 5, 6].slice(0, args.n).map((i) => () =>
    wf.runAgent({ name: 'c' + i, prompt: (args.loops ? 'LOOP ' : 'look ') + i, readOnly: true })));
  return r.filter(Boolean).length;
}`;
const resolveWorkflow = async (name: string) =>
  name === 'six'
    ? {
        manifest: manifest('six', {
          inputSchema: {
            type: 'object',
            properties: { n: { type: 'integer' }, loops: { type: 'boolean' } },
            required: ['n'],
            additionalProperties: false,
          },
        }),
        source: SIX,
      }
    : undefined;

const c = useSingleWorker({ agents, recorder, resolveWorkflow });

/** The same start on the embedded engine and on Restate. */
async function both(
  runId: string,
  source: string,
  m: Record<string, unknown>,
): Promise<{ local: RunDone; remote: RunDone; localStarted: number; remoteStarted: number }> {
  const localAgents = createSimulatedAgents({ seed: 3, respond });
  const embedded = createEngine({ agents: localAgents, sandbox: c.sandbox, resolveWorkflow });
  const local = await (
    await embedded.start({
      workflow: { manifest: m, source },
      trust: 'capability-generated',
      runId,
      seed: 7,
      startTime: 1_700_000_000_000,
    })
  ).done;
  await embedded.close();
  await submitRun(c.server.ingress, {
    runId,
    workflow: { manifest: m, source, name: String(m.name) },
    trust: 'capability-generated',
    seed: 7,
    startTime: 1_700_000_000_000,
  });
  const remote = await awaitRun(c.server.ingress, runId);
  const remoteStarted = agents.requests().filter((r) => r.runId.startsWith(runId)).length;
  return { local, remote, localStarted: localAgents.stats().started, remoteStarted };
}

/** The tree's ledger as WfAllowance holds it. */
async function ledger(root: string): Promise<{ spent: number; agents: number }> {
  const res = await fetch(
    `${c.server.ingress}/${ALLOWANCE_OBJECT}/${encodeURIComponent(root)}/state`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'null',
    },
  );
  return (await res.json()) as { spent: number; agents: number };
}

it('12 nested runs started at once share the parent maxAgents: the same refusal on both backends', async () => {
  const source = `async function run(wf) {
    const r = await wf.parallel(Array.from({ length: 12 }, () => () => wf.workflow('six', { n: 6 })));
    return r;
  }`;
  const { local, remote, localStarted, remoteStarted } = await both(
    'allowance-agents',
    source,
    manifest('twelve-nested', { maxAgents: 16 }),
  );
  expect(local).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_AGENT_LIMIT' } });
  expect(remote).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_AGENT_LIMIT' } });
  expect(localStarted).toBeLessThanOrEqual(16);
  // counted from the worker's agents: no more children than the parent's maxAgents ever started
  expect(remoteStarted).toBeLessThanOrEqual(16);
  expect((await ledger('allowance-agents')).agents).toBeLessThanOrEqual(16);
}, 180_000);

it('a looping child on a worker is refused its next model call: one call over a budget of 1,000', async () => {
  const source = `async function run(wf) {
    const a = await wf.runAgent({ name: 'loop', prompt: 'LOOP alone', readOnly: true });
    return a.status;
  }`;
  const { local, remote } = await both(
    'allowance-loop',
    source,
    manifest('loop', { tokenBudget: 1_000, maxConcurrency: 1 }),
  );
  for (const done of [local, remote]) {
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    expect(done.cost.tokenUsage.totalTokens).toBeLessThanOrEqual(1_000 + 4_050);
  }
  expect((await ledger('allowance-loop')).spent).toBeLessThanOrEqual(1_000 + 4_050);
  // the run records say its tokens were counted on simulated agents, none spent
  expect(recorder.get('allowance-loop')?.start).toMatchObject({
    provider: 'restate:simulated',
    simulated: true,
  });
}, 120_000);

it('nested runs in parallel share the budget: the tree spends at most one call over per running child', async () => {
  // 4 nested runs x 2 looping children: 8 children at most running, each call 4,050 tokens.
  const source = `async function run(wf) {
    return wf.parallel([1, 2, 3, 4].map(() => () => wf.workflow('six', { n: 2, loops: true })));
  }`;
  const budget = 20_000;
  const { local, remote } = await both(
    'allowance-tree',
    source,
    manifest('four-nested', { tokenBudget: budget }),
  );
  for (const done of [local, remote]) {
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
  }
  expect(local.cost.tokenUsage.totalTokens).toBeLessThanOrEqual(budget + 8 * 4_050);
  // On Restate the nested runs' children report to their own runs: the tree's ledger has them all.
  expect((await ledger('allowance-tree')).spent).toBeLessThanOrEqual(budget + 8 * 4_050);
}, 180_000);
