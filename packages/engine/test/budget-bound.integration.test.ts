// The token budget is a bound (invariant 6): a child reserves its known cost (prompt, inputs,
// output ceiling, counted with the provider's estimate) before it starts and is charged what it
// spends as it spends it; once the budget is reached nothing new starts and running children make
// no further model call. The overrun of a run is at most one model call per running child. Here:
// the meter's gate rule, looping children, and a provider that does not meter (real sandbox). The
// hostile workflows that overran before (long prompts, synthesize inputs, repairs, nested runs)
// are in tests/security/test/engine/budget-bound*.
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  type AgentHandle,
  type AgentMeter,
  type AgentProvider,
  type AgentRequest,
  type AgentResult,
  createEngine,
  createSimulatedAgents,
  type RunDone,
  type SimulatedResponse,
} from '../src/index.js';
import { manifest, shareSandbox } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

/** The largest single model call of a scenario, and how many children ran at once at most. */
interface Bound {
  readonly perCall: number;
  readonly running: number;
}

/** Spent tokens never exceed the budget by more than one model call per running child. */
function expectWithinBound(done: RunDone, budget: number, bound: Bound): void {
  const spent = done.cost.tokenUsage.totalTokens;
  expect(spent, `spent ${spent} of ${budget}`).toBeLessThanOrEqual(
    budget + bound.perCall * bound.running,
  );
}

async function run(
  source: string,
  budget: number,
  respond: (r: AgentRequest) => SimulatedResponse | undefined,
  options: { nested?: string; maxConcurrency?: number; agents?: AgentProvider } = {},
) {
  const agents = createSimulatedAgents({ respond });
  const engine = createEngine({
    agents: options.agents ?? agents,
    sandbox,
    limits: { tokenBudget: budget },
    resolveWorkflow: async (name) =>
      name === 'inner' && options.nested
        ? { manifest: manifest({ name: 'inner', maxConcurrency: 4 }), source: options.nested }
        : undefined,
  });
  const handle = await engine.start({
    workflow: {
      manifest: manifest({ maxAgents: 50, maxConcurrency: options.maxConcurrency ?? 4 }),
      source,
    },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  await engine.close();
  return { done, agents };
}

describe('the token budget is a bound', () => {
  it('a looping child is stopped at its next model call: one call over a budget of 1,000', async () => {
    const perCall = { inputTokens: 4_000, outputTokens: 50 };
    const { done, agents } = await run(
      `async function run(wf) { const a = await wf.runAgent({ name: 'loop', prompt: 'hi' }); return a.status; }`,
      1_000,
      () => ({ calls: 200, usage: perCall }),
    );
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    // its first call began within the budget; its usage, reported after it, stopped the run
    // before a second call was made
    expect(done.cost.tokenUsage.totalTokens).toBe(4_050);
    expect(agents.stats().started).toBe(1);
    expectWithinBound(done, 1_000, { perCall: 4_050, running: 1 });
  });

  it('four looping children at once: each makes at most one call past the budget', async () => {
    const budget = 20_000;
    const { done } = await run(
      `async function run(wf) {
        return wf.parallel([1, 2, 3, 4].map((i) => () => wf.runAgent({ name: 'loop' + i, prompt: 'go' }))); }`,
      budget,
      () => ({ calls: 200, delayMs: 400, usage: { inputTokens: 4_000, outputTokens: 50 } }),
    );
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    expectWithinBound(done, budget, { perCall: 4_050, running: 4 });
    expect(done.cost.tokenUsage.totalTokens).toBeGreaterThanOrEqual(budget);
  });

  it('a provider that ignores the meter is charged as its children end; the rest are stopped', async () => {
    // Unmetered, a child's spending is known when it ends: the first to end passes the budget
    // and the others, still running, are stopped then instead of running to their end.
    const unmetered = createSimulatedAgents({
      respond: (r) => ({
        delayMs: r.name === 'u1' ? 5 : 60_000,
        usage: { inputTokens: 10_000, outputTokens: 1_000 },
      }),
    });
    const provider: AgentProvider = {
      name: 'unmetered',
      capabilities: unmetered.capabilities,
      start: (request, signal) => unmetered.start(request, signal),
    };
    const { done } = await run(
      `async function run(wf) {
        return wf.parallel([1, 2, 3, 4].map((i) => () => wf.runAgent({ name: 'u' + i, prompt: 'p', maxTokens: 100 }))); }`,
      10_000,
      () => undefined,
      { agents: provider },
    );
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    expect(done.error?.message).toMatch(
      /over its token budget of 10000: its children were stopped/,
    );
    expect(unmetered.stats()).toMatchObject({ started: 4, completed: 4 });
    // u1's 11,000, and the input the stopped children had read
    expectWithinBound(done, 10_000, { perCall: 11_000, running: 4 });
  });

  it('the gate refuses a call at the budget only to a child that used its own reservation', async () => {
    // Two children: 'small' reserves 1,000 and spends 600 per call; 'big' reserves 8,000 (its
    // ceiling) and spends 2,000 per call. The budget is filled exactly by their reservations.
    let small: AgentMeter | undefined;
    let big: AgentMeter | undefined;
    const results = new Map<string, (r: AgentResult) => void>();
    const provider: AgentProvider = {
      name: 'scripted',
      capabilities: createSimulatedAgents().capabilities,
      estimateTokens: () => 0,
      async start(request, _signal, meter): Promise<AgentHandle> {
        if (request.name === 'small') small = meter;
        else big = meter;
        return {
          id: request.name,
          result: new Promise<AgentResult>((r) => results.set(request.name, r)),
          stop: () => results.get(request.name)?.({ status: 'stopped', text: '' }),
          dispose: () => {},
        };
      },
    };
    const engine = createEngine({ agents: provider, sandbox, limits: { tokenBudget: 9_000 } });
    const handle = await engine.start({
      workflow: {
        manifest: manifest({ maxConcurrency: 2 }),
        source: `async function run(wf) {
          return wf.parallel([wf.runAgent({ name: 'small', prompt: 's', maxTokens: 1000 }),
                              wf.runAgent({ name: 'big', prompt: 'b', maxTokens: 8000 })].map((p) => () => p)); }`,
      },
      trust: 'capability-generated',
    });
    await expect.poll(() => small !== undefined && big !== undefined).toBe(true);
    const u = (n: number) => ({ inputTokens: n, outputTokens: 0 });
    expect(await small?.beforeCall(u(0))).toBeUndefined();
    expect(await big?.beforeCall(u(0))).toBeUndefined();
    // small: 600 of its 1,000; big: 2,000 of its 8,000. Committed stays 9,000, both may go on.
    expect(await small?.beforeCall(u(600))).toBeUndefined();
    expect(await big?.beforeCall(u(2_000))).toBeUndefined();
    // small has now spent its whole 1,000: at the budget, it has nothing left for another call,
    // while big, at the same committed 9,000, still holds 6,000 of its own
    expect(await big?.beforeCall(u(2_000))).toBeUndefined();
    const refused = await small?.beforeCall(u(1_000));
    expect(refused).toMatchObject({ code: 'WF_ENGINE_BUDGET_EXCEEDED' });
    // the run failed and closed its allowance: big is refused too, and nothing new starts
    expect(await big?.beforeCall(u(4_000))).toMatchObject({ code: 'WF_ENGINE_BUDGET_EXCEEDED' });
    results.get('small')?.({
      status: 'failed',
      text: '',
      usage: u(1_000),
      ...(refused ? { error: refused } : {}),
    });
    results.get('big')?.({ status: 'stopped', text: '', usage: u(4_000) });
    const done = await handle.done;
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    await engine.close();
  });
});
