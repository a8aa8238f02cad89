// With options.wasmTierUp false, sets V8's --liftoff-only for the process (see SandboxOptions),
// from the worker thread, right before it compiles QuickJS (module-pool.js, compileEngine).
// Not on the thread that creates the sandbox: a V8 flag changed before Node boots a worker thread
// makes that thread boot without Node's built-in code cache, which delays its first script and a
// short `wf run` (figures in bench/RESULTS.md).
// @ts-check
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';

let applied = false;

/** Sets --liftoff-only when this worker was asked to (workerData.liftoffOnly), once. */
export function applyWasmTiering() {
  if (applied || workerData?.liftoffOnly !== true) return;
  applied = true;
  // Required only when asked: node:v8 is not loaded for nothing.
  createRequire(import.meta.url)('node:v8').setFlagsFromString('--liftoff-only');
}
