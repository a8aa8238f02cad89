// Before/after, side by side: the trivial run (one host call) and the host-call round trip of
// this tree against a baseline copy of the sandbox source (set WF_SANDBOX_BASELINE to its
// src/index.ts, e.g. from `git archive <commit> src`). Rounds interleave the two so machine
// load hits both alike; the ratio new/baseline is what to read on a shared machine.
import { pathToFileURL } from 'node:url';
import { createSandbox } from '../src/index.js';
import { fmt, header, summarize } from './stats.js';

const baselinePath = process.env.WF_SANDBOX_BASELINE;
if (baselinePath === undefined) {
  console.log('\n== baseline comparison skipped (set WF_SANDBOX_BASELINE=<old src/index.ts>)');
  process.exit(0);
}
const base = (await import(pathToFileURL(baselinePath).href)) as {
  createSandbox: typeof createSandbox;
};
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const CALLS = 2000;
const sbNew = await createSandbox({ poolSize: 1 });
const sbOld = await base.createSandbox({ poolSize: 1 });
type Sb = typeof sbNew;

const trivial = async (sb: Sb) => {
  const t = performance.now();
  const o = await sb.run({
    source: 'async function run(api) { return (await api.x(41)) + 1; }',
    capabilities: { x: (v) => v },
  });
  if (o.status !== 'completed' || o.value !== 42) throw new Error(JSON.stringify(o));
  return performance.now() - t;
};
const loop = `async function run(api) { let s = 0; for (let i = 0; i < ${CALLS}; i++) s += await api.x(1); return s; }`;
const roundTrip = async (sb: Sb) => {
  const t = performance.now();
  const o = await sb.run({ source: loop, capabilities: { x: (v) => v } });
  if (o.status !== 'completed' || o.value !== CALLS) throw new Error(JSON.stringify(o));
  return ((performance.now() - t) * 1000) / CALLS;
};

for (let i = 0; i < 20; i++) {
  await trivial(sbNew);
  await trivial(sbOld);
}
const tNew: number[] = [];
const tOld: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  // Alternate which goes first so neither always runs right after the other's cleanup.
  if (i % 2 === 0) {
    tNew.push(await trivial(sbNew));
    tOld.push(await trivial(sbOld));
  } else {
    tOld.push(await trivial(sbOld));
    tNew.push(await trivial(sbNew));
  }
}
const rNew: number[] = [];
const rOld: number[] = [];
for (let i = 0; i < 12; i++) {
  if (i % 2 === 0) {
    rNew.push(await roundTrip(sbNew));
    rOld.push(await roundTrip(sbOld));
  } else {
    rOld.push(await roundTrip(sbOld));
    rNew.push(await roundTrip(sbNew));
  }
}
await sbNew.close();
await sbOld.close();

header('before/after, interleaved in one process');
const a = summarize(tNew);
const b = summarize(tOld);
console.log(`trivial run p50: this tree ${fmt(a.p50)} ms, baseline ${fmt(b.p50)} ms`);
console.log(`  ratio this/baseline p50: ${fmt(a.p50 / b.p50)}x (p90 ${fmt(a.p90 / b.p90)}x)`);
const c = summarize(rNew);
const d = summarize(rOld);
console.log(`host-call round trip p50: this tree ${fmt(c.p50)} µs, baseline ${fmt(d.p50)} µs`);
console.log(`  ratio this/baseline p50: ${fmt(c.p50 / d.p50)}x`);
