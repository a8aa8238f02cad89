// Benchmark 1: trivial run latency with one host call, against bare quickjs-emscripten running the
// same program (a fresh runtime + context per run, no hardening, no worker: the WASM floor), the
// same bare run in a worker thread with its host call answered by the main thread (the floor of
// the sandbox's isolation model, measured in the same rounds: a paced run pays for waking an idle
// thread at each hop, which a back-to-back ping-pong does not show), the
// published QuickJS sandbox library and node:vm (a floor, not a security boundary). Rounds
// interleave them so machine noise hits all alike; medians and ratios are what to read.
// "paced": runs arrive PACE_MS apart (the sandbox prepares the next hardened context in between,
// as it does between agent calls); "back-to-back": each run starts as the previous one ends, so
// preparing contexts competes with the runs (the sustained cost per run).
import vm from 'node:vm';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { loadQuickJs } from '@sebastianwessel/quickjs';
import { bareQuickJs, calibration, ratio, TRIVIAL_PROGRAM, workerQuickJs } from '@wf/bench';
import { createSandbox } from '@wf/sandbox';
import { baselineEntry, fmt, header, summarize } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 120);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 25);
const LIB_EVERY = 3; // the library is ~10x slower; sample it every third round

await calibration();
const sb = await createSandbox({ poolSize: 1 });
// WF_SANDBOX_BASELINE: the same paced runs from another tree, alternating with ours each round.
const BASELINE = baselineEntry();
const before: typeof sb | undefined =
  BASELINE === undefined
    ? undefined
    : await (await import(BASELINE)).createSandbox({ poolSize: 1 });
const bare = await bareQuickJs();
const inWorker = await workerQuickJs();
// The variant's CJS typings confuse NodeNext resolution; at run time it is the ESM default export.
const { runSandboxed } = await loadQuickJs(variant as unknown as Parameters<typeof loadQuickJs>[0]);

const oursOnce = async () => {
  const o = await sb.run({ source: TRIVIAL_PROGRAM, capabilities: { x: (v) => v } });
  if (o.status !== 'completed' || o.value !== 42) throw new Error(`ours: ${JSON.stringify(o)}`);
};
const beforeOnce = async () => {
  const o = await before?.run({ source: TRIVIAL_PROGRAM, capabilities: { x: (v) => v } });
  if (o?.status !== 'completed' || o.value !== 42) throw new Error(`before: ${JSON.stringify(o)}`);
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
const bareOnce = async () => {
  if (bare.runOnce() !== 42) throw new Error('bare');
};
const workerOnce = async () => {
  if ((await inWorker.runOnce()) !== 42) throw new Error('bare in a worker');
};

const time = async (f: () => Promise<void>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};
// CPU of the whole process (main thread and workers) while one run is in flight: the work on a
// run's path, which machine load does not inflate the way it inflates wall time.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const timeCpu = async (f: () => Promise<void>, into: number[]) => {
  const c = cpuMs();
  const t = performance.now();
  await f();
  const ms = performance.now() - t;
  into.push(cpuMs() - c);
  return ms;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (let i = 0; i < 20; i++) {
  await oursOnce();
  await bareOnce();
  await workerOnce();
  await vmOnce();
  if (i % 4 === 0) await libOnce();
}
const ours: number[] = [];
const oursCpu: number[] = [];
const bareCpu: number[] = [];
const bares: number[] = [];
const inWorkers: number[] = [];
const lib: number[] = [];
const base: number[] = [];
const befores: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  await pause(PACE_MS);
  ours.push(await timeCpu(oursOnce, oursCpu));
  bares.push(await timeCpu(bareOnce, bareCpu));
  await pause(PACE_MS);
  inWorkers.push(await time(workerOnce));
  base.push(await time(vmOnce));
  if (i % LIB_EVERY === 0) lib.push(await time(libOnce));
  if (before !== undefined) {
    await pause(PACE_MS);
    befores.push(await time(beforeOnce));
  }
}
const oursB2B: number[] = [];
const bareB2B: number[] = [];
const inWorkerB2B: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  oursB2B.push(await time(oursOnce));
  bareB2B.push(await time(bareOnce));
  inWorkerB2B.push(await time(workerOnce));
}
await sb.close();
await before?.close();
await inWorker.close();

header(`trivial run + one host call (ms), paced ${PACE_MS} ms apart`);
const rows = [
  ['@wf/sandbox', summarize(ours)],
  ['bare quickjs-emscripten (floor)', summarize(bares)],
  ['bare, in a worker (model floor)', summarize(inWorkers)],
  ['@sebastianwessel/quickjs 3.1.0', summarize(lib)],
  ['node:vm (no isolation)', summarize(base)],
] as const;
for (const [name, s] of rows)
  console.log(
    `${name.padEnd(32)} p50 ${fmt(s.p50, 3).padStart(7)}  p90 ${fmt(s.p90, 3).padStart(7)}  n=${s.n}`,
  );
if (before !== undefined) {
  const b = summarize(befores);
  console.log(
    `${'[before] @wf/sandbox'.padEnd(32)} p50 ${fmt(b.p50, 3).padStart(7)}  p90 ${fmt(b.p90, 3).padStart(7)}  n=${b.n}  (ours/before p50: ${ratio(summarize(ours).p50, b.p50)}; ${process.env.WF_SANDBOX_BASELINE})`,
  );
}
const o = summarize(ours);
const q = summarize(bares);
const l = summarize(lib);
console.log(
  `ratio ours/bare QuickJS p50: ${ratio(o.p50, q.p50)}; library/ours: ${ratio(l.p50, o.p50)}; target ours <= 2x bare: ${o.p50 <= 2 * q.p50 ? 'met' : 'NOT met'}`,
);
// Under the sandbox's isolation model a run costs at least the bare run plus four thread hops:
// the run handed to its worker, the host call's crossing and its answer, and the result back.
// Measured, paced like the runs: summing the calibration's back-to-back ping-pong
// understates it: a hop that wakes an idle thread costs more than one between busy threads.
const w = summarize(inWorkers);
console.log(
  `floor of the isolation model (bare QuickJS in a worker, host call to this thread): ${ratio(w.p50, q.p50)} of bare; ours/that floor: ${ratio(o.p50, w.p50)}`,
);
const oc = summarize(oursCpu);
const bc = summarize(bareCpu);
console.log(
  `CPU on the run's path (all threads) p50: ours ${fmt(oc.p50, 3)} ms, bare QuickJS ${fmt(bc.p50, 3)} ms, ratio ${ratio(oc.p50, bc.p50)} (preparing the next context happens between runs)`,
);
header('trivial run + one host call (ms), back-to-back');
const ob = summarize(oursB2B);
const qb = summarize(bareB2B);
const wb = summarize(inWorkerB2B);
console.log(
  `@wf/sandbox p50 ${fmt(ob.p50, 3)}  p90 ${fmt(ob.p90, 3)}; bare QuickJS p50 ${fmt(qb.p50, 3)}; ratio ${ratio(ob.p50, qb.p50)} (each run also pays for hardening its successor's context)`,
);
console.log(
  `bare QuickJS in a worker p50 ${fmt(wb.p50, 3)}: ${ratio(wb.p50, qb.p50)} of bare; ours/that floor ${ratio(ob.p50, wb.p50)}`,
);
