// One guest run inside a worker: its runtime handles, outstanding calls, limits, CPU and memory
// accounting per slice, and how it is killed.
// @ts-check
import { FastPath } from './fast-path.js';
import { heapBytes, PAGE_BYTES } from './module-pool.js';
import {
  CPU_BASE_AFTER_MS,
  CPU_RECHECK_MS,
  cpuClock,
  MIN_SAMPLE_MS,
  now,
  sliceSlot,
  workerId,
} from './worker-thread.js';

/** @typedef {import('quickjs-emscripten-core').QuickJSRuntime} QuickJSRuntime */
/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */
/** @typedef {import('./module-pool.js').ModuleEntry} ModuleEntry */
/** @typedef {import('./protocol.js').StartMessage} StartMessage */
/** @typedef {{ status: string, code: string, message: string }} Ending */

export class Run {
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
   * CPU time of the current slice: wall time up to the CPU baseline (at most one poll interval
   * and a clock read), then this thread's CPU clock, so time the thread spent descheduled on a busy
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

  /**
   * Samples the runtime's live heap (the engine's object walk). Between slices the cheaper
   * FastPath reading is used; inside the interrupt handler (`inGuest`) the text report, which
   * makes no guest objects. Both read the same engine figure.
   * @param {boolean} [inGuest]
   */
  sampleMemory(inGuest = false) {
    const rt = this.rt;
    if (rt === null) return;
    const t0 = now();
    let used = -1;
    try {
      if (!inGuest && this.fast !== null) {
        used = this.fast.memoryUsed();
      } else {
        const m = /memory used\s+\d+\s+(\d+)/.exec(rt.dumpMemoryUsage());
        if (m !== null) used = Number(m[1]);
      }
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
        this.sampleMemory(true);
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
