// Direct FFI for the host-call hot path (deliver, pump, drain) over pinned quickjs internals.
// @ts-check

/** @typedef {import('quickjs-emscripten-core').QuickJSRuntime} QuickJSRuntime */
/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */
/** @typedef {import('./module-pool.js').ModuleEntry} ModuleEntry */

/**
 * Direct FFI for the three calls every host-call round trip makes (deliver, pump, drain). The
 * library wrappers allocate pointer arrays and handle objects per call, which showed up as
 * ~20% GC time in profiles. quickjs-emscripten-core is pinned at exactly 0.32.0; these follow
 * its own ownership rules (QuickJSContext.callFunction, QuickJSRuntime.executePendingJobs).
 */
export class FastPath {
  /**
   * @param {ModuleEntry} entry
   * @param {QuickJSRuntime} rt
   * @param {QuickJSContext} ctx
   */
  constructor(entry, rt, ctx) {
    const internals = /** @type {any} */ (ctx);
    /** @type {any} */
    this.ffi = internals.ffi;
    /** @type {number} */
    this.ctxPtr = internals.ctx.value;
    /** @type {number} */
    this.rtPtr = /** @type {any} */ (rt).rt.value;
    /** @type {any} */
    this.M = /** @type {any} */ (entry.mod).module;
    /** @type {number} */
    this.undefinedPtr = ctx.undefined.value;
    // [argv[0], job context out]: reused, freed with the slot.
    /** @type {number} */
    this.scratch = this.M._malloc(8);
    /** @type {Int32Array | null} */
    this.h32 = null;
    /** The guest string "memory_used_size", made on the first memory reading; 0 until then. */
    this.usedKey = 0;
  }

  /** @returns {Int32Array} */
  heap32() {
    const buffer = this.M.HEAPU8.buffer;
    if (this.h32 === null || this.h32.buffer !== buffer) this.h32 = new Int32Array(buffer);
    return this.h32;
  }

  /**
   * fn(arg) or fn(); true when it returned normally. The result value is discarded.
   * @param {QuickJSHandle} fn
   * @param {QuickJSHandle | null} arg
   */
  callDiscard(fn, arg) {
    const { ffi, ctxPtr } = this;
    if (arg !== null) this.heap32()[this.scratch >> 2] = arg.value;
    const r = ffi.QTS_Call(ctxPtr, fn.value, this.undefinedPtr, arg === null ? 0 : 1, this.scratch);
    const e = ffi.QTS_ResolveException(ctxPtr, r);
    ffi.QTS_FreeValuePointer(ctxPtr, r);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      return false;
    }
    return true;
  }

  /**
   * fn(text) with a fresh guest string made from `text`; true when it returned normally (the
   * result is discarded). Saves the library's handle objects on every settlement delivery.
   * @param {QuickJSHandle} fn
   * @param {string} text
   */
  callWithString(fn, text) {
    const { ffi, ctxPtr, M } = this;
    const bytes = M.lengthBytesUTF8(text) + 1;
    const cstr = M._malloc(bytes);
    // The module's memory is at its maximum: the caller's fault handler reports status memory.
    if (cstr === 0) throw new Error('out of memory');
    M.stringToUTF8(text, cstr, bytes);
    const arg = ffi.QTS_NewString(ctxPtr, cstr);
    M._free(cstr);
    this.heap32()[this.scratch >> 2] = arg;
    const r = ffi.QTS_Call(ctxPtr, fn.value, this.undefinedPtr, 1, this.scratch);
    ffi.QTS_FreeValuePointer(ctxPtr, arg);
    const e = ffi.QTS_ResolveException(ctxPtr, r);
    ffi.QTS_FreeValuePointer(ctxPtr, r);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      return false;
    }
    return true;
  }

  /**
   * fn() returning a string; '' for anything else or a throw (typeof checked before reading).
   * @param {QuickJSHandle} fn
   */
  callString(fn) {
    const { ffi, ctxPtr, M } = this;
    const r = ffi.QTS_Call(ctxPtr, fn.value, this.undefinedPtr, 0, this.scratch);
    const e = ffi.QTS_ResolveException(ctxPtr, r);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, r);
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      return '';
    }
    const tPtr = ffi.QTS_Typeof(ctxPtr, r);
    const type = M.UTF8ToString(tPtr);
    M._free(tPtr);
    let out = '';
    if (type === 'string') {
      const sPtr = ffi.QTS_GetString(ctxPtr, r);
      out = M.UTF8ToString(sPtr);
      ffi.QTS_FreeCString(ctxPtr, sPtr);
    }
    ffi.QTS_FreeValuePointer(ctxPtr, r);
    return out;
  }

  /**
   * Runs up to maxJobs pending jobs; false when the queue was empty. Whether a job threw is not
   * read (that costs a typeof string per batch): the pump decides from host facts (the kill flag
   * the interrupt handler set, the job queue), and job errors already settle guest promises.
   * @param {number} maxJobs
   * @returns {boolean}
   */
  runJobs(maxJobs) {
    const { ffi } = this;
    const out = this.scratch + 4;
    // The FFI writes the job context only when a job ran: clear it so an empty queue is recognised.
    this.heap32()[out >> 2] = 0;
    const v = ffi.QTS_ExecutePendingJob(this.rtPtr, maxJobs, out);
    const jobCtx = this.heap32()[out >> 2] ?? 0;
    if (jobCtx === 0) {
      ffi.QTS_FreeValuePointerRuntime(this.rtPtr, v);
      return false;
    }
    ffi.QTS_FreeValuePointer(jobCtx, v);
    return true;
  }

  /** True when the runtime has queued jobs. */
  hasJobs() {
    return this.ffi.QTS_IsJobPending(this.rtPtr) !== 0;
  }

  /**
   * The engine's count of the runtime's live heap (JS_ComputeMemoryUsage's memory_used_size, the
   * figure dumpMemoryUsage prints as "memory used") without formatting the text report: about
   * 40% cheaper. The engine puts the counts in a fresh plain object in this context, which no
   * guest code can reach and whose own data property is read without running guest code, so it
   * is taken only between slices, never inside the interrupt handler (which keeps the text
   * report: no objects are made while guest code is suspended). -1 when it cannot be read.
   * @returns {number}
   */
  memoryUsed() {
    const { ffi, ctxPtr, M } = this;
    if (this.usedKey === 0) {
      const name = 'memory_used_size';
      const cstr = M._malloc(name.length + 1);
      if (cstr === 0) return -1;
      M.stringToUTF8(name, cstr, name.length + 1);
      this.usedKey = ffi.QTS_NewString(ctxPtr, cstr);
      M._free(cstr);
    }
    const o = ffi.QTS_RuntimeComputeMemoryUsage(this.rtPtr, ctxPtr);
    const e = ffi.QTS_ResolveException(ctxPtr, o);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      ffi.QTS_FreeValuePointer(ctxPtr, o);
      return -1;
    }
    const v = ffi.QTS_GetProp(ctxPtr, o, this.usedKey);
    ffi.QTS_FreeValuePointer(ctxPtr, o);
    const ve = ffi.QTS_ResolveException(ctxPtr, v);
    if (ve) {
      ffi.QTS_FreeValuePointer(ctxPtr, ve);
      ffi.QTS_FreeValuePointer(ctxPtr, v);
      return -1;
    }
    const used = ffi.QTS_GetFloat64(ctxPtr, v);
    ffi.QTS_FreeValuePointer(ctxPtr, v);
    return Number.isFinite(used) ? used : -1;
  }

  dispose() {
    if (this.usedKey !== 0) this.ffi.QTS_FreeValuePointer(this.ctxPtr, this.usedKey);
    this.usedKey = 0;
    if (this.scratch !== 0) this.M._free(this.scratch);
    this.scratch = 0;
  }
}
