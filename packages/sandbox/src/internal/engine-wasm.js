// The engine's WebAssembly binary and its compile, shared by the worker (module-pool.js) and the
// main thread (worker-pool.ts), which compiles it while the first worker thread boots.
// @ts-check
import { createRequire } from 'node:module';

// The project's TypeScript lib has no WebAssembly declarations (no DOM lib), so it is typed here.
const WA = /** @type {any} */ (globalThis).WebAssembly;

/**
 * Compiles QuickJS's WASM binary with the flags V8 has now (V8 decides a module's tiers when it
 * compiles it). Asynchronous: V8 decodes and validates on its own threads, so the calling thread
 * stays free; functions compile lazily on first call, and that code is shared by every thread
 * the module is posted to.
 * @returns {Promise<unknown>} a WebAssembly.Module
 */
export function compileEngineBinary() {
  try {
    const require = createRequire(import.meta.url);
    // Required, not imported: see cpu-clock.js (the ES facade of node:fs loads the streams modules).
    const { readFileSync } = /** @type {{ readFileSync(path: string): Uint8Array }} */ (
      require('node:fs')
    );
    return WA.compile(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  } catch (error) {
    // A missing file or a synchronous throw rejects like a failed compile: callers handle one way.
    return Promise.reject(error);
  }
}

/** @param {unknown} value */
export const isWasmModule = (value) => value instanceof WA.Module;
