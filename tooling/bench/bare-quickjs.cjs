// Bare quickjs-emscripten, the floor of every QuickJS figure: its own file so that a worker
// thread (worker-quickjs.cjs) loads it without the rest of the calibration.
// CommonJS, as the sandbox's worker bundle is: a worker floor pays no ES module loader either.
// @ts-check
const variant = require('@jitl/quickjs-wasmfile-release-sync');
const { newQuickJSWASMModuleFromVariant } = require('quickjs-emscripten-core');

/** The trivial program every QuickJS figure uses: one awaited host call. */
const TRIVIAL_PROGRAM = 'async function run(api) { return (await api.x(41)) + 1; }';

/**
 * Bare quickjs-emscripten, no sandbox: a fresh runtime + context per run (`mod.newContext()`),
 * one host function answered through a promise, the program evaluated and its jobs pumped,
 * then disposed. This is what `evalCode` of TRIVIAL_PROGRAM costs without any hardening.
 */
async function bareQuickJs() {
  const mod = await newQuickJSWASMModuleFromVariant(
    /** @type {any} */ (variant).default ?? variant,
  );
  /**
   * Calls `program`'s `run(api)` in `ctx`, `api.x` being the host function `x`; returns the handle
   * of the promise it returned.
   * @param {import('quickjs-emscripten-core').QuickJSContext} ctx
   * @param {string} program
   * @param {import('quickjs-emscripten-core').VmFunctionImplementation<any>} x
   */
  const launch = (ctx, program, x) => {
    const xH = ctx.newFunction('x', x);
    const api = ctx.newObject();
    ctx.setProp(api, 'x', xH);
    xH.dispose();
    const fn = ctx.unwrapResult(ctx.evalCode(`(${program})`, 'workflow.js'));
    const p = ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, api));
    fn.dispose();
    api.dispose();
    return p;
  };
  /**
   * Runs the pending jobs, then reads the promise: its number once fulfilled (the handle is
   * disposed), undefined while it is still pending; throws when it was rejected.
   * @param {import('quickjs-emscripten-core').QuickJSContext} ctx
   * @param {import('quickjs-emscripten-core').QuickJSHandle} p
   */
  const settled = (ctx, p) => {
    ctx.runtime.executePendingJobs();
    const state = ctx.getPromiseState(p);
    if (state.type === 'pending') return undefined;
    p.dispose();
    if (state.type !== 'fulfilled') throw new Error('bare QuickJS run did not fulfil');
    const v = ctx.getNumber(state.value);
    state.value.dispose();
    return v;
  };
  /** Runs `program` (an async `run(api)`) in a fresh context; returns its numeric result. */
  const evaluate = (/** @type {string} */ program) => {
    const ctx = mod.newContext();
    try {
      const p = launch(ctx, program, (vH) => {
        const d = ctx.newPromise();
        d.resolve(vH);
        const h = d.handle.dup(); // the library disposes what a host function returns
        d.dispose();
        return h;
      });
      const v = settled(ctx, p);
      if (v !== undefined) return v;
      p.dispose();
      throw new Error('bare QuickJS run did not fulfil');
    } finally {
      ctx.dispose();
    }
  };
  /**
   * `evaluate`, but each `api.x(v)` is answered by `answer(v)`, a promise (a round trip to another
   * thread): the guest's jobs are pumped after each answer until its promise settles.
   * @param {string} program
   * @param {(v: number) => Promise<number>} answer
   */
  const evaluateAsync = async (program, answer) => {
    const ctx = mod.newContext();
    try {
      /** @type {Promise<void>} */
      let pending = Promise.resolve();
      const p = launch(ctx, program, (vH) => {
        const d = ctx.newPromise();
        pending = answer(ctx.getNumber(vH)).then((r) => {
          const h = ctx.newNumber(r);
          d.resolve(h);
          h.dispose();
          d.dispose();
        });
        return d.handle.dup();
      });
      for (;;) {
        const v = settled(ctx, p);
        if (v !== undefined) return v;
        await pending;
      }
    } finally {
      ctx.dispose();
    }
  };
  /** Runs TRIVIAL_PROGRAM once; returns its result (42). */
  const runOnce = () => evaluate(TRIVIAL_PROGRAM);
  /**
   * µs per call of `n` sequential `await api.x(1)` in one run: the guest's side of a host call
   * (QuickJS call, promise, job) with no thread hop. Plus a worker ping-pong, the floor of a
   * sandboxed host call's round trip.
   */
  const callUs = (n = 5000) => {
    const t = performance.now();
    const v = evaluate(
      `async function run(api) { let s = 0; for (let i = 0; i < ${n}; i++) s += await api.x(1); return s; }`,
    );
    if (v !== n) throw new Error('bare QuickJS: wrong call count');
    return ((performance.now() - t) * 1000) / n;
  };
  /** Wall time of one run in ms. */
  const timeOnce = () => {
    const t = performance.now();
    if (runOnce() !== 42) throw new Error('bare QuickJS: wrong result');
    return performance.now() - t;
  };
  return { runOnce, timeOnce, callUs, evaluateAsync };
}

exports.TRIVIAL_PROGRAM = TRIVIAL_PROGRAM;
exports.bareQuickJs = bareQuickJs;
