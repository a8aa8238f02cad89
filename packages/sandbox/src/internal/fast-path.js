// Direct FFI for the host-call hot path (deliver, pump, drain) over pinned quickjs internals.
// @ts-check
import { readUtf8, utf8Length, writeUtf8 } from './utf8.js';

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
    /** Reused for settlement texts up to its size (grown as needed). */
    this.textBuf = 0;
    this.textBufBytes = 0;
    // The engine's tag for a flat string, read off a string made here rather than assumed, and
    // checked to differ from an object's: a value carrying it is read as a string without the
    // typeof round trip (which allocates a C string per call). Anything else (ropes included)
    // takes the typeof check, so no non-string value is ever converted (that could run guest
    // code). -1 (never matches) if the two cannot be told apart.
    /** @type {number} */
    this.stringTag = -1;
    const { ffi, M } = this;
    const empty = M._malloc(1);
    if (empty !== 0) {
      M.HEAPU8[empty] = 0;
      const s = ffi.QTS_NewString(this.ctxPtr, empty);
      M._free(empty);
      const o = ffi.QTS_NewObject(this.ctxPtr);
      const sTag = this.tagOf(s);
      if (sTag !== this.tagOf(o) && sTag !== this.tagOf(ctx.undefined.value)) this.stringTag = sTag;
      ffi.QTS_FreeValuePointer(this.ctxPtr, s);
      ffi.QTS_FreeValuePointer(this.ctxPtr, o);
    }
  }

  /**
   * The tag word of a JSValue (the high 32 bits of the 64-bit value in this 32-bit build).
   * @param {number} ptr a JSValue*
   */
  tagOf(ptr) {
    return this.heap32()[(ptr >> 2) + 1] ?? 0;
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
    // Natively counted and written (utf8.js); a text with a lone surrogate takes emscripten's.
    const n = utf8Length(text);
    const bytes = n < 0 ? M.lengthBytesUTF8(text) + 1 : n + 1;
    if (bytes > this.textBufBytes) {
      if (this.textBuf !== 0) M._free(this.textBuf);
      this.textBufBytes = 0;
      this.textBuf = M._malloc(Math.max(bytes, 256));
      // The module's memory is at its maximum: the caller's fault handler reports status memory.
      if (this.textBuf === 0) throw new Error('out of memory');
      this.textBufBytes = Math.max(bytes, 256);
    }
    const cstr = this.textBuf;
    if (n < 0) M.stringToUTF8(text, cstr, bytes);
    else writeUtf8(M, text, cstr, n);
    const arg = ffi.QTS_NewString(ctxPtr, cstr);
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
    const { ffi, ctxPtr } = this;
    const r = ffi.QTS_Call(ctxPtr, fn.value, this.undefinedPtr, 0, this.scratch);
    const e = ffi.QTS_ResolveException(ctxPtr, r);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, r);
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      return '';
    }
    return this.takeString(r);
  }

  /**
   * A promise's state without the library's handle objects (JSPromiseStateEnum: 0 pending,
   * 1 fulfilled, 2 rejected; negative: not a promise).
   * @param {QuickJSHandle} promise
   * @returns {number}
   */
  promiseState(promise) {
    return this.ffi.QTS_PromiseState(this.ctxPtr, promise.value);
  }

  /**
   * The value of a fulfilled promise if it is a string, else '' (typeof checked before
   * reading, as in callString: nothing else is converted).
   * @param {QuickJSHandle} promise
   * @returns {string}
   */
  fulfilledString(promise) {
    return this.takeString(this.ffi.QTS_PromiseResult(this.ctxPtr, promise.value));
  }

  /**
   * A value pointer's text if it is a string, else '' (typeof checked before reading: nothing
   * else is converted, so no guest code runs); frees the pointer either way.
   * @param {number} r
   * @returns {string}
   */
  takeString(r) {
    const { ffi, ctxPtr, M } = this;
    let isString = this.tagOf(r) === this.stringTag;
    if (!isString) {
      const tPtr = ffi.QTS_Typeof(ctxPtr, r);
      isString = M.UTF8ToString(tPtr) === 'string';
      M._free(tPtr);
    }
    let out = '';
    if (isString) {
      const sPtr = ffi.QTS_GetString(ctxPtr, r);
      out = readUtf8(M, sPtr);
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
      if (this.usedKey === 0) return -1;
    }
    const o = ffi.QTS_RuntimeComputeMemoryUsage(this.rtPtr, ctxPtr);
    // 0: the engine could not even allocate the value pointer (memory at its maximum).
    if (o === 0) return -1;
    const e = ffi.QTS_ResolveException(ctxPtr, o);
    if (e) {
      ffi.QTS_FreeValuePointer(ctxPtr, e);
      ffi.QTS_FreeValuePointer(ctxPtr, o);
      return -1;
    }
    const v = ffi.QTS_GetProp(ctxPtr, o, this.usedKey);
    ffi.QTS_FreeValuePointer(ctxPtr, o);
    if (v === 0) return -1;
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
    if (this.textBuf !== 0) this.M._free(this.textBuf);
    this.textBuf = 0;
    this.textBufBytes = 0;
  }
}
