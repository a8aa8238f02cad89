// With options.wasmTierUp false, sets V8's --liftoff-only for the process (see SandboxOptions),
// from the worker thread, right before it compiles QuickJS (module-pool.js, compileEngine).
// Not on the thread that creates the sandbox: a V8 flag changed before Node boots a worker thread
// makes that thread boot without Node's built-in code cache (measured on Node 20: an empty worker's
// script ran 83-97 ms after its spawn instead of 52-56 ms, and `wf run` of five agents finished
// 22-29 ms later than with the flag set here, medians of 20-25 interleaved pairs).
// @ts-check
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';

let applied = false;

/** Sets --liftoff-only when this worker was asked to (workerData.liftoffOnly), once. */
export function applyWasmTiering() {
  if (applied || workerData?.liftoffOnly !== true) return;
  applied = true;
  // Required only when asked: loading node:v8 costs ~3 ms.
  createRequire(import.meta.url)('node:v8').setFlagsFromString('--liftoff-only');
}
