// Text into the engine's linear memory through Node's native UTF-8 encoder, instead of
// emscripten's lengthBytesUTF8 / stringToUTF8, which walk a string one code point at a time in
// JavaScript. Each fresh context evaluates the 15 KB kernel and each run its ~10 KB prelude:
// in a new worker those loops run interpreted for the first several contexts, and V8 compiles
// them with TurboFan on the run's path. Only well-formed text takes
// this path: emscripten writes a lone surrogate as its own three bytes where Node writes U+FFFD,
// so text holding one keeps the library's path and exactly its bytes.
// quickjs-emscripten-core is pinned at 0.32.0: evalText and newText follow its QuickJSContext
// evalCode and newString.
// @ts-check

/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
// QuickJS's JS_EVAL_FLAG_STRICT and JS_EVAL_FLAG_COMPILE_ONLY (quickjs.h; EvalFlags in
// @jitl/quickjs-ffi-types).
const EVAL_STRICT = 8;
const EVAL_COMPILE_ONLY = 32;

/**
 * The UTF-8 length of `text`, or -1 when it holds a lone surrogate (use emscripten's encoder).
 * @param {string} text
 */
export function utf8Length(text) {
  // String.prototype.isWellFormed: Node 20 has it, the project's ES2023 lib does not declare it.
  const wellFormed = /** @type {{ isWellFormed(): boolean }} */ (/** @type {unknown} */ (text));
  return wellFormed.isWellFormed() ? Buffer.byteLength(text, 'utf8') : -1;
}

/**
 * Writes well-formed `text` (`n` = utf8Length(text) bytes) and a NUL at `ptr`, which holds n + 1.
 * @param {any} M the emscripten module
 * @param {string | Uint8Array} text a string, or its UTF-8 bytes
 * @param {number} ptr
 * @param {number} n
 */
export function writeUtf8(M, text, ptr, n) {
  const heap = /** @type {Uint8Array} */ (M.HEAPU8);
  if (typeof text === 'string') encoder.encodeInto(text, heap.subarray(ptr, ptr + n));
  else heap.set(text, ptr);
  heap[ptr + n] = 0;
}

/**
 * `use(ptr)` with `code` written natively at `ptr` (`n` = its UTF-8 length) for the call, then
 * freed; undefined when the text cannot take this path (n < 0: a lone surrogate) or there is no
 * memory for the copy: the caller then takes the library's own path (and its error).
 * @template T
 * @param {any} M the emscripten module
 * @param {string | Uint8Array} code
 * @param {number} n
 * @param {(ptr: number) => T} use
 * @returns {T | undefined}
 */
function withText(M, code, n, use) {
  const ptr = n < 0 ? 0 : M._malloc(n + 1);
  if (ptr === 0) return undefined;
  try {
    writeUtf8(M, code, ptr, n);
    return use(ptr);
  } finally {
    M._free(ptr);
  }
}

/**
 * ctx.evalCode(code, filename, options), with the code written natively. `code` may be given as
 * UTF-8 bytes (the kernel, encoded once per thread).
 * @param {QuickJSContext} ctx
 * @param {string | Uint8Array} code
 * @param {string} filename
 * @param {{ strict?: boolean, compileOnly?: boolean }} options
 * @returns {{ value: QuickJSHandle, error?: undefined } | { error: QuickJSHandle, value?: undefined }}
 */
export function evalText(ctx, code, filename, options) {
  const c = /** @type {any} */ (ctx);
  const ctxPtr = c.ctx.value;
  const n = typeof code === 'string' ? utf8Length(code) : code.length;
  const flags = (options.strict ? EVAL_STRICT : 0) | (options.compileOnly ? EVAL_COMPILE_ONLY : 0);
  /** @type {number | undefined} */
  const resultPtr = withText(c.module, code, n, (ptr) =>
    c.ffi.QTS_Eval(ctxPtr, ptr, n, filename, 0, flags),
  );
  if (resultPtr === undefined) {
    const text = typeof code === 'string' ? code : Buffer.from(code).toString('utf8');
    return ctx.evalCode(text, filename, options);
  }
  const errorPtr = c.ffi.QTS_ResolveException(ctxPtr, resultPtr);
  if (errorPtr) {
    c.ffi.QTS_FreeValuePointer(ctxPtr, resultPtr);
    return c.fail(c.memory.heapValueHandle(errorPtr));
  }
  return c.success(c.memory.heapValueHandle(resultPtr));
}

/**
 * ctx.newString(text), with the text written natively.
 * @param {QuickJSContext} ctx
 * @param {string} text
 * @returns {QuickJSHandle}
 */
export function newText(ctx, text) {
  const c = /** @type {any} */ (ctx);
  /** @type {number | undefined} */
  const value = withText(c.module, text, utf8Length(text), (ptr) =>
    c.ffi.QTS_NewString(c.ctx.value, ptr),
  );
  return value === undefined ? ctx.newString(text) : c.memory.heapValueHandle(value);
}

/**
 * M.UTF8ToString(ptr): the NUL-terminated UTF-8 text at `ptr`, decoded as emscripten does (a
 * TextDecoder, malformed bytes as U+FFFD), with the terminator found by the native
 * TypedArray#indexOf instead of emscripten's byte-at-a-time JavaScript loop (run results and
 * call inputs can be megabytes).
 * @param {any} M the emscripten module
 * @param {number} ptr
 */
export function readUtf8(M, ptr) {
  if (ptr === 0) return '';
  const heap = /** @type {Uint8Array} */ (M.HEAPU8);
  const end = heap.indexOf(0, ptr);
  return decoder.decode(heap.subarray(ptr, end < 0 ? heap.length : end));
}
