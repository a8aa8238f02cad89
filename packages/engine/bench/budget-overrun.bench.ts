// Tokens spent against the budget by hostile workflows (invariant 6: the budget is a bound of one
// model call per running child). Not a speed bench: each scenario runs once on the built engine
// and prints what it spent as a multiple of its budget, and whether that is within the stated
// bound. The same scenarios ran against the engine before the honest budget (bench/RESULTS.md).
// Looping children are a provider whose child makes 200 model calls of 4,050 tokens and asks the
// engine's meter before each when it is given one.
import {
  type AgentMeter,
  type AgentProvider,
  type AgentRequest,
  type AgentResult,
  type AgentUsage,
  createEngine,
  createSimulatedAgents,
  type SimulatedResponse,
} from '@wf/engine';

const manifest = (o: Record<string, unknown> = {}) => ({
  name: 'budget-probe',
  description: 'probe',
  phases: ['p'],
  readOnly: true,
  maxAgents: 50,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
  ...o,
});

interface Scenario {
  readonly budget: number;
  readonly source: string;
  /** The largest model call and the most children running at once: the stated bound. */
  readonly perCall: number;
  readonly running: number;
  readonly respond?: (r: AgentRequest) => SimulatedResponse | undefined;
  readonly nested?: string;
  readonly loop?: number;
}

const SCENARIOS: Record<string, Scenario> = {
  'long prompts (8 x 600k chars), budget 20,000': {
    budget: 20_000,
    perCall: 0,
    running: 0,
    source: `async function run(wf) {
      const big = 'x'.repeat(600000);
      const r = await wf.parallel([1,2,3,4,5,6,7,8].map((i) => () => wf.runAgent({ name: 'c' + i, prompt: big + i })));
      return r.length; }`,
  },
  'big synthesize input (900 KB), budget 20,000': {
    budget: 20_000,
    perCall: 60,
    running: 1,
    source: `async function run(wf) {
      await wf.runAgent({ name: 'one', prompt: 'p' });
      const inputs = []; for (let i = 0; i < 18; i++) inputs.push('y'.repeat(50000) + i);
      const s = await wf.synthesize({ inputs, rubric: 'merge' });
      return s.text.length; }`,
  },
  'repair children (8 invalid answers of 20k chars), budget 20,000': {
    budget: 20_000,
    perCall: 5_200,
    running: 4,
    respond: (r) =>
      r.kind === 'repair'
        ? undefined
        : r.outputSchema
          ? { text: 'z'.repeat(20000), structured: { wrong: true } }
          : undefined,
    source: `async function run(wf) {
      const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
      const r = await wf.parallel([1,2,3,4,5,6,7,8].map((i) => () => wf.runAgent({ name: 'c' + i, prompt: 'p' + i, outputSchema: schema, maxTokens: 2000 })));
      return r.length; }`,
  },
  'nested run of long prompts, budget 20,000': {
    budget: 20_000,
    perCall: 0,
    running: 0,
    nested: `async function run(wf) {
      const big = 'x'.repeat(600000);
      const r = await wf.parallel([1,2,3,4].map((i) => () => wf.runAgent({ name: 'n' + i, prompt: big + i })));
      return r.length; }`,
    source: `async function run(wf) { return wf.workflow('inner', {}); }`,
  },
  'a looping child (200 calls of 4,050 tokens), minimal workflow, budget 1,000': {
    budget: 1_000,
    perCall: 4_050,
    running: 1,
    loop: 200,
    source: `async function run(wf) {
      const a = await wf.runAgent({ name: 'loop', prompt: 'hi' });
      return a.status; }`,
  },
  'four looping children at once, budget 20,000': {
    budget: 20_000,
    perCall: 4_050,
    running: 4,
    loop: 200,
    source: `async function run(wf) {
      const r = await wf.parallel([1,2,3,4].map((i) => () => wf.runAgent({ name: 'loop' + i, prompt: 'go' })));
      return r.length; }`,
  },
};

/** Children that make `calls` model calls of 4,000 in + 50 out, one per ms, metered if asked. */
function loopingAgents(calls: number): AgentProvider {
  const base = createSimulatedAgents({});
  return {
    name: 'looping',
    capabilities: base.capabilities,
    async start(request, _signal, meter?: AgentMeter) {
      let stopped = false;
      let spent: AgentUsage = { inputTokens: 0, outputTokens: 0 };
      let resolve!: (r: AgentResult) => void;
      const result = new Promise<AgentResult>((r) => {
        resolve = r;
      });
      void (async () => {
        for (let i = 0; i < calls && !stopped; i += 1) {
          const refusal = meter ? await meter.beforeCall(spent) : undefined;
          if (refusal) {
            resolve({ status: 'failed', text: '', usage: spent, error: refusal });
            return;
          }
          await new Promise((r) => setTimeout(r, 1));
          spent = { inputTokens: spent.inputTokens + 4000, outputTokens: spent.outputTokens + 50 };
          meter?.report(spent);
        }
        resolve({ status: stopped ? 'stopped' : 'completed', text: 'done', usage: spent });
      })();
      return {
        id: `loop-${request.taskId}`,
        result,
        stop() {
          stopped = true;
        },
        dispose() {},
      };
    },
  };
}

for (const [name, s] of Object.entries(SCENARIOS)) {
  const agents = s.loop
    ? loopingAgents(s.loop)
    : createSimulatedAgents(s.respond ? { respond: s.respond } : {});
  const engine = createEngine({
    agents,
    limits: { tokenBudget: s.budget },
    resolveWorkflow: async (n) =>
      n === 'inner' && s.nested
        ? { manifest: manifest({ name: 'inner' }), source: s.nested }
        : undefined,
  });
  const handle = await engine.start({
    workflow: { manifest: manifest(), source: s.source },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  const spent = done.cost.tokenUsage.totalTokens;
  const bound = s.budget + s.perCall * s.running;
  process.stdout.write(
    `${name}: ${done.status}${done.error ? ` ${done.error.code}` : ''}; spent ${spent.toLocaleString('en')} = ${(spent / s.budget).toFixed(2)}x the budget; bound ${bound.toLocaleString('en')}: ${spent <= bound ? 'within' : 'EXCEEDED'}\n`,
  );
  await engine.close();
}
