// Benchmark 2: host-call round trip. 10,000 sequential `await api.x()` calls in one run, in µs per
// call, against the same loop in plain Node (the floor: an async call with no boundary).
import { createSandbox } from '../src/index.js';
import { fmt, header } from './stats.js';

const CALLS = 10_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const sb = await createSandbox({ poolSize: 1 });
const source = `async function run(api) { let s = 0; for (let i = 0; i < ${CALLS}; i++) s += await api.x(1); return s; }`;
const x = (v: unknown) => v;

const ours: number[] = [];
const cpu: number[] = [];
for (let r = 0; r < REPEATS + 1; r++) {
  const t = performance.now();
  const o = await sb.run({ source, capabilities: { x } });
  const ms = performance.now() - t;
  if (o.status !== 'completed' || o.value !== CALLS) throw new Error(JSON.stringify(o));
  if (r > 0) {
    ours.push((ms * 1000) / CALLS);
    cpu.push((o.stats.cpuMs * 1000) / CALLS);
  }
}
await sb.close();

const plain: number[] = [];
for (let r = 0; r < REPEATS; r++) {
  const api = { x: async (v: number) => v };
  const t = performance.now();
  let s = 0;
  for (let i = 0; i < CALLS; i++) s += await api.x(1);
  if (s !== CALLS) throw new Error('plain');
  plain.push(((performance.now() - t) * 1000) / CALLS);
}

const median = (a: number[]) =>
  [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)] ?? Number.NaN;
header(`${CALLS} sequential await api.x() (µs per call, median of ${REPEATS})`);
console.log(
  `@wf/sandbox round trip        ${fmt(median(ours)).padStart(8)} µs  (guest+engine cpu ${fmt(median(cpu))} µs)`,
);
console.log(`plain Node async call (floor) ${fmt(median(plain), 3).padStart(8)} µs`);
console.log(
  `ratio ours/plain: ${fmt(median(ours) / median(plain), 0)}x; target <= 25 µs: ${median(ours) <= 25 ? 'met' : 'NOT met'}`,
);
