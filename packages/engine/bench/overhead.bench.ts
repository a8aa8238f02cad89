// Engine overhead per agent: 1,000 simulated agents at concurrency 8, each answering after
// DELAY_MS so that eight really overlap (every run checks the provider saw peak 8 at once),
// against the honest floor: a plain promise pool driving the same provider with the same fan-out,
// measured side by side in this run. The sandboxed engine is compared with that floor too (the
// sandbox is part of what a user pays); "sandbox + prelude with a trivial host" is printed as a
// breakdown only. Prints medians (µs/agent) and ratios; the target is < 100 µs/agent of overhead.
// The recorder here is the in-memory one (the engine may not import @wf/catalog-fs); the same
// workload on the disk run store users get is packages/catalog-fs/bench/engine-disk.bench.ts.
import { calibration } from '@wf/bench';
import { createGuestPrelude, HOST_CALLS } from '@wf/bridge';
import { createSandbox } from '@wf/sandbox';
import {
  type AgentRequest,
  createEngine,
  createSimulatedAgents,
  type HostWorkflowApi,
} from '@wf/engine';

await calibration();

const AGENTS = 1000;
const CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const DELAY_MS = 2;

/** The provider every variant uses; a run whose agents never overlapped measured nothing. */
function overlappingAgents() {
  const agents = createSimulatedAgents({ delayMs: DELAY_MS });
  return Object.assign(agents, {
    checkOverlap(label: string) {
      const { peakActive } = agents.stats();
      if (peakActive !== CONCURRENCY)
        throw new Error(`${label}: peak ${peakActive} agents at once, expected ${CONCURRENCY}`);
    },
  });
}

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
  const agents = overlappingAgents();
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
  const ms = performance.now() - t0;
  agents.checkOverlap('baseline');
  return ms;
}

async function engineLocal(): Promise<number> {
  const agents = overlappingAgents();
  const engine = createEngine({
    agents,
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
  agents.checkOverlap('engine');
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
  const agents = overlappingAgents();
  const engine = createEngine({
    agents,
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
  agents.checkOverlap('engine');
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
  `engine overhead: ${AGENTS} simulated agents of ${DELAY_MS} ms, ${CONCURRENCY} at once (checked), median of ${ROUNDS} rounds`,
);
console.log(row('floor A: plain promise pool', b, b, 'A'));
console.log(row('engine, trusted-local host wf', l, b, 'A'));
console.log(row('engine, QuickJS sandbox + prelude', s, b, 'A'));
console.log(row('breakdown: sandbox + prelude, trivial host', q, b, 'A'));
const target = 100;
const local = perAgent(l - b);
const boxed = perAgent(s - b);
console.log(
  `engine overhead target < ${target} µs/agent: trusted-local ${local.toFixed(1)} (${local < target ? 'met' : 'MISSED'}), sandboxed ${boxed.toFixed(1)} (${boxed < target ? 'met' : 'MISSED'})`,
);
