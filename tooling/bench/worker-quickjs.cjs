// The floor of a first result under the sandbox's isolation model (QuickJS in a worker thread):
// start one worker, load and instantiate bare quickjs-emscripten in it, run TRIVIAL_PROGRAM
// once, post the result back. Nothing of @wf, and CommonJS throughout (as `wf` and the sandbox's
// worker bundle are). Run as a child process: prints one JSON line, { firstResultMs } (ms since
// this process started), and exits. `--liftoff-only`: the worker sets that V8 flag as its first
// line, before it loads QuickJS, as `wf run`'s sandbox does (wasmTierUp: false). Set here before
// the spawn, it would cost the thread Node's built-in code cache (~30-40 ms of its boot).
const { Worker } = require('node:worker_threads');

const liftoffOnly = process.argv.includes('--liftoff-only');
const worker = new Worker(
  `const { parentPort } = require('node:worker_threads');
  if (${liftoffOnly}) require('node:v8').setFlagsFromString('--liftoff-only');
  require(${JSON.stringify(require.resolve('./bare-quickjs.cjs'))})
    .bareQuickJs()
    .then((bare) => parentPort.postMessage(bare.runOnce()));`,
  { eval: true },
);
worker.once('message', (v) => {
  const at = performance.now();
  if (v !== 42) throw new Error(`bare QuickJS in a worker answered ${v}`);
  console.log(JSON.stringify({ firstResultMs: at }));
  worker.terminate();
});
worker.once('error', (e) => {
  throw e;
});
