// Per-run QuickJS WASM modules: each executing run owns one module whose WebAssembly.Memory has a
// hard maximum, so its allocations fail inside the engine instead of growing the host. Keeps idle
// modules warm (with a prebuilt, hardened runtime/context), as many as recent demand needed, and
// builds them only while the worker is idle, one short step at a time, so that a refill never
// holds up a run that is starting or waiting for a settlement.
// @ts-check
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import { compileEngineBinary, isWasmModule } from './engine-wasm.js';
import { applyWasmTiering } from './tiering.js';

/** @typedef {import('quickjs-emscripten-core').QuickJSWASMModule} QuickJSWASMModule */
/** @typedef {{ buffer: ArrayBuffer, grow(delta: number): number }} WasmMemory */

// The project's TypeScript lib has no WebAssembly declarations (no DOM lib), so it is typed here.
const WA = /** @type {any} */ (globalThis).WebAssembly;

export const PAGE_BYTES = 64 * 1024;
/** The release-sync build declares a 16 MiB initial memory; a module cannot start smaller. */
export const MIN_PAGES = 256;
/**
 * Emscripten's heap resize tries three sizes (cut down 1, 2, 4) before malloc fails, so three
 * failed grows in a row mean an allocation really failed at the memory's maximum.
 */
const FAILED_GROWS_FOR_OOM = 3;

/**
 * @typedef {object} ModuleEntry
 * @property {string} id
 * @property {QuickJSWASMModule} mod
 * @property {WasmMemory} memory
 * @property {number} maxPages
 * @property {Set<any>} runs the run that owns it (at most one), for fault handling
 * @property {boolean} retired
 * @property {boolean} troubled a run on it was interrupted, overflowed or faulted: never reusable
 * @property {boolean} dead
 * @property {number} runCount
 * @property {number} failedGrows consecutive failed memory.grow calls
 * @property {number} oomCount allocations that failed because the memory hit its maximum
 * @property {{ ready: boolean } | null} slot a runtime + context for the next run (ready: the kernel
 *   ran in it), or null
 */

/** The worker counts as idle once no message or job slice touched the pool for this long. */
export const IDLE_MS = 5;
/**
 * The same while runs are held: a run between two host calls is not idle, unless its host is
 * slow (an agent call, say), so building waits longer before it takes the thread.
 */
export const HELD_IDLE_MS = 50;
/**
 * After boot the worker stays quiet this long (until then, or until a run arrives: then the usual idle rule): the main
 * thread is about to send that run, and a refill step begun in the gap (a module instantiation,
 * tens of ms) would delay a fresh process's first result by as much.
 */
export const BOOT_QUIET_MS = 100;

/** Pages for a run's memory limit: the hard maximum of its module's linear memory. */
export function pagesFor(/** @type {number} */ memoryBytes) {
  return Math.max(MIN_PAGES, Math.ceil(memoryBytes / PAGE_BYTES));
}

/** @param {ModuleEntry} entry */
export function heapBytes(entry) {
  return entry.memory.buffer.byteLength;
}

/** @type {Promise<unknown> | null} */
let compiled = null;

/** @type {((wasmModule: unknown) => void) | null} */
let awaitingEngine = null;

/** Compiles the engine's WASM binary in this worker (when no thread sent one). */
function compileEngine() {
  applyWasmTiering(); // before the compile: V8 decides a module's tiers when it compiles it
  return compileEngineBinary();
}

/**
 * The main thread is compiling the engine while this thread boots and will post it
 * (TO_WORKER.engine): compiledModule() waits for that instead of compiling it again.
 */
export function expectEngine() {
  if (compiled !== null) return;
  compiled = new Promise((resolve) => {
    awaitingEngine = resolve;
  });
}

/**
 * The engine the main thread compiled, or null when its compile failed: this worker then
 * compiles it itself (and reports that error, if it fails here too).
 * @param {unknown} wasmModule
 */
export function receiveEngine(wasmModule) {
  const resolve = awaitingEngine;
  if (resolve === null) return;
  awaitingEngine = null;
  if (isWasmModule(wasmModule)) {
    resolve(wasmModule);
    return;
  }
  compiled = null;
  resolve(compiledModule());
}

/**
 * Uses a WebAssembly.Module compiled elsewhere. V8 shares compiled (and tiered-up) code between
 * the threads a module is posted to, so a fresh worker does not start from cold code.
 * @param {unknown} wasmModule
 */
export function useCompiledEngine(wasmModule) {
  if (isWasmModule(wasmModule)) compiled = Promise.resolve(wasmModule);
}

/** Every module instantiates the same compiled code. @returns {Promise<unknown>} */
export function compiledModule() {
  if (compiled === null) {
    const loading = compileEngine();
    compiled = loading;
    loading.catch(() => {
      compiled = null;
    });
    return loading;
  }
  return compiled;
}

export class ModulePool {
  /**
   * @param {object} o
   * @param {string} o.workerId
   * @param {number} o.highWaterBytes a module whose memory grew past this is not reused
   * @param {number} o.maxRuns a module is not reused after this many runs
   * @param {number} o.warm idle modules kept ready at least (for the most recent memory size)
   * @param {number} o.maxIdle idle modules kept at most
   * @param {(entry: ModuleEntry, slot: any) => any} o.prepare one step of building a slot in a
   *   module: from null (or a partial slot) to the next stage; a slot is done when `ready`
   * @param {(slot: any) => void} o.discard disposes a slot that will not be used
   * @param {() => number} o.active runs the worker holds now (the demand for modules)
   */
  constructor(o) {
    this.o = o;
    this.seq = 0;
    /** @type {ModuleEntry[]} */
    this.idle = [];
    this.creating = 0;
    this.warmPages = MIN_PAGES;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.topUpTimer = null;
    /** Most modules in use at once recently: how many to keep warm (decays while idle). */
    this.demand = 0;
    /** When a message or job slice last touched this worker (performance.now()). */
    this.lastActivity = 0;
    /**
     * Modules retired after trouble (`troubled`), not wear or a full idle set: reported in run
     * stats, so a retirement itself is observable whatever the reuse policy.
     */
    this.retiredAfterTrouble = 0;
    /** The compiled engine (a WebAssembly.Module) once a module was made from it, else null. */
    this.engine = /** @type {unknown} */ (null);
  }

  /** Marks the worker busy: refill steps wait until it has been idle for IDLE_MS. */
  touch() {
    this.lastActivity = performance.now();
  }

  /**
   * Idle modules to keep ready: recent peak demand, within [warm, maxIdle]. While runs are held
   * (waiting on host calls, say) only `warm`: building more would take CPU from those runs; the
   * rest is built once they have all ended.
   */
  target() {
    if (this.o.active() > 0) return this.o.warm;
    return Math.min(this.o.maxIdle, Math.max(this.o.warm, this.demand));
  }

  /** @param {number} maxPages @returns {Promise<ModuleEntry>} */
  async create(maxPages) {
    const wasmModule = await compiledModule();
    this.engine = wasmModule;
    /** @type {WasmMemory} */
    const memory = new WA.Memory({ initial: MIN_PAGES, maximum: maxPages });
    this.seq += 1;
    /** @type {ModuleEntry} */
    const entry = {
      id: `${this.o.workerId}-m${this.seq}`,
      mod: /** @type {any} */ (null),
      memory,
      maxPages,
      runs: new Set(),
      retired: false,
      troubled: false,
      dead: false,
      runCount: 0,
      failedGrows: 0,
      oomCount: 0,
      slot: null,
    };
    // Emscripten grows the heap through this object's grow(); a failure there is the host fact
    // that an allocation hit the hard maximum (the guest may catch the resulting error).
    const grow = memory.grow.bind(memory);
    memory.grow = (/** @type {number} */ delta) => {
      try {
        const r = grow(delta);
        entry.failedGrows = 0;
        return r;
      } catch (e) {
        entry.failedGrows += 1;
        if (entry.failedGrows >= FAILED_GROWS_FOR_OOM) {
          entry.failedGrows = 0;
          entry.oomCount += 1;
        }
        throw e;
      }
    };
    entry.mod = await newQuickJSWASMModuleFromVariant(
      newVariant(/** @type {any} */ (variant), {
        wasmModule: /** @type {any} */ (wasmModule),
        wasmMemory: memory,
      }),
    );
    return entry;
  }

  /**
   * A module for one run, taken from the warm idle set when one of the right size is there.
   * @param {number} maxPages
   * @returns {Promise<ModuleEntry>}
   */
  async acquire(maxPages) {
    const entry = this.takeIdle(maxPages);
    if (entry === null) return this.createFor(maxPages);
    this.scheduleTopUp();
    return entry;
  }

  /**
   * An idle module of the right size, taken at once (no promise turn on a run's path), or null.
   * @param {number} maxPages
   * @returns {ModuleEntry | null}
   */
  takeIdle(maxPages) {
    this.touch();
    this.warmPages = maxPages;
    this.demand = Math.max(this.demand, this.o.active());
    // A module with a finished slot first, most recently released first (warm in the caches).
    let i = this.idle.findLastIndex((e) => e.maxPages === maxPages && e.slot?.ready === true);
    if (i < 0) i = this.idle.findLastIndex((e) => e.maxPages === maxPages);
    if (i < 0) return null;
    // The caller schedules the refill once its run's first slice is done.
    return /** @type {ModuleEntry} */ (this.idle.splice(i, 1)[0]);
  }

  /** A new module when none was idle. @param {number} maxPages @returns {Promise<ModuleEntry>} */
  async createFor(maxPages) {
    const entry = await this.create(maxPages);
    this.scheduleTopUp();
    return entry;
  }

  /**
   * Returns a module whose run ended cleanly (runtime and context disposed). Modules that grew
   * past the high-water mark, ran too often, or do not fit in the idle set are dropped: their
   * memory is freed when the garbage collector drops the WASM memory object.
   * @param {ModuleEntry} entry
   */
  release(entry) {
    entry.runs.clear();
    this.touch();
    if (
      entry.retired ||
      entry.dead ||
      heapBytes(entry) > this.o.highWaterBytes ||
      entry.runCount >= this.o.maxRuns ||
      entry.oomCount > 0 ||
      this.idle.length >= this.o.maxIdle
    ) {
      this.retire(entry);
      return;
    }
    this.idle.push(entry);
    this.scheduleTopUp();
  }

  /** Never reused again (state unknown after an interrupt, OOM or fault). @param {ModuleEntry} entry */
  retire(entry) {
    if (entry.retired) return;
    entry.retired = true;
    if (entry.troubled) this.retiredAfterTrouble += 1;
    const i = this.idle.indexOf(entry);
    if (i >= 0) this.idle.splice(i, 1);
    if (entry.slot !== null) {
      const slot = entry.slot;
      entry.slot = null;
      try {
        this.o.discard(slot);
      } catch {
        // The module is being dropped anyway.
      }
    }
    this.scheduleTopUp();
  }

  /**
   * Idle work, off the critical path: one step (a module, or one stage of a slot) per turn, and
   * only once the worker has been idle for IDLE_MS (HELD_IDLE_MS while runs are held), so a run
   * that starts or gets a settlement meanwhile goes first and waits for at most the step in
   * progress.
   */
  scheduleTopUp(delay = IDLE_MS) {
    if (this.topUpTimer !== null) return;
    this.topUpTimer = setTimeout(() => {
      this.topUpTimer = null;
      const quiet = performance.now() - this.lastActivity;
      const needed = this.o.active() > 0 ? HELD_IDLE_MS : IDLE_MS;
      if (quiet < needed) {
        this.scheduleTopUp(needed - quiet);
        return;
      }
      void this.topUp();
    }, delay);
  }

  async topUp() {
    for (const entry of this.idle) {
      if (entry.slot?.ready === true) continue;
      try {
        entry.slot = this.o.prepare(entry, entry.slot);
      } catch {
        entry.slot = null;
        this.retire(entry);
      }
      this.scheduleTopUp(0);
      return;
    }
    const pages = this.warmPages;
    const ready = this.idle.filter((e) => e.maxPages === pages).length;
    const target = this.target();
    if (this.o.active() === 0 && ready >= target) {
      // Demand decays while nothing runs, so a past burst does not pin memory for ever.
      this.demand = Math.max(this.o.warm, this.demand - 1);
    }
    if (ready + this.creating >= target || this.idle.length >= this.o.maxIdle) return;
    this.creating += 1;
    try {
      const entry = await this.create(pages);
      this.idle.push(entry);
    } catch {
      // Loading failed; the next acquire() tries again and reports it.
      return;
    } finally {
      this.creating -= 1;
    }
    this.scheduleTopUp(0);
  }

  /**
   * Resolves once one warm module exists (or loading failed).
   * @param {() => void} loaded called once the module is instantiated, before its slot is built
   *   (in the same turn: a message that arrives meanwhile waits for the slot)
   */
  async warmUp(loaded) {
    const entry = await this.create(this.warmPages);
    loaded();
    let slot = null;
    do slot = this.o.prepare(entry, slot);
    while (!slot.ready);
    entry.slot = slot;
    this.idle.push(entry);
    // Counts as activity BOOT_QUIET_MS - IDLE_MS from now, so the first refill waits for that.
    this.lastActivity = performance.now() + BOOT_QUIET_MS - IDLE_MS;
    this.scheduleTopUp(BOOT_QUIET_MS);
  }
}
