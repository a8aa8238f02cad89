// Engine runs recorded on the disk run store users get (openRunStore: events.jsonl, journal.jsonl,
// coalesced run.json, the runs index), against the in-memory recorder and against the honest floor
// (a plain promise pool driving the same provider), side by side in this run. 1,000 simulated
// agents of DELAY_MS each, 8 at once: every run checks that the provider really saw 8 overlap.
// Lives here, not in packages/engine/bench: the engine may not depend on @wf/catalog-fs.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibration } from '@wf/bench';
import {
  type AgentRequest,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
} from '@wf/engine';
import { openRunStore } from '@wf/catalog-fs';

await calibration();

const AGENTS = 1000;
const CONCURRENCY = 8;
const DELAY_MS = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const manifest = {
  name: 'disk-bench',
  description: 'Fan out 1,000 simulated agents, 8 at once.',
  phases: ['fan-out'],
  readOnly: false,
  maxAgents: AGENTS,
  maxConcurrency: CONCURRENCY,
  patterns: ['fan-out-and-synthesize'],
};
const SOURCE = `async function run(wf, args) {
  const thunks = [];
  for (let i = 0; i < args.n; i += 1) thunks.push(() => wf.runAgent({ name: 'a' + i, prompt: 'p' }));
  const out = await wf.parallel(thunks, { concurrency: args.c });
  return out.length;
}`;

function agents(label: string) {
  const a = createSimulatedAgents({ delayMs: DELAY_MS });
  return Object.assign(a, {
    check() {
      const peak = a.stats().peakActive;
      if (peak !== CONCURRENCY)
        throw new Error(`${label}: peak ${peak} at once, not ${CONCURRENCY}`);
    },
  });
}

async function floor(): Promise<number> {
  const provider = agents('floor');
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
      const handle = await provider.start(request, signal);
      await handle.result;
      await handle.dispose();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const ms = performance.now() - t0;
  provider.check();
  return ms;
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-bench-engine-disk-')));
const store = await openRunStore({ project: root });

const engines: { close(): Promise<void> }[] = [];

/** One engine per variant, reused across rounds: its sandbox pool stays warm, as in a session. */
function engineVariant(recorder: 'memory' | 'disk', sandboxed: boolean): () => Promise<number> {
  const provider = agents(`${recorder}${sandboxed ? ' sandboxed' : ''}`);
  const engine = createEngine({
    agents: provider,
    recorder: recorder === 'disk' ? store : createMemoryRecorder(),
    limits: { maxAgents: AGENTS, maxConcurrency: CONCURRENCY },
  });
  engines.push(engine);
  return () => engineRun(engine, provider, sandboxed);
}

async function engineRun(
  engine: ReturnType<typeof createEngine>,
  provider: ReturnType<typeof agents>,
  sandboxed: boolean,
): Promise<number> {
  const t0 = performance.now();
  const handle = await engine.start(
    sandboxed
      ? {
          workflow: { manifest, source: SOURCE },
          args: { n: AGENTS, c: CONCURRENCY },
          trust: 'capability-generated',
        }
      : {
          workflow: {
            manifest,
            run: (wf: {
              parallel(t: (() => Promise<unknown>)[], o: object): Promise<unknown>;
              runAgent(r: object): Promise<unknown>;
            }) =>
              wf.parallel(
                Array.from(
                  { length: AGENTS },
                  (_, i) => () => wf.runAgent({ name: `a${i}`, prompt: 'p' }),
                ),
                { concurrency: CONCURRENCY },
              ),
          } as never,
          trust: 'trusted-local',
        },
  );
  const done = await handle.done;
  const ms = performance.now() - t0;
  if (done.status !== 'completed' || done.cost.agentsCompleted !== AGENTS)
    throw new Error(`bench run ${done.status}: ${done.error?.message}`);
  provider.check();
  return ms;
}

const variants: [string, () => Promise<number>][] = [
  ['floor: plain promise pool', floor],
  ['engine trusted-local, memory recorder', engineVariant('memory', false)],
  ['engine trusted-local, disk run store', engineVariant('disk', false)],
  ['engine sandboxed, memory recorder', engineVariant('memory', true)],
  ['engine sandboxed, disk run store', engineVariant('disk', true)],
];
const samples = variants.map(() => [] as number[]);
// CPU time of the whole process (main thread, sandbox worker, libuv pool) per run: on a shared,
// loaded machine wall time mostly measures waiting for a core; CPU time measures our work.
const cpu = variants.map(() => [] as number[]);
for (const [, run] of variants) await run(); // warm-up: JIT, WASM, the store's directories
for (let r = 0; r < ROUNDS; r++)
  for (const [i, [, run]] of variants.entries()) {
    const c0 = process.cpuUsage();
    samples[i]?.push(await run());
    const c = process.cpuUsage(c0);
    cpu[i]?.push((c.user + c.system) / 1000);
  }
for (const engine of engines) await engine.close();
await store.close();
rmSync(root, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const base = median(samples[0] ?? []);
const baseCpu = median(cpu[0] ?? []);
console.log(
  `engine on the disk run store: ${AGENTS} agents of ${DELAY_MS} ms, ${CONCURRENCY} at once (checked), median of ${ROUNDS} rounds`,
);
for (const [i, [label]] of variants.entries()) {
  const ms = median(samples[i] ?? []);
  console.log(
    `${label.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(2).padStart(5)}x floor  overhead ${(((ms - base) * 1000) / AGENTS).toFixed(1).padStart(7)} µs/agent  | cpu ${(((median(cpu[i] ?? []) - baseCpu) * 1000) / AGENTS).toFixed(1).padStart(6)} µs/agent over the floor's`,
  );
}
