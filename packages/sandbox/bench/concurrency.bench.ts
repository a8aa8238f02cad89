// Benchmark 3: 200 concurrent runs, each awaiting three slow (20 ms) host calls: throughput and
// resident memory per run, against the same workload as plain async functions in node:vm
// contexts (the floor: no isolation).
import vm from 'node:vm';
import { calibration } from '@wf/bench';
import { createSandbox } from '@wf/sandbox';
import { fmt, header } from './stats.js';

const RUNS = 200;
const DELAY_MS = 20;
const slow = (v: unknown) => new Promise((r) => setTimeout(() => r(v), DELAY_MS));
const source = `async function run(api, args) {
  const a = await api.slow(args.i);
  const [b, c] = await Promise.all([api.slow(1), api.slow(2)]);
  return a + b + c;
}`;

await calibration();
const sb = await createSandbox();
for (let i = 0; i < 10; i++) await sb.run({ source, args: { i }, capabilities: { slow } });

const gc = (globalThis as { gc?: () => void }).gc;
const BURSTS = 3;
const burstMs: number[] = [];
let oursRssPerRun = 0;
for (let k = 0; k < BURSTS; k++) {
  gc?.();
  const rss0 = process.memoryUsage.rss();
  let peakRss = rss0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 25);
  const t0 = performance.now();
  const outs = await Promise.all(
    Array.from({ length: RUNS }, (_, i) => sb.run({ source, args: { i }, capabilities: { slow } })),
  );
  burstMs.push(performance.now() - t0);
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  outs.forEach((o, i) => {
    if (o.status !== 'completed' || o.value !== i + 3) throw new Error(JSON.stringify(o));
  });
  oursRssPerRun = Math.max(oursRssPerRun, (peakRss - rss0) / RUNS);
}
const ours = [...burstMs].sort((a, b) => a - b)[Math.floor(BURSTS / 2)] ?? Number.NaN;
await sb.close();

gc?.();
const vmRss0 = process.memoryUsage.rss();
let vmPeak = vmRss0;
const t1 = performance.now();
const vmOuts = await Promise.all(
  Array.from({ length: RUNS }, async (_, i) => {
    const ctx = vm.createContext({ api: { slow }, args: { i } });
    const fn = vm.runInContext(`(${source})`, ctx) as (
      api: unknown,
      args: unknown,
    ) => Promise<number>;
    const v = await fn({ slow }, { i });
    vmPeak = Math.max(vmPeak, process.memoryUsage.rss());
    return v;
  }),
);
const vmMs = performance.now() - t1;
if (vmOuts.some((v, i) => v !== i + 3)) throw new Error('vm');

header(`${RUNS} concurrent runs x 3 host calls of ${DELAY_MS} ms (median of ${BURSTS} bursts)`);
console.log(
  `@wf/sandbox      ${fmt(ours, 0).padStart(6)} ms  ${fmt((RUNS * 1000) / ours, 0).padStart(6)} runs/s  peak RSS/run ${fmt(oursRssPerRun / 1024, 0)} KiB`,
);
console.log(
  `node:vm (floor)  ${fmt(vmMs, 0).padStart(6)} ms  ${fmt((RUNS * 1000) / vmMs, 0).padStart(6)} runs/s  peak RSS/run ${fmt((vmPeak - vmRss0) / RUNS / 1024, 0)} KiB`,
);
console.log(`throughput ratio node:vm/ours: ${fmt(vmMs > 0 ? ours / vmMs : Number.NaN)}x`);
