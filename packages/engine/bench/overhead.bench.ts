// Engine overhead per agent: 1,000 simulated instant agents at concurrency 8, against a plain
// promise pool driving the same provider with the same fan-out, measured side by side in this
// run. Prints medians (µs/agent) and ratios; the target is < 100 µs/agent of engine overhead.
import { calibration } from '@wf/bench';
import { createGuestPrelude, HOST_CALLS } from '@wf/bridge';
import { createSandbox } from '@wf/sandbox';
import {
  type AgentRequest,
  createEngine,
  createSimulatedAgents,
  type HostWorkflowApi,
} from '../src/index.js';

await calibration();

const AGENTS = 1000;
const CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const manifest = {
  name: 'overhead-bench',
  description: 'Fan out 1,000 instant simulated agents.',
  phases: ['fan-out'],
  readOnly: false,
  maxAgents: AGENTS,
  maxConcurrency: CONCURRENCY,
  patterns: ['fan-out-and-synthesize'],
};

async function baseline(): Promise<number> {
  const agents = createSimulatedAgents();
  const signal = new AbortController().signal;
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < AGENTS) {
      const i = next++;
      const request: AgentRequest = {
        runId: 'bench',
        taskId: `task-${i + 1}`,
        kind: 'task',
        name: `a${i}`,
        prompt: 'p',
        readOnly: false,
      };
      const handle = await agents.start(request, signal);
      await handle.result;
      await handle.dispose();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return performance.now() - t0;
}

async function engineLocal(): Promise<number> {
  const engine = createEngine({
    agents: createSimulatedAgents(),
    limits: { maxAgents: AGENTS, maxConcurrency: CONCURRENCY },
  });
  const t0 = performance.now();
  const handle = await engine.start({
    workflow: {
      manifest,
      run: (wf: HostWorkflowApi) =>
        wf.parallel(
          Array.from(
            { length: AGENTS },
            (_, i) => () => wf.runAgent({ name: `a${i}`, prompt: 'p' }),
          ),
          { concurrency: CONCURRENCY },
        ),
    },
    trust: 'trusted-local',
  });
  const done = await handle.done;
  const ms = performance.now() - t0;
  if (done.status !== 'completed' || done.cost.agentsCompleted !== AGENTS)
    throw new Error(`bench run ${done.status}: ${done.error?.message}`);
  return ms;
}

const SOURCE = `async function run(wf, args) {
  const thunks = [];
  for (let i = 0; i < args.n; i += 1) thunks.push(() => wf.runAgent({ name: 'a' + i, prompt: 'p' }));
  const out = await wf.parallel(thunks, { concurrency: args.c });
  return out.length;
}`;

async function engineSandboxed(
  sandbox: Awaited<ReturnType<typeof createSandbox>>,
): Promise<number> {
  const engine = createEngine({
    agents: createSimulatedAgents(),
    sandbox,
    limits: { maxAgents: AGENTS, maxConcurrency: CONCURRENCY },
  });
  const t0 = performance.now();
  const handle = await engine.start({
    workflow: { manifest, source: SOURCE },
    args: { n: AGENTS, c: CONCURRENCY },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  const ms = performance.now() - t0;
  if (done.status !== 'completed' || done.cost.agentsCompleted !== AGENTS)
    throw new Error(`bench run ${done.status}: ${done.error?.message}`);
  return ms;
}

/** The same guest through the same sandbox and prelude, answered by a trivial host (no engine). */
async function sandboxOnly(sandbox: Awaited<ReturnType<typeof createSandbox>>): Promise<number> {
  const result = {
    taskId: 'task-1',
    name: 'a',
    kind: 'task',
    status: 'completed',
    finalText: 'a: simulated task result',
    text: 'a: simulated task result',
    provider: 'simulated',
    startedAt: 0,
    endedAt: 0,
    durationMs: 0,
    usage: { inputTokens: 11, outputTokens: 12, cacheReadTokens: 0, totalTokens: 23 },
    origin: 'executed',
  };
  const envelope = { value: result, state: { spent: 0, reserved: 0, agents: 0 } };
  const t0 = performance.now();
  const out = await sandbox.run({
    source: SOURCE,
    args: { n: AGENTS, c: CONCURRENCY },
    prelude: createGuestPrelude({
      runId: 'bench',
      args: { n: AGENTS, c: CONCURRENCY },
      budgetTotal: null,
    }),
    capabilities: Object.fromEntries(HOST_CALLS.map((m) => [m, async () => envelope])),
    limits: { maxOutstandingCalls: 2064, wallMs: 600_000 },
  });
  const ms = performance.now() - t0;
  if (out.status !== 'completed') throw new Error(`sandbox-only run ${out.status}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const sandbox = await createSandbox({ poolSize: 1 });
const samples = {
  baseline: [] as number[],
  local: [] as number[],
  sandboxed: [] as number[],
  sandboxOnly: [] as number[],
};
// warm-up (JIT, worker, WASM module)
await baseline();
await engineLocal();
await engineSandboxed(sandbox);
await sandboxOnly(sandbox);
for (let r = 0; r < ROUNDS; r += 1) {
  samples.baseline.push(await baseline());
  samples.local.push(await engineLocal());
  samples.sandboxed.push(await engineSandboxed(sandbox));
  samples.sandboxOnly.push(await sandboxOnly(sandbox));
}
await sandbox.close();

const b = median(samples.baseline);
const l = median(samples.local);
const s = median(samples.sandboxed);
const q = median(samples.sandboxOnly);
const perAgent = (ms: number) => (ms * 1000) / AGENTS;
const row = (label: string, ms: number, base: number, baseName: string) =>
  [
    label.padEnd(40),
    `${ms.toFixed(1).padStart(8)} ms`,
    `${perAgent(ms).toFixed(1).padStart(7)} µs/agent`,
    `${(ms / base).toFixed(2).padStart(6)}x ${baseName}`,
    `overhead ${perAgent(ms - base)
      .toFixed(1)
      .padStart(6)} µs/agent`,
  ].join('  ');
console.log(
  `engine overhead: ${AGENTS} instant simulated agents, concurrency ${CONCURRENCY}, median of ${ROUNDS} rounds`,
);
console.log(row('baseline A: plain promise pool', b, b, 'A'));
console.log(row('engine, trusted-local host wf', l, b, 'A'));
console.log(row('baseline B: sandbox + prelude, no engine', q, q, 'B'));
console.log(row('engine, QuickJS sandbox + prelude', s, q, 'B'));
const target = 100;
const local = perAgent(l - b);
const boxed = perAgent(s - q);
console.log(
  `engine overhead target < ${target} µs/agent: trusted-local ${local.toFixed(1)} (${local < target ? 'met' : 'MISSED'}), sandboxed ${boxed.toFixed(1)} (${boxed < target ? 'met' : 'MISSED'})`,
);
