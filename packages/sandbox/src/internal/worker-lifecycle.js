// Run lifecycle: the module pool and its pre-built slots, starting a run on a slot, ending it,
// tearing it down, and retiring a module whose memory or host stack failed.
// @ts-check
import { workerData } from 'node:worker_threads';
import { BOOTSTRAP_SOURCE } from './bootstrap.js';
import { hostSignal } from './worker-calls.js';
import { FastPath } from './fast-path.js';
import {
  expectEngine,
  heapBytes,
  ModulePool,
  PAGE_BYTES,
  pagesFor,
  useCompiledEngine,
} from './module-pool.js';
import { classifyEngineError } from './outcome.js';
import { afterPump, isEnded, pumpJobs } from './worker-pump.js';
import { FROM_WORKER } from './protocol.js';
import { Run } from './worker-run.js';
import {
  isHostStackOverflow,
  moduleHighWaterBytes,
  moduleMaxRuns,
  now,
  post,
  runs,
  workerId,
} from './worker-thread.js';
import { pinLocalTimeToUtc } from './utc.js';
import { evalText, newText } from './utf8.js';

/** @typedef {import('quickjs-emscripten-core').QuickJSRuntime} QuickJSRuntime */
/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */
/** @typedef {import('./module-pool.js').ModuleEntry} ModuleEntry */
/** @typedef {import('./protocol.js').StartMessage} StartMessage */

pinLocalTimeToUtc();

/** The kernel's UTF-8 bytes, encoded once per thread (every fresh context evaluates them). */
const KERNEL_UTF8 = Buffer.from(BOOTSTRAP_SOURCE, 'utf8');

useCompiledEngine(workerData?.wasmModule);
if (workerData?.engineFollows === true) expectEngine();
export const pool = new ModulePool({
  workerId,
  highWaterBytes: moduleHighWaterBytes,
  maxRuns: moduleMaxRuns,
  warm: /** @type {number} */ (workerData?.warmModules ?? 2),
  maxIdle: /** @type {number} */ (workerData?.maxIdleModules ?? 8),
  prepare: (entry, slot) => (slot === null ? beginSlot(entry) : finishSlot(slot)),
  discard: (slot) => discardSlot(slot),
  active: () => runs.size,
});
pool.warmPages = pagesFor(/** @type {number} */ (workerData?.memoryBytes ?? 64 * 1024 * 1024));

/** @param {StartMessage} msg */
export async function start(msg) {
  const run = new Run(msg);
  runs.set(run.id, run);
  const pages = pagesFor(msg.limits.memoryBytes);
  let entry = pool.takeIdle(pages);
  if (entry === null) {
    try {
      entry = await pool.createFor(pages);
    } catch {
      endRun(run, {
        status: 'failed',
        code: 'WF_SANDBOX_ENGINE_FAULT',
        message: 'the engine could not be loaded',
      });
      return;
    }
  }
  if (isEnded(run)) {
    pool.release(entry);
    return;
  }
  run.module = entry;
  entry.runs.add(run);
  entry.runCount += 1;
  run.wallDeadline = now() + msg.limits.wallMs;
  try {
    setUp(run, entry);
  } catch (e) {
    hostFault(run, e);
    return;
  } finally {
    // Timers are armed after the run's first slice, off its path: neither can fire during a
    // synchronous slice (the interrupt handler enforces the wall deadline inside one).
    pool.scheduleTopUp();
  }
  if (isEnded(run)) return;
  // The same deadline, from when the run started.
  run.wallTimer = setTimeout(
    () => {
      run.kill(
        'timeout',
        'WF_SANDBOX_WALL_TIMEOUT',
        `the run exceeded its wall-clock limit of ${msg.limits.wallMs} ms`,
      );
      finishKilled(run);
    },
    Math.max(0, Math.min(run.wallDeadline - now(), 2 ** 31 - 1)),
  ); // Node fires longer timers at once
  // A replay delivers what the lost worker had delivered, in the same order; the guest is
  // deterministic given those, so it makes the same calls with the same ids.
  run.queue = [...(msg.replay ?? []), ...run.queue];
  run.ready = true;
  afterPump(run);
}

/**
 * A fresh runtime + context with the kernel already evaluated, not yet given to any run. It is
 * built while the worker is idle so a run does not wait for the kernel; no guest code has run
 * in it, and it serves exactly one run. Built in two steps (compile the kernel, about two
 * thirds of its cost, then run it), so an idle-time build holds up an arriving message for at most
 * one step.
 * @typedef {object} Slot
 * @property {boolean} ready the kernel ran: the fields below are set
 * @property {ModuleEntry} entry
 * @property {QuickJSRuntime} rt
 * @property {QuickJSContext} ctx
 * @property {QuickJSHandle[]} handles
 * @property {QuickJSHandle} boot the compiled kernel function
 * @property {QuickJSHandle} configure
 * @property {QuickJSHandle} describe
 * @property {QuickJSHandle} deliver
 * @property {QuickJSHandle} drain
 * @property {FastPath | null} fast
 * @property {{ run: Run | null }} owner
 */

/**
 * Step 1: a fresh runtime and context, and the kernel compiled in it (not yet run).
 * @param {ModuleEntry} entry
 * @returns {Slot}
 */
export function beginSlot(entry) {
  /** @type {{ run: Run | null }} */
  const owner = { run: null };
  const rt = entry.mod.newRuntime();
  // The kernel is trusted and terminates; guest limits apply once a run owns the slot.
  rt.setInterruptHandler(() => owner.run?.shouldInterrupt() ?? false);
  const ctx = rt.newContext();
  const boot = evalText(ctx, KERNEL_UTF8, 'sandbox-kernel.js', { strict: true });
  if (boot.error) {
    boot.error.dispose();
    ctx.dispose();
    rt.dispose();
    throw new Error('the sandbox kernel failed to load');
  }
  const none = /** @type {QuickJSHandle} */ (/** @type {unknown} */ (null));
  return {
    ready: false,
    entry,
    rt,
    ctx,
    handles: [boot.value],
    boot: boot.value,
    configure: none,
    describe: none,
    deliver: none,
    drain: none,
    fast: null,
    owner,
  };
}

/**
 * Step 2: runs the kernel (hardening the context) and keeps its entry points.
 * @param {Slot} slot
 * @returns {Slot}
 */
export function finishSlot(slot) {
  const { ctx, owner, handles } = slot;
  const fail = () => {
    discardSlot(slot);
    throw new Error('the sandbox kernel failed to load');
  };
  const hostFn = ctx.newFunction('host', (codeH) => {
    const run = owner.run;
    if (run !== null) hostSignal(run, ctx, codeH);
    return undefined;
  });
  handles.push(hostFn);
  const kernelR = ctx.callFunction(slot.boot, ctx.undefined, hostFn);
  if (kernelR.error) {
    kernelR.error.dispose();
    return fail();
  }
  const kernel = kernelR.value;
  handles.push(kernel);
  // Read before any prelude or guest code ran: the kernel object is null-prototype and frozen.
  slot.configure = ctx.getProp(kernel, 'configure');
  slot.describe = ctx.getProp(kernel, 'describe');
  slot.deliver = ctx.getProp(kernel, 'deliver');
  slot.drain = ctx.getProp(kernel, 'drain');
  handles.push(slot.configure, slot.describe, slot.deliver, slot.drain);
  slot.fast = new FastPath(slot.entry, slot.rt, ctx);
  slot.ready = true;
  return slot;
}

/** Both steps at once (a run that found no prepared slot). @param {ModuleEntry} entry */
export function buildSlot(entry) {
  return finishSlot(beginSlot(entry));
}

/** Disposes a slot that no run will use. @param {Slot} slot */
export function discardSlot(slot) {
  slot.fast?.dispose();
  for (const h of slot.handles) if (h.alive) h.dispose();
  slot.ctx.dispose();
  slot.rt.dispose();
}

/**
 * @param {Run} run
 * @param {ModuleEntry} entry
 */
export function setUp(run, entry) {
  const L = run.limits;
  let slot = /** @type {Slot | null} */ (entry.slot);
  entry.slot = null;
  if (slot === null) slot = buildSlot(entry);
  else if (!slot.ready) slot = finishSlot(slot);
  const { rt, ctx } = slot;
  const fast = /** @type {FastPath} */ (slot.fast);
  run.rt = rt;
  run.ctx = ctx;
  run.handles.push(...slot.handles);
  run.deliver = slot.deliver;
  run.drain = slot.drain;
  run.fast = fast;
  // The engine's own limit only refuses single allocations reliably in this build (its per-block
  // accounting lacks malloc_usable_size); the hard bound is the module's memory maximum, and
  // the host-side sampling in shouldInterrupt stops a run early when its heap passes the limit.
  rt.setMemoryLimit(L.memoryBytes);
  rt.setMaxStackSize(L.stackBytes);
  slot.owner.run = run;
  run.beginSlice();
  run.lastSample = run.sliceStart;
  const fail = (/** @type {string} */ code, /** @type {string} */ message) => {
    endRun(run, { status: 'failed', code, message });
  };
  try {
    const describe = slot.describe;
    const config = JSON.stringify({
      seed: run.msg.seed,
      startTime: run.msg.startTime,
      capabilities: run.msg.capabilities,
      maxErrorChars: L.maxErrorChars,
      maxResultChars: L.maxResultBytes,
      maxHostCalls: L.maxHostCalls,
      maxOutstandingCalls: L.maxOutstandingCalls,
      maxArgBytes: L.maxArgBytes,
      prelude: run.msg.prelude !== null,
    });
    const configH = newText(ctx, config);
    run.handles.push(configH);
    // Without a prelude, configure also prepares the api and returns launch (one call less).
    const prepareR = ctx.callFunction(slot.configure, ctx.undefined, configH);
    if (prepareR.error) {
      prepareR.error.dispose();
      if (run.killed !== null) return;
      return fail('WF_SANDBOX_INTERNAL', 'the sandbox kernel could not be configured');
    }
    run.handles.push(prepareR.value);
    /** @param {QuickJSHandle} errH */
    const describeError = (errH) => {
      const r = ctx.callFunction(describe, ctx.undefined, errH);
      errH.dispose();
      if (r.error) {
        r.error.dispose();
        return { name: 'Error', message: 'the error could not be read' };
      }
      const h = r.value;
      const text = ctx.typeof(h) === 'string' ? ctx.getString(h) : '{}';
      h.dispose();
      return /** @type {{ name?: string, message?: string, code?: string }} */ (JSON.parse(text));
    };

    let launch = prepareR.value;
    if (run.msg.prelude !== null) {
      const prepare = prepareR.value;
      const pr = evalText(ctx, `(${run.msg.prelude}\n)`, 'prelude.js', { strict: true });
      if (pr.error) {
        const d = describeError(pr.error);
        return fail(
          'WF_SANDBOX_PRELUDE_ERROR',
          `the prelude failed to compile: ${d.name}: ${d.message}`,
        );
      }
      const preludeFn = pr.value;
      run.handles.push(preludeFn);
      const launchR = ctx.callFunction(prepare, ctx.undefined, preludeFn);
      if (launchR.error) {
        if (run.killed !== null) {
          launchR.error.dispose();
          return;
        }
        const d = describeError(launchR.error);
        return fail('WF_SANDBOX_PRELUDE_ERROR', `the prelude failed: ${d.name}: ${d.message}`);
      }
      launch = launchR.value;
      run.handles.push(launch);
    }

    // The source must parse as a program on its own first: text that closes the wrapper below
    // (`})(); ... (function () {`) has an unbalanced brace alone, so it cannot run code at top
    // level outside the wrapper's scope. Compiled only, never run. Whether a text parses is a
    // property of the text alone (same engine, same flags), so a text that passed is
    // remembered and not compiled alone again; a text that failed is checked every time.
    const source = run.msg.source;
    /** @type {QuickJSHandle | undefined} */
    let aloneError;
    if (!knownToParse(source)) {
      const alone = evalText(ctx, source, 'workflow.js', { strict: true, compileOnly: true });
      if (alone.error === undefined) {
        alone.value.dispose();
        rememberParsed(source);
      } else {
        aloneError = alone.error;
      }
    }
    // The leading and trailing newlines keep a trailing line comment from swallowing the return.
    // One line precedes the source: outcome.js GUEST_LINE_OFFSET maps error frames back.
    const wrapped = `(function () { 'use strict';\n${source}\n;return typeof run === 'function' ? run : undefined; })()`;
    const guest =
      aloneError === undefined
        ? evalText(ctx, wrapped, 'workflow.js', { strict: true })
        : { error: aloneError };
    if (guest.error) {
      if (run.killed !== null) {
        guest.error.dispose();
        return;
      }
      const d = describeError(guest.error);
      const status = classifyEngineError(d);
      return endRun(run, {
        status: status ?? 'failed',
        code:
          status === 'stack'
            ? 'WF_SANDBOX_STACK_OVERFLOW'
            : status === 'memory'
              ? 'WF_SANDBOX_MEMORY_LIMIT'
              : 'WF_SANDBOX_COMPILE_ERROR',
        message: `the program failed to load: ${d.name}: ${d.message}`,
      });
    }
    const runFn = guest.value;
    run.handles.push(runFn);
    const argsH = newText(ctx, run.msg.argsText);
    run.handles.push(argsH);
    const started = ctx.callFunction(launch, ctx.undefined, runFn, argsH);
    if (started.error) {
      started.error.dispose();
      if (run.killed === null)
        run.kill('failed', 'WF_SANDBOX_INTERNAL', 'the run could not be started');
      return;
    }
    run.launchPromise = started.value;
    run.handles.push(started.value);
  } finally {
    run.endSlice();
  }
  pumpJobs(run, false);
}

/**
 * Sources that compiled on their own as a strict program in this worker (most recently used
 * last), bounded in count and in characters held.
 * @type {Map<string, true>}
 */
const parsesAlone = new Map();
let parsedChars = 0;
const PARSED_MAX = 64;
const PARSED_MAX_CHARS = 4 * 1024 * 1024;

/** @param {string} source */
function knownToParse(source) {
  if (!parsesAlone.has(source)) return false;
  parsesAlone.delete(source);
  parsesAlone.set(source, true);
  return true;
}

/** @param {string} source */
function rememberParsed(source) {
  if (source.length > PARSED_MAX_CHARS / 4 || parsesAlone.has(source)) return;
  parsesAlone.set(source, true);
  parsedChars += source.length;
  for (const old of parsesAlone.keys()) {
    if (parsesAlone.size <= PARSED_MAX && parsedChars <= PARSED_MAX_CHARS) break;
    parsesAlone.delete(old);
    parsedChars -= old.length;
  }
}

/** @param {Run} run */
export function finishKilled(run) {
  if (run.phase === 'ended') return;
  const k = run.killed ?? { status: 'failed', code: 'WF_SANDBOX_INTERNAL', message: 'stopped' };
  endRun(run, k);
}

/**
 * @param {Run} run
 * @param {{ status: string, code: string, message: string, value?: string | null, guestCode?: string }} ending
 */
export function endRun(run, ending) {
  if (run.phase === 'ended') return;
  run.phase = 'ended';
  if (run.killed === null && ending.status !== 'completed') run.killed = ending;
  const held = run.outstanding.size > 0;
  run.held = held;
  if (!run.interrupted && run.killed === null) run.sampleMemory();
  const stats = { ...run.stats(), retiredAfterTrouble: pool.retiredAfterTrouble };
  post({ t: FROM_WORKER.end, runId: run.id, ...ending, held, stats });
  // After the result left: the timer cannot fire in between (this is one synchronous turn).
  if (run.wallTimer !== null) clearTimeout(run.wallTimer);
  // Kill endings with outstanding host calls wait for the host to abort and drain them first.
  if (!held) tearDown(run);
}

/** @param {Run} run */
export function tearDown(run) {
  if (run.tornDown) return;
  run.tornDown = true;
  runs.delete(run.id);
  const entry = run.module;
  if (entry === null) return;
  entry.runs.delete(run);
  if (entry.dead) return;
  // An interrupt or memory exhaustion inside a builtin can leave the heap in a state where
  // rt.dispose() aborts the whole module; such runtimes are abandoned and the module retired.
  const risky =
    run.interrupted || run.killed?.status === 'memory' || run.killed?.status === 'stack';
  if (risky || entry.oomCount > 0) entry.troubled = true;
  if (risky || entry.oomCount > 0) {
    pool.retire(entry);
    return;
  }
  try {
    run.outstanding.clear();
    run.fast?.dispose();
    for (const h of run.handles) if (h.alive) h.dispose();
    run.handles = [];
    run.ctx?.dispose();
    run.rt?.dispose();
  } catch {
    markDead(entry, null);
    return;
  }
  pool.release(entry);
}

/**
 * A host-side exception escaped the engine (V8 stack overflow through WASM frames, or an
 * Emscripten abort): the module's state is unknown, so every run on it ends and it is dropped.
 * @param {Run} run
 * @param {unknown} e
 */
export function hostFault(run, e) {
  const entry = run.module;
  // An engine abort right after the memory refused to grow is the allocation failing inside
  // code that does not handle it (error stacks, for one): that is the memory bound holding.
  if (entry !== null && (entry.oomCount > 0 || entry.failedGrows > 0)) {
    run.interrupted = true;
    run.peakMemoryBytes = Math.max(run.peakMemoryBytes, heapBytes(entry));
    endRun(run, {
      status: 'memory',
      code: 'WF_SANDBOX_MEMORY_LIMIT',
      message: `the run's WebAssembly memory reached its maximum of ${entry.maxPages * PAGE_BYTES} bytes`,
    });
    markDead(entry, run);
    return;
  }
  const status = isHostStackOverflow(e) ? 'stack' : 'failed';
  run.interrupted = true;
  endRun(run, {
    status,
    code: status === 'stack' ? 'WF_SANDBOX_STACK_OVERFLOW' : 'WF_SANDBOX_ENGINE_FAULT',
    message:
      status === 'stack'
        ? 'the engine ran out of native stack'
        : 'the engine faulted and was replaced',
  });
  if (entry !== null) markDead(entry, run);
}

/**
 * @param {ModuleEntry} entry
 * @param {Run | null} culprit
 */
export function markDead(entry, culprit) {
  entry.dead = true;
  entry.troubled = true;
  pool.retire(entry);
  for (const other of [...entry.runs]) {
    if (other === culprit) continue;
    other.interrupted = true;
    endRun(other, {
      status: 'failed',
      code: 'WF_SANDBOX_ENGINE_FAULT',
      message: 'the engine faulted and was replaced',
    });
    entry.runs.delete(other);
    runs.delete(other.id);
  }
}
