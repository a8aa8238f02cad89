// The sandbox of `wf run` and `wf resume`. The loader starts it (its first worker thread) before
// the bin compiles and runs the CLI's bundle, so that the thread's boot (Node's own start, on the
// other core) overlaps that work too, not only the engine's load after it (src/cli/run.ts).
// run.ts takes the sandbox started here, or starts one the same way; when no verb takes it (a
// usage error), the loader closes it.
'use strict';

/** The sandbox startSandbox started and nothing took yet: a Promise<Sandbox>, or undefined. */
let started;

/**
 * Calls @wf/sandbox's createSandbox with `wf`'s options; createSandbox spawns its first worker
 * before it first awaits, so the thread is on its way when this returns. Never throws: a sandbox
 * that cannot start rejects the promise, and fails the run that needs it.
 */
function createRunSandbox(createSandbox) {
  let created;
  try {
    // wasmTierUp false: a short-lived process, where V8's optimizing compiler is still compiling
    // QuickJS when the run ends and the exit waits for it. The cost: CPU-heavy guests run slower
    // once warm (their CPU limits are unchanged; figures in bench/RESULTS.md). `wf worker`
    // (long-lived), the restate verbs and the plugin keep V8's default. So does the training of
    // the code caches (write-code-caches.mjs): a cache made after a flag changed carries the new
    // flags' hash, and V8 rejects it in every `wf`, which starts with the default flags.
    const training = process.env.WF_WRITE_CODE_CACHE !== undefined;
    created = createSandbox({ wasmTierUp: training });
  } catch (error) {
    created = Promise.reject(error);
  }
  created.catch(() => {});
  return created;
}

/** Starts the sandbox from its bundle (dist/cli/sandbox.cjs, the module the CLI's bundle requires). */
function startSandbox(bundle) {
  try {
    started = createRunSandbox(require(bundle).m0.createSandbox);
  } catch (error) {
    started = Promise.reject(error);
    started.catch(() => {});
  }
}

/** The sandbox startSandbox started, once (a Promise<Sandbox>), or undefined. */
function takeSandbox() {
  const sandbox = started;
  started = undefined;
  return sandbox;
}

/** Closes the sandbox startSandbox started when nothing took it (once it has booted). */
async function closeUntaken() {
  const sandbox = takeSandbox();
  const created = await sandbox?.catch(() => undefined);
  await created?.close();
}

module.exports = { createRunSandbox, startSandbox, takeSandbox, closeUntaken };
