// Worker-thread context shared by the worker modules: the port, the slice slot read by the main
// thread's watchdog, the CPU clock, scheduling constants and the table of live runs.
// @ts-check
import { parentPort, workerData } from 'node:worker_threads';
import { openThreadCpuClock } from './cpu-clock.js';

/** @typedef {import('./worker-run.js').Run} Run */

if (parentPort === null) throw new Error('this module must run in a worker thread');
export const port = parentPort;
export const workerId = /** @type {string} */ (workerData?.workerId ?? 'w?');
export const moduleHighWaterBytes = /** @type {number} */ (
  workerData?.moduleHighWaterBytes ?? 32 * 1024 * 1024
);
export const moduleMaxRuns = /** @type {number} */ (workerData?.moduleMaxRuns ?? 2000);
// Shared with the main thread: [slice start (epoch ms), run id or 0, thread CPU ms at the slice's
// CPU baseline, when that was taken (epoch ms)]. QuickJS polls its interrupt handler by operation
// count, so a builtin-heavy slice can run long between polls; the main thread reads this slot
// and replaces the worker when one slice overstays its CPU limit.
export const sliceSlot = /** @type {Float64Array} */ (
  workerData?.sliceBuffer instanceof SharedArrayBuffer
    ? new Float64Array(workerData.sliceBuffer)
    : new Float64Array(4)
);

export const now = () => performance.now();
export const MIN_SAMPLE_MS = 2;
/** This thread's CPU clock (ms), or null where only wall time is available. */
export const cpuClock = openThreadCpuClock();
/** A slice takes its CPU baseline at its first interrupt poll after this long (until then: wall time). */
export const CPU_BASE_AFTER_MS = 0;
/** Re-read the CPU clock at most this often while a slice is over a limit in wall time. */
export const CPU_RECHECK_MS = 2;
/** Jobs run between two looks at the clock, and the pump's quantum before it yields. */
export const JOB_BATCH = 64;
export const PUMP_QUANTUM_MS = 10;

/** @type {Map<number, Run>} */
export const runs = new Map();

/** @param {import('./protocol.js').FromWorkerMessage} value */
export function post(value) {
  port.postMessage(value);
}

/**
 * @param {string} code
 * @param {string} message
 */
export function refusal(code, message) {
  return JSON.stringify({ code, message });
}

/** @param {unknown} e */
export function isHostStackOverflow(e) {
  return e instanceof RangeError && /call stack/i.test(String(e.message));
}
