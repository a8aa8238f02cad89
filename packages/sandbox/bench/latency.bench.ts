// Benchmark 1: trivial run latency with one host call, warm pool. Ours vs @sebastianwessel/quickjs
// (the published QuickJS sandbox library) vs a node:vm baseline (a floor, not a security
// boundary). Rounds interleave the three so machine noise hits them alike; medians are quoted.
import vm from 'node:vm';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { loadQuickJs } from '@sebastianwessel/quickjs';
import { createSandbox } from '../src/index.js';
import { fmt, header, summarize } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const LIB_EVERY = 3; // the library is ~10x slower; sample it every third round

const sb = await createSandbox({ poolSize: 1 });
// The variant's CJS typings confuse NodeNext resolution; at run time it is the ESM default export.
const { runSandboxed } = await loadQuickJs(variant as unknown as Parameters<typeof loadQuickJs>[0]);

const oursOnce = async () => {
  const o = await sb.run({
    source: 'async function run(api) { return (await api.x(41)) + 1; }',
    capabilities: { x: (v) => v },
  });
  if (o.status !== 'completed' || o.value !== 42) throw new Error(`ours: ${JSON.stringify(o)}`);
};
const libOnce = async () => {
  const r = await runSandboxed(
    async ({ evalCode }) => evalCode('export default (await env.x(41)) + 1'),
    {
      env: { x: async (v: number) => v },
    },
  );
  if (!r.ok || r.data !== 42) throw new Error(`library: ${JSON.stringify(r)}`);
};
const vmOnce = async () => {
  const context = vm.createContext({ x: async (v: number) => v });
  const v = await vm.runInContext('(async () => (await x(41)) + 1)()', context);
  if (v !== 42) throw new Error('vm');
};

const time = async (f: () => Promise<void>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

for (let i = 0; i < 20; i++) {
  await oursOnce();
  await vmOnce();
  if (i % 4 === 0) await libOnce();
}
const ours: number[] = [];
const lib: number[] = [];
const base: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  ours.push(await time(oursOnce));
  base.push(await time(vmOnce));
  if (i % LIB_EVERY === 0) lib.push(await time(libOnce));
}
await sb.close();

header('trivial run + one host call, warm (ms)');
const rows = [
  ['@wf/sandbox', summarize(ours)],
  ['@sebastianwessel/quickjs 3.1.0', summarize(lib)],
  ['node:vm baseline (floor)', summarize(base)],
] as const;
for (const [name, s] of rows)
  console.log(
    `${name.padEnd(32)} p50 ${fmt(s.p50).padStart(7)}  p90 ${fmt(s.p90).padStart(7)}  n=${s.n}`,
  );
const o = summarize(ours);
const l = summarize(lib);
const b = summarize(base);
console.log(
  `ratio library/ours p50: ${fmt(l.p50 / o.p50)}x   ours/node:vm p50: ${fmt(o.p50 / b.p50)}x`,
);
console.log(
  `target p50 <= 3 ms: ${o.p50 <= 3 ? 'met' : 'NOT met'}; faster than the library: ${o.p50 < l.p50 ? 'yes' : 'no'}`,
);
