// Benchmark 2: host-call round trip. Sequential `await api.x()` calls in one run, in µs per call,
// against the floor of any call that leaves a worker thread: a bare worker postMessage ping-pong
// of a call-sized message, measured side by side (interleaved repeats) in this process. A guest's
// host call also costs its QuickJS side (call, promise, job: bare quickjs-emscripten's awaited
// host call, no hop), so the sum of the two is the floor of a sandboxed call's round trip.
// For reference, the same loop in bare quickjs-emscripten in a worker, each call crossing to this
// thread through the library's public API (handles, promise capability): what a direct build of
// the isolation model costs per call, which the sandbox's call path undercuts.
import { bareQuickJs, calibration, ratio, workerPingPong, workerQuickJs } from '@wf/bench';
import { createSandbox } from '@wf/sandbox';
import { fmt, header } from './stats.js';

const CALLS = 5_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
await calibration();
const sb = await createSandbox({ poolSize: 1 });
const pp = await workerPingPong();
const bare = await bareQuickJs();
const inWorker = await workerQuickJs();
const source = `async function run(api) { let s = 0; for (let i = 0; i < ${CALLS}; i++) s += await api.x(1); return s; }`;
const x = (v: unknown) => v;

const ours: number[] = [];
const cpu: number[] = [];
const floor: number[] = [];
const guestSide: number[] = [];
const direct: number[] = [];
for (let r = 0; r < REPEATS + 1; r++) {
  const t = performance.now();
  const o = await sb.run({ source, capabilities: { x } });
  const ms = performance.now() - t;
  if (o.status !== 'completed' || o.value !== CALLS) throw new Error(JSON.stringify(o));
  const ping = await pp.roundTripUs(CALLS);
  const call = bare.callUs(CALLS);
  const inWorkerCall = await inWorker.callUs(CALLS);
  if (r > 0) {
    guestSide.push(call);
    direct.push(inWorkerCall);
    ours.push((ms * 1000) / CALLS);
    cpu.push((o.stats.cpuMs * 1000) / CALLS);
    floor.push(ping);
  }
}
await sb.close();
await pp.close();
await inWorker.close();

const median = (a: number[]) =>
  [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)] ?? Number.NaN;
header(`${CALLS} sequential await api.x() (µs per call, median of ${REPEATS})`);
console.log(
  `@wf/sandbox round trip          ${fmt(median(ours)).padStart(8)} µs  (guest+engine cpu ${fmt(median(cpu))} µs)`,
);
console.log(`worker postMessage ping-pong    ${fmt(median(floor)).padStart(8)} µs  (floor)`);
console.log(`bare QuickJS awaited host call  ${fmt(median(guestSide)).padStart(8)} µs  (no hop)`);
console.log(
  `ratio ours/ping-pong: ${ratio(median(ours), median(floor))}; target <= 1.3x: ${median(ours) <= 1.3 * median(floor) ? 'met' : 'NOT met'}`,
);
const crossing = median(floor) + median(guestSide);
console.log(
  `ping-pong + bare QuickJS call (floor of a crossing): ${ratio(crossing, median(floor))} of ping-pong; ours/that floor: ${ratio(median(ours), crossing)}`,
);
console.log(
  `bare QuickJS in a worker, public API (reference): ${fmt(median(direct))} µs, ${ratio(median(direct), median(floor))} of ping-pong; ours/it: ${ratio(median(ours), median(direct))}`,
);
