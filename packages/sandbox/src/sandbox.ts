// createSandbox(): validates options and requests, holds the sandbox's state, and starts and
// closes runs. The pool and replay live in internal/worker-pool.ts, capability calls in
// internal/capability-calls.ts, run endings in internal/run-end.ts.
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { SandboxError } from './errors.js';
import { jsonDepthWithin } from './internal/json-shape.js';
import { toJsonText } from './internal/json.js';
import { DEFAULT_LIMITS, mergeLimits } from './internal/limits.js';
import { type StartFields, TO_WORKER } from './internal/protocol.js';
import { finalize } from './internal/run-end.js';
import {
  emptyStats,
  MAX_ERROR_CHARS,
  type Run,
  type SandboxState,
  timerMs,
} from './internal/sandbox-state.js';
import { bootRest, ensureSpare, pick, spawn, watchSlices, wedged } from './internal/worker-pool.js';
import type { Sandbox, SandboxOptions, SandboxOutcome, SandboxRequest } from './types.js';

/**
 * The rest of the pool and the spare boot this long after the first worker is ready (runs that
 * overlap before then get a worker on demand, see pick()). Booting them at once put two thread
 * boots on the cores beside the first run: on 2 cores the first result of a fresh process waited
 * for them. At 250 ms, a loaded machine still booted both in the middle of a 5-agent `wf run` and
 * its exit then waited to end them; a short-lived process now never starts threads it does not
 * use, and a long one (real agents) gets them while it waits for its host calls.
 */
const BACKGROUND_BOOT_MS = 1000;
/** Extra time past wallMs + grace before a silent worker is declared wedged. */
const WATCHDOG_SLACK_MS = 1500;
const CAPABILITY_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;
const MAX_SEED = Number.MAX_SAFE_INTEGER;

function validateRequest(request: SandboxRequest): void {
  const bad = (message: string) => new SandboxError('WF_SANDBOX_INVALID_REQUEST', message);
  if (typeof request !== 'object' || request === null)
    throw bad('the run request must be an object');
  if (typeof request.source !== 'string') throw bad('request.source must be a string');
  if (request.prelude !== undefined && typeof request.prelude !== 'string') {
    throw bad('request.prelude must be a string (the source of a function expression)');
  }
  const caps = request.capabilities;
  if (typeof caps !== 'object' || caps === null) {
    throw bad('request.capabilities must be an object of functions');
  }
  for (const name of Object.keys(caps)) {
    if (!CAPABILITY_NAME.test(name)) {
      throw bad(
        `request.capabilities: ${JSON.stringify(name.slice(0, 70))} is not a valid identifier`,
      );
    }
    if (typeof caps[name] !== 'function')
      throw bad(`request.capabilities.${name} must be a function`);
  }
  if (
    request.seed !== undefined &&
    (typeof request.seed !== 'number' || !Number.isSafeInteger(request.seed) || request.seed < 0)
  ) {
    throw bad('request.seed must be a non-negative safe integer');
  }
  if (
    request.startTime !== undefined &&
    (typeof request.startTime !== 'number' || !Number.isFinite(request.startTime))
  ) {
    throw bad('request.startTime must be a finite number (epoch ms)');
  }
  if (request.signal !== undefined && !(request.signal instanceof AbortSignal)) {
    throw bad('request.signal must be an AbortSignal');
  }
}

/** Loads node:crypto for default seeds on first use, not at import (see randomSeed). */
const require = createRequire(import.meta.url);
let randomInt: ((min: number, max: number) => number) | undefined;

/**
 * A seed for a run that brings none, from the OS's CSPRNG (not Math.random: a guest that sees
 * its seed must learn nothing of the host's PRNG state). node:crypto is loaded here rather than
 * imported: an ES import of it makes Node enumerate its exports, loading Web Crypto, which a
 * fresh process would pay before it could start its first worker.
 */
function randomSeed(): number {
  randomInt ??= (require('node:crypto') as typeof import('node:crypto')).randomInt;
  return randomInt(0, 2 ** 48 - 1);
}

/**
 * Creates a sandbox; resolves once its first worker has instantiated QuickJS (its first hardened
 * context is then being built, and a run sent meanwhile waits for it). The rest of the pool (up
 * to poolSize) and the spare boot in the background BACKGROUND_BOOT_MS later, or on demand when
 * runs overlap before then.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  if (typeof options !== 'object' || options === null) {
    throw new SandboxError(
      'WF_SANDBOX_INVALID_OPTIONS',
      'createSandbox() options must be an object',
    );
  }
  const poolSize = options.poolSize ?? Math.max(1, availableParallelism());
  if (!Number.isSafeInteger(poolSize) || poolSize < 1 || poolSize > 256) {
    throw new SandboxError(
      'WF_SANDBOX_INVALID_OPTIONS',
      `options.poolSize must be an integer from 1 to 256, got ${String(poolSize)}`,
    );
  }
  const moduleHighWaterBytes = options.moduleHighWaterBytes ?? 32 * 1024 * 1024;
  const moduleMaxRuns = options.moduleMaxRuns ?? 2000;
  for (const [key, value] of [
    ['moduleHighWaterBytes', moduleHighWaterBytes],
    ['moduleMaxRuns', moduleMaxRuns],
  ] as const) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new SandboxError(
        'WF_SANDBOX_INVALID_OPTIONS',
        `options.${key} must be a positive integer`,
      );
    }
  }
  const wasmTierUp = options.wasmTierUp ?? true;
  if (typeof wasmTierUp !== 'boolean') {
    throw new SandboxError(
      'WF_SANDBOX_INVALID_OPTIONS',
      `options.wasmTierUp must be a boolean, got ${typeof wasmTierUp}`,
    );
  }
  const baseLimits = mergeLimits(DEFAULT_LIMITS, options.limits, 'options.limits');
  // This thread compiles the engine while the first worker boots and posts it (spawn(); with
  // wasmTierUp false that worker compiles it); later workers get it (V8 shares the compiled,
  // tiered-up code), so one compile serves the pool.
  const s: SandboxState = {
    closed: false,
    runSeq: 0,
    workerSeq: 0,
    poolSize,
    pool: [],
    bootTimer: null,
    earlyDeaths: 0,
    spare: null,
    engine: null,
    workerOptions: {
      moduleHighWaterBytes,
      moduleMaxRuns,
      memoryBytes: baseLimits.memoryBytes,
      wasmModule: null,
      liftoffOnly: !wasmTierUp,
    },
  };
  const sliceWatch = watchSlices(s);

  async function run(request: SandboxRequest): Promise<SandboxOutcome> {
    if (s.closed) throw new SandboxError('WF_SANDBOX_CLOSED', 'run() was called after close()');
    validateRequest(request);
    const limits = mergeLimits(baseLimits, request.limits, 'request.limits');
    let argsText = '';
    if (request.args !== undefined) {
      const r = toJsonText(request.args, limits.maxResultBytes, limits.maxJsonDepth);
      if (!r.ok) {
        throw new SandboxError(
          'WF_SANDBOX_ARGS_NOT_JSON',
          `request.args cannot cross as JSON: ${r.detail}`,
        );
      }
      argsText = r.text ?? '';
    }
    if (argsText !== '' && !jsonDepthWithin(argsText, limits.maxJsonDepth)) {
      throw new SandboxError('WF_SANDBOX_ARGS_NOT_JSON', 'request.args nests too deeply');
    }
    const seed = request.seed ?? randomSeed();
    if (seed > MAX_SEED)
      throw new SandboxError('WF_SANDBOX_INVALID_REQUEST', 'request.seed is too large');
    const startTime = request.startTime ?? Date.now();
    const t0 = performance.now();
    const signal = request.signal;
    if (signal?.aborted) {
      return {
        status: 'aborted',
        error: { code: 'WF_SANDBOX_ABORTED', message: 'the run was aborted before it started' },
        stats: {
          elapsedMs: 0,
          cpuMs: 0,
          hostCalls: 0,
          peakMemoryBytes: 0,
          seed,
          startTime,
          workerId: '',
          moduleId: '',
          retiredAfterTrouble: 0,
        },
      };
    }
    const worker = pick(s);
    s.runSeq += 1;
    const id = s.runSeq;
    return new Promise<SandboxOutcome>((settle) => {
      const resolve = (o: SandboxOutcome) => {
        settle(o);
        // After the caller got its result, if a replacement used the spare up (before the
        // background boot there is no spare yet: that boot starts one).
        if (s.spare === null && s.bootTimer === null) setImmediate(() => ensureSpare(s));
      };
      const start: StartFields = {
        source: request.source,
        argsText,
        prelude: request.prelude ?? null,
        capabilities: Object.keys(request.capabilities),
      };
      // Sent before the run's bookkeeping below: the worker starts while this thread records
      // the run. Its replies are messages, handled only after this synchronous block, by which
      // time the record, the watchdog and the abort listener are in place.
      worker.send({
        t: TO_WORKER.start,
        runId: id,
        ...start,
        limits: { ...limits, maxErrorChars: MAX_ERROR_CHARS },
        seed,
        startTime,
      });
      const r: Run = {
        id,
        start,
        log: [],
        dispatched: 0,
        replays: 0,
        left: new Set(),
        limits,
        capabilities: request.capabilities,
        seed,
        startTime,
        t0,
        worker,
        calls: new Map(),
        ended: false,
        done: false,
        resolve,
        stats: emptyStats(),
        watchdog: null,
        detachSignal: null,
        disposed: null,
      };
      worker.runs.set(id, r);
      worker.hold();
      // A worker that cannot even report a wall timeout is wedged in host code: replace it.
      r.watchdog = setTimeout(
        () => wedged(s, r.worker, r),
        timerMs(limits.wallMs + limits.abortGraceMs + WATCHDOG_SLACK_MS),
      );
      if (signal !== undefined) {
        const onAbort = () => {
          if (!r.ended && r.worker.alive)
            r.worker.send({ t: TO_WORKER.close, runId: id, reason: 'aborted' });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        r.detachSignal = () => signal.removeEventListener('abort', onAbort);
      }
    });
  }

  async function close(): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    clearInterval(sliceWatch);
    if (s.bootTimer !== null) clearTimeout(s.bootTimer);
    s.bootTimer = null;
    const workers = s.spare === null ? [...s.pool] : [...s.pool, s.spare];
    s.spare = null;
    s.pool.length = 0;
    for (const w of workers) {
      for (const r of [...w.runs.values()]) {
        finalize(s, r, {
          status: 'aborted',
          code: 'WF_SANDBOX_CLOSED',
          message: 'the sandbox was closed',
        });
      }
      w.alive = false;
    }
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  const first = spawn(s);
  s.pool.push(first);
  // While the thread boots (tens of ms on another core), not before it: off the first result's path.
  randomSeed();
  await first.ready;
  if (!first.started) {
    await close();
    throw new SandboxError(
      'WF_SANDBOX_WORKER_LOST',
      'no worker thread could start the QuickJS engine',
    );
  }
  // The rest of the pool and the spare boot a little later, in the background (not awaited):
  // the first results do not share the cores with thread boots, and later runs do not pay for a
  // boot in their middle. Unref'd: a process that is done does not wait for it.
  s.bootTimer = setTimeout(() => {
    s.bootTimer = null;
    bootRest(s);
  }, BACKGROUND_BOOT_MS);
  s.bootTimer.unref();
  return Object.freeze({ run, close });
}
