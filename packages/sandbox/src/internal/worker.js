// Worker-thread entry: owns reusable QuickJS WASM modules and runs many guest programs, each in a
// fresh runtime + context, pumping their promise jobs and relaying capability calls to the main
// thread as JSON text. Plain ESM JavaScript so it loads unchanged from src/ (tests) and dist/.
// @ts-check
import { parentPort, workerData } from 'node:worker_threads';
import { BOOTSTRAP_SOURCE } from './bootstrap.js';
import { openThreadCpuClock, threadTaskId } from './cpu-clock.js';
import { FastPath } from './fast-path.js';
import { jsonDepthWithin } from './json-shape.js';
import { heapBytes, ModulePool, PAGE_BYTES, pagesFor, useCompiledEngine } from './module-pool.js';
import { classifyEngineError, decodeLaunch } from './outcome.js';
import { pinLocalTimeToUtc } from './utc.js';

/** @typedef {import('./module-pool.js').ModuleEntry} ModuleEntry */
/** @typedef {import('quickjs-emscripten-core').QuickJSRuntime} QuickJSRuntime */
/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */

/**
 * @typedef {object} WorkerLimits
 * @property {number} memoryBytes
 * @property {number} stackBytes
 * @property {number} cpuSliceMs
 * @property {number} cpuMs
 * @property {number} wallMs
 * @property {number} maxHostCalls
 * @property {number} maxOutstandingCalls
 * @property {number} maxArgBytes
 * @property {number} maxResultBytes
 * @property {number} maxJsonDepth
 * @property {number} maxErrorChars
 */

/**
 * @typedef {object} StartMessage
 * @property {'start'} t
 * @property {number} runId
 * @property {string} source
 * @property {string} argsText
 * @property {string | null} prelude
 * @property {string[]} capabilities
 * @property {WorkerLimits} limits
 * @property {number} seed
 * @property {number} startTime
 * @property {[number, string][]} [replay] settlements this run received on a worker it lost
 */

/** @typedef {{ status: string, code: string, message: string }} Ending */

if (parentPort === null) throw new Error('this module must run in a worker thread');
const port = parentPort;
const workerId = /** @type {string} */ (workerData?.workerId ?? 'w?');
const moduleHighWaterBytes = /** @type {number} */ (
  workerData?.moduleHighWaterBytes ?? 32 * 1024 * 1024
);
const moduleMaxRuns = /** @type {number} */ (workerData?.moduleMaxRuns ?? 2000);
// Shared with the main thread: [slice start (epoch ms), run id or 0, thread CPU ms at the slice's
// CPU baseline, when that was taken (epoch ms)]. QuickJS polls its interrupt handler by operation
// count, so a builtin-heavy slice can run long between polls; the main thread reads this slot
// and replaces the worker when one slice overstays its CPU limit.
const sliceSlot = /** @type {Float64Array} */ (
  workerData?.sliceBuffer instanceof SharedArrayBuffer
    ? new Float64Array(workerData.sliceBuffer)
    : new Float64Array(4)
);

pinLocalTimeToUtc();

useCompiledEngine(workerData?.wasmModule);
const pool = new ModulePool({
  workerId,
  highWaterBytes: moduleHighWaterBytes,
  maxRuns: moduleMaxRuns,
  warm: /** @type {number} */ (workerData?.warmModules ?? 2),
  maxIdle: /** @type {number} */ (workerData?.maxIdleModules ?? 8),
  prepare: (entry) => buildSlot(entry),
  discard: (slot) => discardSlot(slot),
});
pool.warmPages = pagesFor(/** @type {number} */ (workerData?.memoryBytes ?? 64 * 1024 * 1024));

const now = () => performance.now();
const MIN_SAMPLE_MS = 2;
/** This thread's CPU clock (ms), or null where only wall time is available. */
const cpuClock = openThreadCpuClock();
/** A slice takes its CPU baseline at its first interrupt poll after this long (before: wall time). */
const CPU_BASE_AFTER_MS = 0;
/** Re-read the CPU clock at most this often while a slice is over a limit in wall time. */
const CPU_RECHECK_MS = 2;
/** Jobs run between two looks at the clock, and the pump's quantum before it yields. */
const JOB_BATCH = 64;
const PUMP_QUANTUM_MS = 10;

/** @type {Map<number, Run>} */
const runs = new Map();

/** @param {unknown} value */
function post(value) {
  port.postMessage(value);
}

/**
 * @param {string} code
 * @param {string} message
 */
function refusal(code, message) {
  return JSON.stringify({ code, message });
}

/** @param {unknown} e */
function isHostStackOverflow(e) {
  return e instanceof RangeError && /call stack/i.test(String(e.message));
}

class Run {
  /** @param {StartMessage} msg */
  constructor(msg) {
    this.id = msg.runId;
    this.msg = msg;
    this.limits = msg.limits;
    this.capSet = new Set(msg.capabilities);
    /** @type {ModuleEntry | null} */
    this.module = null;
    /** @type {QuickJSRuntime | null} */
    this.rt = null;
    /** @type {QuickJSContext | null} */
    this.ctx = null;
    /** @type {QuickJSHandle | null} */
    this.launchPromise = null;
    /** @type {QuickJSHandle[]} */
    this.handles = [];
    /** Accepted host calls not yet settled (invariant 3). @type {Set<number>} */
    this.outstanding = new Set();
    /** @type {QuickJSHandle | null} */
    this.deliver = null;
    /** @type {QuickJSHandle | null} */
    this.drain = null;
    /** @type {FastPath | null} */
    this.fast = null;
    this.callSeq = 0;
    this.hostCalls = 0;
    this.cpuMs = 0;
    this.peakMemoryBytes = 0;
    this.lastSample = 0;
    this.sampleCost = 0;
    /** Linear-memory growth that happened while this run's guest code executed. */
    this.heapCharged = 0;
    this.heapMark = 0;
    this.sliceStart = now();
    /** CPU clock at the slice's first poll after CPU_BASE_AFTER_MS, or -1. */
    this.sliceCpuBase = -1;
    this.sliceWallAtBase = 0;
    /** Last precise slice CPU reading and when it was taken (rate limit). */
    this.sliceCpuSeen = 0;
    this.sliceCpuSeenAt = 0;
    this.wallDeadline = now() + msg.limits.wallMs;
    /** @type {Ending | null} */
    this.killed = null;
    /** Set when the interrupt handler stopped guest code mid-execution. */
    this.interrupted = false;
    /** @type {'running' | 'settled' | 'ended'} */
    this.phase = 'running';
    /** @type {{ status: string, code?: string, message?: string, value?: string | null, guestCode?: string } | null} */
    this.result = null;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.wallTimer = null;
    this.held = false;
    this.tornDown = false;
    /**
     * Settlements waiting for delivery: those that arrived before the run was set up, its
     * replay log, and those that arrived while its job pump was yielded. @type {[number, string][]}
     */
    this.queue = [];
    this.ready = false;
    /** The job pump paused after a quantum so other runs on this worker get their turn. */
    this.yielded = false;
  }

  /**
   * @param {string} status
   * @param {string} code
   * @param {string} message
   */
  kill(status, code, message) {
    if (this.killed === null) this.killed = { status, code, message };
  }

  /**
   * Charges this run with WASM linear-memory growth since the last mark. Only one run executes
   * at a time in a worker, so growth during its slice is its own. This catches allocations the
   * engine's object walk does not count (for example strings held through ropes).
   */
  chargeHeapGrowth() {
    if (this.module === null) return;
    if (this.module.oomCount > 0) {
      // Host fact: an allocation failed at the module's hard maximum. The guest may have caught
      // the engine's error; the run still ends with status memory.
      this.peakMemoryBytes = Math.max(this.peakMemoryBytes, heapBytes(this.module));
      this.kill(
        'memory',
        'WF_SANDBOX_MEMORY_LIMIT',
        `the run's WebAssembly memory reached its maximum of ${this.module.maxPages * PAGE_BYTES} bytes`,
      );
      return;
    }
    const h = heapBytes(this.module);
    if (h > this.heapMark) {
      this.heapCharged += h - this.heapMark;
      if (this.heapCharged > this.peakMemoryBytes) this.peakMemoryBytes = this.heapCharged;
      if (this.heapCharged > this.limits.memoryBytes) {
        this.kill(
          'memory',
          'WF_SANDBOX_MEMORY_LIMIT',
          `the run used more than ${this.limits.memoryBytes} bytes of guest memory`,
        );
      }
    }
    this.heapMark = h;
  }

  /** Starts a synchronous guest slice. */
  beginSlice() {
    this.sliceStart = now();
    this.sliceCpuBase = -1;
    this.sliceCpuSeenAt = 0;
    sliceSlot[0] = performance.timeOrigin + this.sliceStart;
    sliceSlot[1] = this.id;
    if (this.module !== null) this.heapMark = heapBytes(this.module);
  }

  /**
   * CPU time of the current slice: wall time up to the CPU baseline (at most ~1 ms plus one poll
   * interval), then this thread's CPU clock, so time the thread spent descheduled on a busy
   * machine is not charged. Without a baseline it is the wall time (an upper bound).
   * @param {number} t now()
   */
  sliceCpu(t) {
    if (cpuClock === null || this.sliceCpuBase < 0) return t - this.sliceStart;
    return this.sliceWallAtBase - this.sliceStart + (cpuClock() - this.sliceCpuBase);
  }

  /** Ends the slice: accounts CPU time and memory growth. */
  endSlice() {
    sliceSlot[1] = 0;
    this.cpuMs += this.sliceCpu(now());
    this.chargeHeapGrowth();
    if (this.killed === null && this.cpuMs > this.limits.cpuMs) this.killCpuBudget();
  }

  killCpuBudget() {
    this.kill(
      'timeout',
      'WF_SANDBOX_CPU_BUDGET',
      `the run used more than its CPU budget of ${this.limits.cpuMs} ms`,
    );
  }

  /**
   * Checks the CPU limits at a poll. Wall time bounds CPU time from above, so the clock is read
   * only when the wall time of the slice already exceeds a limit.
   * @param {number} t now()
   */
  checkCpu(t) {
    const L = this.limits;
    const wall = t - this.sliceStart;
    if (cpuClock !== null && this.sliceCpuBase < 0 && wall >= CPU_BASE_AFTER_MS) {
      this.sliceCpuBase = cpuClock();
      this.sliceWallAtBase = t;
      // Shared with the main thread's watchdog, which reads the same thread clock.
      sliceSlot[2] = this.sliceCpuBase;
      sliceSlot[3] = performance.timeOrigin + t;
    }
    if (wall <= L.cpuSliceMs && this.cpuMs + wall <= L.cpuMs) return;
    if (t - this.sliceCpuSeenAt >= CPU_RECHECK_MS) {
      this.sliceCpuSeen = this.sliceCpu(t);
      this.sliceCpuSeenAt = t;
    }
    const cpu = this.sliceCpuSeen;
    if (cpu > L.cpuSliceMs) {
      this.kill(
        'timeout',
        'WF_SANDBOX_CPU_SLICE',
        `a synchronous guest slice used more than ${L.cpuSliceMs} ms of CPU`,
      );
    } else if (this.cpuMs + cpu > L.cpuMs) {
      this.killCpuBudget();
    }
  }

  sampleMemory() {
    const rt = this.rt;
    if (rt === null) return;
    const t0 = now();
    let used = -1;
    try {
      const m = /memory used\s+\d+\s+(\d+)/.exec(rt.dumpMemoryUsage());
      if (m !== null) used = Number(m[1]);
    } catch {
      used = -1;
    }
    const t1 = now();
    this.sampleCost = t1 - t0;
    this.lastSample = t1;
    if (used > this.peakMemoryBytes) this.peakMemoryBytes = used;
    if (used > this.limits.memoryBytes) {
      this.kill(
        'memory',
        'WF_SANDBOX_MEMORY_LIMIT',
        `the run used more than ${this.limits.memoryBytes} bytes of guest memory`,
      );
    }
  }

  /** Polled by QuickJS while guest code runs; returning true throws an uncatchable interrupt. */
  shouldInterrupt() {
    if (this.killed !== null) {
      this.interrupted = true;
      return true;
    }
    const t = now();
    this.checkCpu(t);
    if (this.killed !== null) {
      // stopped by a CPU limit
    } else if (t > this.wallDeadline) {
      this.kill(
        'timeout',
        'WF_SANDBOX_WALL_TIMEOUT',
        `the run exceeded its wall-clock limit of ${this.limits.wallMs} ms`,
      );
    } else {
      this.chargeHeapGrowth();
      if (
        this.killed === null &&
        t - this.lastSample > Math.max(MIN_SAMPLE_MS, 4 * this.sampleCost)
      ) {
        this.sampleMemory();
      }
    }
    if (this.killed !== null) {
      this.interrupted = true;
      return true;
    }
    return false;
  }

  stats() {
    return {
      cpuMs: this.cpuMs,
      hostCalls: this.hostCalls,
      peakMemoryBytes: this.peakMemoryBytes,
      workerId,
      moduleId: this.module?.id ?? '',
    };
  }
}

/**
 * The one hidden host function: the kernel calls it only to report that a call cap was hit
 * while the guest was queueing calls, so the run ends at once with status limit. It validates
 * typeof before reading (no coercion, no guest getters).
 * @param {Run} run
 * @param {QuickJSContext} ctx
 * @param {QuickJSHandle | undefined} codeH
 * @returns {undefined}
 */
function hostSignal(run, ctx, codeH) {
  const L = run.limits;
  const code = codeH !== undefined && ctx.typeof(codeH) === 'string' ? ctx.getString(codeH) : '';
  if (code === 'WF_SANDBOX_HOST_CALL_LIMIT') {
    run.kill('limit', code, `more than ${L.maxHostCalls} host calls`);
  } else if (code === 'WF_SANDBOX_OUTSTANDING_LIMIT') {
    run.kill('limit', code, `more than ${L.maxOutstandingCalls} host calls outstanding at once`);
  } else if (code === 'WF_SANDBOX_ARGUMENT_TOO_LARGE') {
    run.kill('limit', code, `a capability input is larger than ${L.maxArgBytes} bytes`);
  }
  return undefined;
}

/**
 * Takes the calls the guest queued during the slice and validates each before it has any
 * effect: sequence, capability, caps, size and depth (invariant 2). Accepted calls go to the
 * main thread; a cap violation ends the run with status limit.
 * @param {Run} run
 */
function drainCalls(run) {
  if (run.fast === null || run.drain === null || run.killed !== null || run.phase === 'ended')
    return;
  const text = run.fast.callString(run.drain);
  if (text === '') return;
  for (const entry of text.split('\u0001')) {
    if (run.killed !== null) return;
    acceptCall(run, entry);
  }
}

/**
 * @param {Run} run
 * @param {string} entry "<call id>\n<capability>\n<input JSON or empty>"
 */
function acceptCall(run, entry) {
  const L = run.limits;
  const a = entry.indexOf('\n');
  const b = a < 0 ? -1 : entry.indexOf('\n', a + 1);
  const callId = a < 0 ? Number.NaN : Number(entry.slice(0, a));
  if (b < 0 || callId !== run.callSeq + 1) {
    run.kill('failed', 'WF_SANDBOX_INTERNAL', 'the guest call queue is inconsistent');
    return;
  }
  run.callSeq = callId;
  const name = entry.slice(a + 1, b);
  const text = entry.slice(b + 1);
  /** @param {string} code @param {string} message */
  const fatal = (code, message) => run.kill('limit', code, message);
  if (run.hostCalls >= L.maxHostCalls)
    return fatal('WF_SANDBOX_HOST_CALL_LIMIT', `more than ${L.maxHostCalls} host calls`);
  if (run.outstanding.size >= L.maxOutstandingCalls) {
    return fatal(
      'WF_SANDBOX_OUTSTANDING_LIMIT',
      `more than ${L.maxOutstandingCalls} host calls outstanding at once`,
    );
  }
  // UTF-8 needs at most 3 bytes per UTF-16 unit, so short inputs skip the exact count.
  if (text.length * 3 > L.maxArgBytes && Buffer.byteLength(text, 'utf8') > L.maxArgBytes) {
    return fatal(
      'WF_SANDBOX_ARGUMENT_TOO_LARGE',
      `a capability input is larger than ${L.maxArgBytes} bytes`,
    );
  }
  // Nesting deeper than maxJsonDepth needs more brackets than that.
  if (text.length > L.maxJsonDepth && !jsonDepthWithin(text, L.maxJsonDepth)) {
    return fatal(
      'WF_SANDBOX_ARGUMENT_TOO_DEEP',
      `a capability input nests deeper than ${L.maxJsonDepth}`,
    );
  }
  run.outstanding.add(callId);
  if (!run.capSet.has(name) || run.phase !== 'running') {
    // Refused without effect; the refusal is delivered like any settlement, in order.
    const envelope =
      run.phase !== 'running'
        ? `{"ok":false,"e":${refusal('WF_SANDBOX_BRIDGE_CLOSED', 'run() has returned; new host calls are refused')}}`
        : `{"ok":false,"e":${refusal('WF_SANDBOX_UNKNOWN_CAPABILITY', 'no such capability')}}`;
    // Settled through the main thread, in order with host settlements (and replayed with them).
    post({ t: 'call', runId: run.id, callId, name, input: '', refuse: envelope });
    return;
  }
  run.hostCalls += 1;
  post({ t: 'call', runId: run.id, callId, name, input: text });
}

/** @param {StartMessage} msg */
async function start(msg) {
  const run = new Run(msg);
  runs.set(run.id, run);
  let entry;
  try {
    entry = await pool.acquire(pagesFor(msg.limits.memoryBytes));
  } catch {
    endRun(run, {
      status: 'failed',
      code: 'WF_SANDBOX_ENGINE_FAULT',
      message: 'the engine could not be loaded',
    });
    return;
  }
  if (isEnded(run)) {
    pool.release(entry);
    return;
  }
  run.module = entry;
  entry.runs.add(run);
  entry.runCount += 1;
  run.wallDeadline = now() + msg.limits.wallMs;
  run.wallTimer = setTimeout(
    () => {
      run.kill(
        'timeout',
        'WF_SANDBOX_WALL_TIMEOUT',
        `the run exceeded its wall-clock limit of ${msg.limits.wallMs} ms`,
      );
      finishKilled(run);
    },
    Math.min(msg.limits.wallMs, 2 ** 31 - 1),
  ); // Node fires longer timers at once
  try {
    setUp(run, entry);
  } catch (e) {
    hostFault(run, e);
    return;
  }
  if (isEnded(run)) return;
  // A replay delivers what the lost worker had delivered, in the same order; the guest is
  // deterministic given those, so it makes the same calls with the same ids.
  run.queue = [...(msg.replay ?? []), ...run.queue];
  run.ready = true;
  afterPump(run);
}

/**
 * After a pump reached quiescence: decide the run's state, then deliver queued settlements.
 * Deliveries wait while the pump is yielded, so the guest sees exactly the order it would see
 * without yielding (each settlement after the jobs of the previous one ran to quiescence).
 * @param {Run} run
 */
function afterPump(run) {
  if (run.yielded) return;
  check(run);
  while (run.queue.length > 0 && !run.yielded && !isEnded(run) && run.killed === null) {
    const [callId, envelope] = /** @type {[number, string]} */ (run.queue.shift());
    if (!run.outstanding.has(callId)) {
      run.kill(
        'failed',
        'WF_SANDBOX_INTERNAL',
        'a settlement arrived for a call the run did not make',
      );
      finishKilled(run);
      return;
    }
    deliver(run, callId, envelope);
  }
}

/** Continues a yielded job pump. @param {Run} run */
function resume(run) {
  if (isEnded(run) || !run.yielded) return;
  run.yielded = false;
  try {
    pumpJobs(run, false);
  } catch (e) {
    sliceSlot[1] = 0;
    hostFault(run, e);
    return;
  }
  afterPump(run);
}

/** @param {Run} run (a function so that type narrowing does not outlive calls that end the run) */
function isEnded(run) {
  return run.phase === 'ended';
}

/**
 * A fresh runtime + context with the kernel already evaluated, not yet given to any run. It is
 * built while the worker is idle so a run does not wait for the kernel; no guest code has run
 * in it, and it serves exactly one run.
 * @typedef {object} Slot
 * @property {ModuleEntry} entry
 * @property {QuickJSRuntime} rt
 * @property {QuickJSContext} ctx
 * @property {QuickJSHandle[]} handles
 * @property {QuickJSHandle} configure
 * @property {QuickJSHandle} describe
 * @property {QuickJSHandle} deliver
 * @property {QuickJSHandle} drain
 * @property {FastPath} fast
 * @property {{ run: Run | null }} owner
 */

/**
 * @param {ModuleEntry} entry
 * @returns {Slot}
 */
function buildSlot(entry) {
  /** @type {{ run: Run | null }} */
  const owner = { run: null };
  const rt = entry.mod.newRuntime();
  // The kernel is trusted and terminates; guest limits apply once a run owns the slot.
  rt.setInterruptHandler(() => owner.run?.shouldInterrupt() ?? false);
  const ctx = rt.newContext();
  /** @type {QuickJSHandle[]} */
  const handles = [];
  const fail = () => {
    for (const h of handles) if (h.alive) h.dispose();
    ctx.dispose();
    rt.dispose();
    throw new Error('the sandbox kernel failed to load');
  };
  const boot = ctx.evalCode(BOOTSTRAP_SOURCE, 'sandbox-kernel.js', { strict: true });
  if (boot.error) {
    boot.error.dispose();
    return fail();
  }
  handles.push(boot.value);
  const hostFn = ctx.newFunction('host', (codeH) => {
    const run = owner.run;
    if (run !== null) hostSignal(run, ctx, codeH);
    return undefined;
  });
  handles.push(hostFn);
  const kernelR = ctx.callFunction(boot.value, ctx.undefined, hostFn);
  if (kernelR.error) {
    kernelR.error.dispose();
    return fail();
  }
  const kernel = kernelR.value;
  handles.push(kernel);
  // Read before any prelude or guest code ran: the kernel object is null-prototype and frozen.
  const configure = ctx.getProp(kernel, 'configure');
  const describe = ctx.getProp(kernel, 'describe');
  const deliver = ctx.getProp(kernel, 'deliver');
  const drain = ctx.getProp(kernel, 'drain');
  handles.push(configure, describe, deliver, drain);
  const fast = new FastPath(entry, rt, ctx);
  return { entry, rt, ctx, handles, configure, describe, deliver, drain, fast, owner };
}

/** Disposes a slot that no run will use. @param {Slot} slot */
function discardSlot(slot) {
  slot.fast.dispose();
  for (const h of slot.handles) if (h.alive) h.dispose();
  slot.ctx.dispose();
  slot.rt.dispose();
}

/**
 * @param {Run} run
 * @param {ModuleEntry} entry
 */
function setUp(run, entry) {
  const L = run.limits;
  let slot = /** @type {Slot | null} */ (entry.slot);
  entry.slot = null;
  if (slot === null) slot = buildSlot(entry);
  const { rt, ctx } = slot;
  run.rt = rt;
  run.ctx = ctx;
  run.handles.push(...slot.handles);
  run.deliver = slot.deliver;
  run.drain = slot.drain;
  run.fast = slot.fast;
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
    });
    const configH = ctx.newString(config);
    run.handles.push(configH);
    const prepareR = ctx.callFunction(slot.configure, ctx.undefined, configH);
    if (prepareR.error) {
      prepareR.error.dispose();
      return fail('WF_SANDBOX_INTERNAL', 'the sandbox kernel could not be configured');
    }
    const prepare = prepareR.value;
    run.handles.push(prepare);
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

    let preludeFn = ctx.undefined;
    if (run.msg.prelude !== null) {
      const pr = ctx.evalCode(`(${run.msg.prelude}\n)`, 'prelude.js', { strict: true });
      if (pr.error) {
        const d = describeError(pr.error);
        return fail(
          'WF_SANDBOX_PRELUDE_ERROR',
          `the prelude failed to compile: ${d.name}: ${d.message}`,
        );
      }
      preludeFn = pr.value;
      run.handles.push(preludeFn);
    }
    const launchR = ctx.callFunction(prepare, ctx.undefined, preludeFn);
    if (launchR.error) {
      if (run.killed !== null) {
        launchR.error.dispose();
        return;
      }
      const d = describeError(launchR.error);
      return fail('WF_SANDBOX_PRELUDE_ERROR', `the prelude failed: ${d.name}: ${d.message}`);
    }
    const launch = launchR.value;
    run.handles.push(launch);

    // The leading and trailing newlines keep a trailing line comment from swallowing the return.
    const wrapped = `(function () { 'use strict';\n${run.msg.source}\n;return typeof run === 'function' ? run : undefined; })()`;
    const guest = ctx.evalCode(wrapped, 'workflow.js', { strict: true });
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
    const argsH = ctx.newString(run.msg.argsText);
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
 * Runs guest jobs to quiescence (one synchronous slice).
 * @param {Run} run
 * @param {boolean} inSlice true when the caller already began the slice (a delivery)
 */
function pumpJobs(run, inSlice) {
  const fast = run.fast;
  if (fast === null || run.killed !== null || run.phase === 'ended') {
    if (inSlice) run.endSlice();
    return;
  }
  if (!inSlice) run.beginSlice();
  try {
    for (let guard = 0; guard < 100_000_000; guard += 1) {
      const r = fast.runJobs(JOB_BATCH);
      if (r === 'error') {
        if (run.killed !== null) break;
        continue;
      }
      if (r === 'none') break;
      // Fairness: after a quantum the pump yields to the event loop, so settlements of other
      // runs on this worker are served in between (round-robin); the run is charged its own CPU.
      if (now() - run.sliceStart >= PUMP_QUANTUM_MS && fast.hasJobs()) {
        run.yielded = true;
        break;
      }
    }
    drainCalls(run);
  } finally {
    run.endSlice();
    if (run.killed === null && now() - run.lastSample > Math.max(20, 8 * run.sampleCost)) {
      run.sampleMemory();
    }
  }
  if (run.yielded) setImmediate(() => resume(run));
}

/** Decides what the run's state means after a slice, from host-side facts. @param {Run} run */
function check(run) {
  if (run.phase === 'ended') return;
  if (run.killed !== null) return finishKilled(run);
  const ctx = run.ctx;
  if (ctx === null || run.launchPromise === null) return;
  if (run.result === null) {
    const state = ctx.getPromiseState(run.launchPromise);
    if (state.type === 'pending') {
      if (run.outstanding.size === 0 && !run.rt?.hasPendingJob()) {
        run.kill(
          'deadlock',
          'WF_SANDBOX_DEADLOCK',
          'run() is pending with no queued jobs and no outstanding host calls',
        );
        return finishKilled(run);
      }
      return;
    }
    if (state.type === 'rejected') {
      state.error.dispose();
      run.kill('failed', 'WF_SANDBOX_INTERNAL', 'the run was stopped by the engine');
      return finishKilled(run);
    }
    const h = state.value;
    const text = ctx.typeof(h) === 'string' ? ctx.getString(h) : '';
    h.dispose();
    run.result = decodeLaunch(run.limits, text);
    // invariant 3: run() has settled; new calls are refused while accepted ones drain.
    run.phase = 'settled';
  }
  if (run.outstanding.size === 0) {
    const r = run.result;
    endRun(run, {
      status: r.status,
      code: r.code ?? '',
      message: r.message ?? '',
      ...(r.value !== undefined ? { value: r.value } : {}),
      ...(r.guestCode !== undefined ? { guestCode: r.guestCode } : {}),
    });
  }
}

/** @param {Run} run */
function finishKilled(run) {
  if (run.phase === 'ended') return;
  const k = run.killed ?? { status: 'failed', code: 'WF_SANDBOX_INTERNAL', message: 'stopped' };
  endRun(run, k);
}

/**
 * @param {Run} run
 * @param {{ status: string, code: string, message: string, value?: string | null, guestCode?: string }} ending
 */
function endRun(run, ending) {
  if (run.phase === 'ended') return;
  run.phase = 'ended';
  if (run.killed === null && ending.status !== 'completed') run.killed = ending;
  if (run.wallTimer !== null) clearTimeout(run.wallTimer);
  const held = run.outstanding.size > 0;
  run.held = held;
  if (!run.interrupted && run.killed === null) run.sampleMemory();
  post({ t: 'end', runId: run.id, ...ending, held, stats: run.stats() });
  // Kill endings with outstanding host calls wait for the host to abort and drain them first.
  if (!held) tearDown(run);
}

/** @param {Run} run */
function tearDown(run) {
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
function hostFault(run, e) {
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
function markDead(entry, culprit) {
  entry.dead = true;
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

/**
 * @param {number} runId
 * @param {number} callId
 * @param {string} envelope
 */
function settle(runId, callId, envelope) {
  const run = runs.get(runId);
  if (run === undefined || run.killed !== null || run.phase === 'ended') return;
  if (!run.ready || run.yielded || run.queue.length > 0) {
    run.queue.push([callId, envelope]);
    return;
  }
  deliver(run, callId, envelope);
}

/**
 * @param {Run} run
 * @param {number} callId
 * @param {string} envelope
 */
function deliver(run, callId, envelope) {
  if (run.killed !== null || run.phase === 'ended') return;
  const ctx = run.ctx;
  const deliver = run.deliver;
  if (ctx === null || deliver === null || !run.outstanding.delete(callId)) return;
  run.beginSlice();
  try {
    const messageH = ctx.newString(`${callId}:${envelope}`);
    run.fast?.callDiscard(deliver, messageH);
    messageH.dispose();
    pumpJobs(run, true);
  } catch (e) {
    sliceSlot[1] = 0;
    hostFault(run, e);
    return;
  }
  if (!run.yielded) check(run);
}

port.on('message', (/** @type {any} */ msg) => {
  switch (msg.t) {
    case 'start':
      void start(msg);
      break;
    case 'settle':
      settle(msg.runId, msg.callId, msg.env);
      break;
    case 'close': {
      const run = runs.get(msg.runId);
      if (run === undefined || run.phase === 'ended') break;
      if (msg.reason === 'aborted')
        run.kill('aborted', 'WF_SANDBOX_ABORTED', 'the run was aborted by its caller');
      else
        run.kill(
          'timeout',
          'WF_SANDBOX_WALL_TIMEOUT',
          `the run exceeded its wall-clock limit of ${run.limits.wallMs} ms`,
        );
      finishKilled(run);
      break;
    }
    case 'dispose': {
      const run = runs.get(msg.runId);
      if (run !== undefined) tearDown(run);
      post({ t: 'disposed', runId: msg.runId });
      break;
    }
    default:
      break;
  }
});

// The task id lets the main thread read this thread's CPU clock for its slice watchdog.
const tid = threadTaskId();
void pool.warmUp().then(
  () => post({ t: 'ready', tid }),
  () => post({ t: 'ready', tid }),
);
