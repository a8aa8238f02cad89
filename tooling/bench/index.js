// Benchmark calibration: the machine's floors measured in the bench's own process, so every
// figure a bench prints can be read as a ratio against them on another day or machine. Also the
// bare baselines (QuickJS without the sandbox, a worker ping-pong) that sandbox benches run side
// by side with their own measurements.
// @ts-check
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bareQuickJs, TRIVIAL_PROGRAM } from './bare-quickjs.cjs';

export { bareQuickJs, TRIVIAL_PROGRAM };

/** @param {number[]} samples */
export function median(samples) {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1
    ? /** @type {number} */ (s[mid])
    : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** @param {number} value @param {number} floor */
export function ratio(value, floor) {
  return `${(value / floor).toFixed(2)}x`;
}

/** Wall time of `node -e 0` (the floor of any CLI), median of `samples` spawns, in ms. */
export function nodeStartMs(samples = 5) {
  const out = [];
  for (let i = 0; i < samples; i += 1) {
    const t = performance.now();
    const r = spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    if (r.status !== 0) throw new Error('node -e 0 failed');
    out.push(performance.now() - t);
  }
  return median(out);
}

const ECHO_WORKER = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => parentPort.postMessage(m));`;

/**
 * A bare worker thread that echoes every message: the floor of any host-call round trip that
 * crosses from a worker to the main thread and back.
 */
export async function workerPingPong() {
  const worker = new Worker(ECHO_WORKER, { eval: true });
  /** @type {(v: unknown) => void} */
  let answer = () => {};
  worker.on('message', (m) => answer(m));
  const ping = (/** @type {unknown} */ m) =>
    new Promise((resolve) => {
      answer = resolve;
      worker.postMessage(m);
    });
  await ping(0);
  /** Mean µs per round trip over `n` sequential round trips of a small call-sized message. */
  const roundTripUs = async (n = 2000) => {
    const t = performance.now();
    for (let i = 0; i < n; i += 1) await ping({ t: 1, runId: 1, callId: i, input: '1' });
    return ((performance.now() - t) * 1000) / n;
  };
  return { roundTripUs, close: () => worker.terminate() };
}

/**
 * Bare quickjs-emscripten in a worker thread (worker-floor.cjs), its host calls answered by this
 * thread: the floor of a sandboxed run under the sandbox's isolation model, measured rather than
 * summed. Each run gets a fresh context, as `bareQuickJs()`'s do; every `api.x(v)` crosses to this
 * thread as JSON text and its answer crosses back, as the sandbox's calls do.
 */
export async function workerQuickJs() {
  const worker = new Worker(new URL('./worker-floor.cjs', import.meta.url));
  /** @type {Map<number, { resolve: (v: number) => void, reject: (e: Error) => void }>} */
  const runs = new Map();
  let runSeq = 0;
  worker.on('message', (/** @type {any} */ m) => {
    if (m.t === 'call') {
      worker.postMessage({ t: 'settle', runId: m.runId, callId: m.callId, env: m.input });
    } else if (m.t === 'end') {
      const run = runs.get(m.runId);
      runs.delete(m.runId);
      if (m.status === 'completed') run?.resolve(JSON.parse(m.value));
      else run?.reject(new Error(`bare QuickJS in a worker: ${m.value}`));
    }
  });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  /** @param {string} source */
  const evaluate = (source) =>
    new Promise((/** @type {(v: number) => void} */ resolve, reject) => {
      runSeq += 1;
      runs.set(runSeq, { resolve, reject });
      worker.postMessage({ t: 'start', runId: runSeq, source });
    });
  /** Runs TRIVIAL_PROGRAM once in the worker; resolves to its result (42). */
  const runOnce = () => evaluate(TRIVIAL_PROGRAM);
  /** µs per call of `n` sequential `await api.x(1)`, each crossing to this thread and back. */
  const callUs = async (n = 5000) => {
    const t = performance.now();
    const v = await evaluate(
      `async function run(api) { let s = 0; for (let i = 0; i < ${n}; i++) s += await api.x(1); return s; }`,
    );
    if (v !== n) throw new Error('bare QuickJS in a worker: wrong call count');
    return ((performance.now() - t) * 1000) / n;
  };
  return { runOnce, callUs, close: () => worker.terminate() };
}

/**
 * @typedef {object} Calibration
 * @property {string} date ISO date and time of the measurement
 * @property {number} nodeStartMs `node -e 0` wall, median
 * @property {number} quickjsEvalMs bare QuickJS trivial run, p50 in ms
 * @property {number} pingPongUs worker postMessage round trip, p50 in µs
 * @property {number} load 1-minute load average
 * @property {number} cores
 */

/** Measures the three floors in this process. @returns {Promise<Calibration>} */
export async function calibrate() {
  const nodeMs = nodeStartMs(5);
  const bare = await bareQuickJs();
  for (let i = 0; i < 30; i += 1) bare.timeOnce();
  const q = [];
  for (let i = 0; i < 100; i += 1) q.push(bare.timeOnce());
  const pp = await workerPingPong();
  await pp.roundTripUs(500);
  const p = [];
  for (let i = 0; i < 5; i += 1) p.push(await pp.roundTripUs(500));
  await pp.close();
  return {
    date: new Date().toISOString().slice(0, 16).replace('T', ' '),
    nodeStartMs: nodeMs,
    quickjsEvalMs: median(q),
    pingPongUs: median(p),
    load: loadavg()[0] ?? 0,
    cores: availableParallelism(),
  };
}

/** @param {Calibration} c */
export function formatCalibration(c) {
  return (
    `calibration ${c.date} UTC: node -e 0 ${c.nodeStartMs.toFixed(0)} ms, ` +
    `bare QuickJS evalCode p50 ${c.quickjsEvalMs.toFixed(3)} ms, ` +
    `worker ping-pong p50 ${c.pingPongUs.toFixed(1)} µs ` +
    `(load ${c.load.toFixed(2)}, ${c.cores} cores, node ${process.version})`
  );
}

/** @type {Promise<Calibration> | null} */
let once = null;

/**
 * The calibration of this bench run: measured and printed on the first call, the same object
 * afterwards (one line per bench process).
 * @returns {Promise<Calibration>}
 */
export function calibration() {
  if (once === null) {
    once = calibrate().then((c) => {
      console.log(formatCalibration(c));
      return c;
    });
  }
  return once;
}
