// Benchmark 4: the cost of per-run isolation. (a) Memory per idle pooled module: a QuickJS module
// with its own WebAssembly.Memory, a runtime, a context and the sandbox kernel evaluated, as the
// worker keeps them warm. (b) 200 concurrent runs, each owning its own module: wall time and
// process CPU per run (process.cpuUsage() covers the worker threads).
// @ts-nocheck -- plain JS internals of the built package imported for measurement
import { calibration, ratio } from '@wf/bench';
import { createSandbox } from '@wf/sandbox';
import { BOOTSTRAP_SOURCE } from '../dist/internal/bootstrap.js';
import { ModulePool, MIN_PAGES } from '../dist/internal/module-pool.js';
import { fmt, header } from './stats.js';

const cal = await calibration();
const N = 40;
const prepare = (entry) => {
  const rt = entry.mod.newRuntime();
  const ctx = rt.newContext();
  const boot = ctx.evalCode(BOOTSTRAP_SOURCE, 'sandbox-kernel.js', { strict: true });
  if (boot.error) throw new Error('kernel failed');
  const host = ctx.newFunction('host', () => undefined);
  const kernel = ctx.callFunction(boot.value, ctx.undefined, host);
  if (kernel.error) throw new Error('kernel failed');
  return { ready: true, rt, ctx, handles: [boot.value, host, kernel.value] };
};
const pool = new ModulePool({
  workerId: 'bench',
  highWaterBytes: 32 * 2 ** 20,
  maxRuns: 1000,
  warm: 0,
  maxIdle: 0,
  prepare,
  discard: () => {},
  active: () => 0,
});
globalThis.gc?.();
await pool.create(MIN_PAGES); // compile once, outside the measurement
globalThis.gc?.();
const rss0 = process.memoryUsage().rss;
const kept = [];
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const entry = await pool.create(1024);
  kept.push({ entry, slot: prepare(entry) });
}
const createMs = (performance.now() - t0) / N;
globalThis.gc?.();
const perModule = (process.memoryUsage().rss - rss0) / N;

const burst = async (sb) => {
  const c0 = process.cpuUsage();
  const t = performance.now();
  const outs = await Promise.all(
    Array.from({ length: 200 }, (_, id) =>
      sb.run({
        source:
          'async function run(api, args) { const a = await api.slow(1); const b = await api.slow(2); return args.id + a + b; }',
        args: { id },
        capabilities: { slow: (x) => new Promise((r) => setTimeout(() => r(x), 20)) },
      }),
    ),
  );
  const ms = performance.now() - t;
  const cpu = process.cpuUsage(c0);
  for (const [id, o] of outs.entries())
    if (o.status !== 'completed' || o.value !== id + 3) throw new Error(JSON.stringify(o));
  return { ms, cpuMsPerRun: (cpu.user + cpu.system) / 1000 / 200 };
};
const sb = await createSandbox({ poolSize: 2, limits: { wallMs: 60_000 } });
await burst(sb);
const rounds = [];
for (let i = 0; i < 3; i++) rounds.push(await burst(sb));
await sb.close();
rounds.sort((a, b) => a.ms - b.ms);
const mid = rounds[1];

header('per-run isolation cost');
console.log(
  `idle pooled module (own memory, runtime, context, kernel): ${fmt(perModule / 2 ** 20)} MiB RSS each, ${fmt(createMs)} ms to create (n=${N}; ${ratio(createMs, cal.quickjsEvalMs)} a bare QuickJS trivial run)`,
);
console.log(
  `200 concurrent runs x 2 host calls of 20 ms, one module each: ${fmt(mid.ms, 0)} ms, ${fmt(mid.cpuMsPerRun)} ms process CPU per run (median of 3 bursts)`,
);
void kept;
