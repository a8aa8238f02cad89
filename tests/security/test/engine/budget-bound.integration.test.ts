// Hostile workflows against the token budget and the agent count (invariant 6), through the real
// sandbox, with the source contract and with it bypassed: each workflow below overran its budget
// before (long prompts 7.5x, a large wf.synthesize input 11x, repair children 1.8x, nested runs
// 7.5x, a looping child 810x) or ran more children than its maxAgents from parallel nested runs.
// A run now spends at most its budget plus one model call per running child, and nested runs
// draw from their parent's maxAgents as each child starts.
import {
  createEngine,
  createSimulatedAgents,
  type RunDone,
  type SimulatedResponse,
} from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
});
afterAll(async () => {
  await sandbox.close();
});

const manifest = (o: Record<string, unknown> = {}) => ({
  name: 'budget-attack',
  description: 'A workflow written to spend more than its budget.',
  phases: ['attack'],
  readOnly: true,
  maxAgents: 50,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
  ...o,
});

const INNER = `async function run(wf, args) {
  const big = args.big ? 'x'.repeat(600000) : '';
  return wf.parallel(Array.from({ length: args.n }, (_, i) => () =>
    wf.runAgent({ name: 'n' + i, prompt: (args.loop ? 'LOOP ' : 'look ') + big + i })));
}`;

async function attack(
  body: string,
  budget: number | undefined,
  checker: boolean,
  o: {
    maxAgents?: number;
    respond?: (r: { prompt: string; kind: string }) => SimulatedResponse | undefined;
  } = {},
): Promise<{ done: RunDone; started: number }> {
  const agents = createSimulatedAgents({
    respond: (r) =>
      o.respond?.(r) ??
      (r.prompt.startsWith('LOOP')
        ? { calls: 200, usage: { inputTokens: 4_000, outputTokens: 50 } }
        : undefined),
  });
  const engine = createEngine({
    agents,
    sandbox,
    ...(checker ? {} : { checkSource: false as const }),
    ...(budget === undefined ? {} : { limits: { tokenBudget: budget } }),
    resolveWorkflow: async (name) =>
      name === 'inner' ? { manifest: manifest({ name: 'inner' }), source: INNER } : undefined,
  });
  const handle = await engine.start({
    workflow: {
      manifest: manifest(o.maxAgents ? { maxAgents: o.maxAgents } : {}),
      source: `async function run(wf, args) {\n${body}\n}`,
    },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  await engine.close();
  return { done, started: agents.stats().started };
}

const both = [true, false].map((checker) => ({
  checker,
  label: checker ? 'with checker' : 'checker bypassed',
}));

/**
 * Each attack, its budget, and its bound: the largest single model call it can make and how many
 * children can run at once (the overrun is at most one such call per running child).
 */
const ATTACKS = [
  {
    name: 'eight 600,000-character prompts',
    budget: 20_000,
    perCall: 0,
    running: 0,
    body: `const big = 'x'.repeat(600000);
      return wf.parallel([1, 2, 3, 4, 5, 6, 7, 8].map((i) => () => wf.runAgent({ name: 'c' + i, prompt: big + i })));`,
  },
  {
    name: 'a 900 KB wf.synthesize input',
    budget: 20_000,
    perCall: 60,
    running: 1,
    body: `await wf.runAgent({ name: 'one', prompt: 'p' });
      const inputs = []; for (let i = 0; i < 18; i++) inputs.push('y'.repeat(50000) + i);
      return wf.synthesize({ inputs, rubric: 'merge' });`,
  },
  {
    name: 'repair children with 20 KB invalid answers',
    budget: 30_000,
    perCall: 5_200,
    running: 4,
    respond: (r: { kind: string }) =>
      r.kind === 'repair' ? undefined : { text: 'z'.repeat(20_000), structured: {} },
    body: `const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
      return wf.parallel([1, 2, 3, 4].map((i) => () => wf.runAgent({ name: 'c' + i, prompt: 'p' + i, outputSchema: schema, maxTokens: 2000 })));`,
  },
  {
    name: 'a nested run of long prompts',
    budget: 20_000,
    perCall: 0,
    running: 0,
    body: `return wf.workflow('inner', { n: 4, big: true });`,
  },
  {
    name: 'a looping child in a minimal workflow',
    budget: 1_000,
    perCall: 4_050,
    running: 1,
    body: `const a = await wf.runAgent({ name: 'loop', prompt: 'LOOP' }); return a.status;`,
  },
  {
    name: 'four nested runs of two looping children each',
    budget: 20_000,
    perCall: 4_050,
    running: 8,
    body: `return wf.parallel([1, 2, 3, 4].map(() => () => wf.workflow('inner', { n: 2, loop: true })));`,
  },
];

describe.each(both)('the budget and the agent count hold ($label)', ({ checker }) => {
  it.each(ATTACKS)('$name: failed within budget + one call per running child', async (a) => {
    const { done } = await attack(a.body, a.budget, checker, {
      ...(a.respond ? { respond: a.respond } : {}),
    });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    const spent = done.cost.tokenUsage.totalTokens;
    expect(spent, `spent ${spent} of ${a.budget}`).toBeLessThanOrEqual(
      a.budget + a.perCall * a.running,
    );
  });

  it('twelve nested runs started at once draw from the parent maxAgents as each child starts', async () => {
    const { done, started } = await attack(
      `return wf.parallel(Array.from({ length: 12 }, () => () => wf.workflow('inner', { n: 6 })));`,
      undefined,
      checker,
      { maxAgents: 16 },
    );
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_AGENT_LIMIT' } });
    expect(started).toBeLessThanOrEqual(16);
  });
});
