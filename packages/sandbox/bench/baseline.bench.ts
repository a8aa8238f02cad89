// Before/after, side by side: the trivial run (one host call; back-to-back, and paced like
// latency.bench.ts) and the host-call round trip of this tree against a baseline copy of the
// sandbox (set WF_SANDBOX_BASELINE to its src/index.ts, e.g. from `git archive <commit> src`, or
// to a built dist/index.js). Rounds interleave the two so machine load hits both alike; the
// ratio new/baseline is what to read on a shared machine.
import { pathToFileURL } from 'node:url';
import { calibration } from '@wf/bench';
import { createSandbox } from '@wf/sandbox';
import { fmt, header, summarize } from './stats.js';

const baselinePath = process.env.WF_SANDBOX_BASELINE;
if (baselinePath === undefined) {
  console.log('\n== baseline comparison skipped (set WF_SANDBOX_BASELINE=<old src/index.ts>)');
  process.exit(0);
}
await calibration();
const base = (await import(pathToFileURL(baselinePath).href)) as {
  createSandbox: typeof createSandbox;
};
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
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
// Paced: each run arrives after PACE_MS of quiet, as in latency.bench.ts (warm contexts ready).
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 25);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pNew: number[] = [];
const pOld: number[] = [];
for (let i = 0; i < Math.min(ROUNDS, 120); i++) {
  await pause(PACE_MS);
  if (i % 2 === 0) pNew.push(await trivial(sbNew));
  else pOld.push(await trivial(sbOld));
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
// 200 concurrent runs: what one module per executing run costs against the shared module.
const burst = async (sb: Sb) => {
  const c0 = process.cpuUsage();
  const t = performance.now();
  const outs = await Promise.all(
    Array.from({ length: 200 }, (_, id) =>
      sb.run({
        source:
          'async function run(api, args) { const a = await api.slow(1); const b = await api.slow(2); return args.id + a + b; }',
        args: { id },
        capabilities: { slow: (x) => new Promise((r) => setTimeout(() => r(x), 20)) },
        limits: { wallMs: 60_000 },
      }),
    ),
  );
  const cpu = process.cpuUsage(c0);
  for (const [id, o] of outs.entries())
    if (o.status !== 'completed' || o.value !== id + 3) throw new Error(JSON.stringify(o));
  return { ms: performance.now() - t, cpu: (cpu.user + cpu.system) / 1000 };
};
const bNew: { ms: number; cpu: number }[] = [];
const bOld: { ms: number; cpu: number }[] = [];
for (let i = 0; i < 4; i++) {
  if (i % 2 === 0) {
    bNew.push(await burst(sbNew));
    bOld.push(await burst(sbOld));
  } else {
    bOld.push(await burst(sbOld));
    bNew.push(await burst(sbNew));
  }
}
await sbNew.close();
await sbOld.close();

header('before/after, interleaved in one process');
const a = summarize(tNew);
const b = summarize(tOld);
console.log(`trivial run p50: this tree ${fmt(a.p50)} ms, baseline ${fmt(b.p50)} ms`);
console.log(`  ratio this/baseline p50: ${fmt(a.p50 / b.p50)}x (p90 ${fmt(a.p90 / b.p90)}x)`);
const pa = summarize(pNew);
const pb = summarize(pOld);
console.log(
  `trivial run paced ${PACE_MS} ms p50: this tree ${fmt(pa.p50, 3)} ms, baseline ${fmt(pb.p50, 3)} ms`,
);
console.log(`  ratio this/baseline p50: ${fmt(pa.p50 / pb.p50)}x`);
const c = summarize(rNew);
const d = summarize(rOld);
console.log(`host-call round trip p50: this tree ${fmt(c.p50)} µs, baseline ${fmt(d.p50)} µs`);
console.log(`  ratio this/baseline p50: ${fmt(c.p50 / d.p50)}x`);
const msN = summarize(bNew.map((b) => b.ms)).p50;
const msO = summarize(bOld.map((b) => b.ms)).p50;
const cpuN = summarize(bNew.map((b) => b.cpu)).p50;
const cpuO = summarize(bOld.map((b) => b.cpu)).p50;
console.log(
  `200 concurrent runs: this tree ${fmt(msN, 0)} ms / ${fmt(cpuN / 200)} ms CPU per run, baseline ${fmt(msO, 0)} ms / ${fmt(cpuO / 200)} ms CPU per run`,
);
console.log(`  ratio this/baseline: wall ${fmt(msN / msO)}x, CPU ${fmt(cpuN / cpuO)}x`);
