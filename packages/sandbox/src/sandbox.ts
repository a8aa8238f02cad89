// createSandbox(): a pool of warm worker threads running QuickJS, the main-thread half of the
// bridge (capability dispatch, JSON crossings, redaction), and run lifecycle: wall and abort
// teardown (close the bridge, abort outstanding calls, drain with a bounded grace, dispose),
// quiescence, and replacement of a wedged or crashed worker.
import { randomInt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { SandboxError } from './errors.js';
import { jsonDepthWithin } from './internal/json-shape.js';
import { parseJsonText, toJsonText } from './internal/json.js';
import { DEFAULT_LIMITS, mergeLimits } from './internal/limits.js';
import { taskCpuMs } from './internal/cpu-clock.js';
import { compileEngine } from './internal/module-pool.js';
import {
  type CallMessage,
  type EndMessage,
  FROM_WORKER,
  type FromWorkerMessage,
  type RunMessage,
  type StartFields,
  TO_WORKER,
  type ToWorkerMessage,
  type WorkerStats,
} from './internal/protocol.js';
import { redactHostMessage } from './internal/redact.js';
import type {
  Capability,
  CapabilityContext,
  Sandbox,
  SandboxFailureStatus,
  SandboxLimits,
  SandboxOptions,
  SandboxOutcome,
  SandboxOutcomeError,
  SandboxRequest,
  SandboxStats,
} from './types.js';

const WORKER_URL = new URL('./internal/worker.js', import.meta.url);
const WORKER_STACK_MB = 64;
/** Extra time past wallMs + grace before a silent worker is declared wedged. */
const WATCHDOG_SLACK_MS = 1500;
/** How often the main thread looks at each worker's current slice. */
const SLICE_WATCH_MS = 100;
/**
 * A slice may overstay cpuSliceMs by this much CPU time before its worker is ended (the worker's
 * own interrupt normally stops it at cpuSliceMs; this catches builtins that never poll).
 */
const SLICE_GRACE_MS = 250;
const MAX_ERROR_CHARS = 2000;
const CODE_PATTERN = /^[A-Z][A-Z0-9_]{2,63}$/;
const CAPABILITY_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;
const MAX_SEED = Number.MAX_SAFE_INTEGER;
/** Times one run may be replayed on a fresh worker after losing its worker to another run. */
const MAX_REPLAYS = 3;

interface Ending {
  status: SandboxOutcome['status'];
  code: string;
  message: string;
  valueText?: string | null;
  guestCode?: string;
}

interface Call {
  abort: () => void;
  done: Promise<void>;
}

interface Run {
  id: number;
  start: StartFields;
  /** Settlements in the order they were sent to the worker: replayed after a worker loss. */
  log: [number, string][];
  /** Highest call id dispatched; a replay re-issues calls up to it, which are not re-run. */
  dispatched: number;
  replays: number;
  limits: SandboxLimits;
  capabilities: Record<string, Capability>;
  seed: number;
  startTime: number;
  t0: number;
  worker: PoolWorker;
  calls: Map<number, Call>;
  /** The worker reported the end (or the run was ended on the host side). */
  ended: boolean;
  /** The outcome promise has been resolved. */
  done: boolean;
  resolve: (o: SandboxOutcome) => void;
  stats: WorkerStats;
  watchdog: ReturnType<typeof setTimeout> | null;
  detachSignal: (() => void) | null;
  disposed: (() => void) | null;
}

class PoolWorker {
  readonly id: string;
  readonly worker: Worker;
  readonly runs = new Map<number, Run>();
  readonly ready: Promise<void>;
  /** [slice start (epoch ms), run id or 0, CPU base, base time], written by the worker per slice. */
  readonly slice = new Float64Array(new SharedArrayBuffer(32));
  alive = true;
  /** The worker loaded QuickJS and said so. */
  started = false;
  /** The worker thread's task id (Linux), for reading its CPU clock; null elsewhere. */
  tid: number | null = null;
  /** The slice the watchdog is following: its CPU clock when first seen. */
  watch: { runId: number; started: number; wall0: number; cpu0: number } | null = null;

  constructor(
    id: string,
    options: {
      moduleHighWaterBytes: number;
      moduleMaxRuns: number;
      memoryBytes: number;
      wasmModule: unknown;
    },
    onMessage: (w: PoolWorker, msg: RunMessage) => void,
    onGone: (w: PoolWorker) => void,
  ) {
    this.id = id;
    this.worker = new Worker(WORKER_URL, {
      workerData: { workerId: id, sliceBuffer: this.slice.buffer, ...options },
      resourceLimits: { stackSizeMb: WORKER_STACK_MB },
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    this.worker.on('message', (msg: FromWorkerMessage) => {
      if (msg.t === FROM_WORKER.ready) {
        const tid: unknown = msg.tid;
        this.tid = typeof tid === 'number' && Number.isSafeInteger(tid) ? tid : null;
        this.started = true;
        markReady();
      } else onMessage(this, msg);
    });
    const gone = () => {
      markReady();
      if (this.alive) {
        this.alive = false;
        onGone(this);
      }
    };
    this.worker.on('error', gone);
    this.worker.on('exit', gone);
  }

  /** Sends one protocol message to the worker. */
  send(msg: ToWorkerMessage): void {
    this.worker.postMessage(msg);
  }

  hold(): void {
    if (this.runs.size === 1) this.worker.ref();
  }

  release(): void {
    if (this.runs.size === 0) this.worker.unref();
  }
}

function emptyStats(): WorkerStats {
  return { cpuMs: 0, hostCalls: 0, peakMemoryBytes: 0, workerId: '', moduleId: '' };
}

/** Node fires timers above 2^31-1 ms at once; long limits are clamped instead (~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
const timerMs = (ms: number): number => Math.min(ms, MAX_TIMER_MS);

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, timerMs(ms));
  });
}

function readString(obj: unknown, key: string): string | undefined {
  try {
    const v = (obj as Record<string, unknown>)[key];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

function okEnvelope(json: string | undefined, now: number | undefined): string {
  let s = '{"ok":true';
  if (now !== undefined) s += `,"t":${JSON.stringify(now)}`;
  if (json !== undefined) s += `,"v":${json}`;
  return `${s}}`;
}

function errorEnvelope(
  code: string,
  message: string,
  dataJson: string | undefined,
  now: number | undefined,
): string {
  let e = `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}`;
  if (dataJson !== undefined) e += `,"data":${dataJson}`;
  e += '}';
  let s = `{"ok":false,"e":${e}}`;
  if (now !== undefined) s = `{"ok":false,"t":${JSON.stringify(now)},"e":${e}}`;
  return s;
}

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

/** Creates a sandbox with a pool of warm workers; resolves once every worker has loaded QuickJS. */
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
  const baseLimits = mergeLimits(DEFAULT_LIMITS, options.limits, 'options.limits');
  // Compiled once here and posted to every worker: V8 shares the compiled and tiered-up code, so a
  // replacement worker starts warm and does not recompile the engine.
  let wasmModule: unknown = null;
  try {
    wasmModule = await compileEngine();
  } catch {
    wasmModule = null; // each worker compiles (and reports) on its own
  }
  const workerOptions = {
    moduleHighWaterBytes,
    moduleMaxRuns,
    memoryBytes: baseLimits.memoryBytes,
    wasmModule,
  };

  let closed = false;
  let runSeq = 0;
  let workerSeq = 0;
  const pool: PoolWorker[] = [];

  const spawn = (): PoolWorker => {
    workerSeq += 1;
    return new PoolWorker(`w${workerSeq}`, workerOptions, onMessage, onGone);
  };

  function pick(): PoolWorker {
    let best: PoolWorker | undefined;
    for (const w of pool) {
      if (w.alive && (best === undefined || w.runs.size < best.runs.size)) best = w;
    }
    if (best === undefined) {
      best = spawn();
      pool.push(best);
    }
    return best;
  }

  /** Workers that died before they ever became ready, in a row (a broken install, not a guest). */
  let earlyDeaths = 0;
  const MAX_EARLY_DEATHS = 3;

  /**
   * A started worker kept out of the pool, so that runs replayed after a worker loss do not wait
   * for a thread to boot and load QuickJS (the cost: one idle worker).
   */
  let spare: PoolWorker | null = null;

  function replace(w: PoolWorker): void {
    const i = pool.indexOf(w);
    if (i >= 0) pool.splice(i, 1);
    if (spare === w) spare = null;
    earlyDeaths = w.started ? 0 : earlyDeaths + 1;
    // Never respawn in a tight loop: a worker that cannot start is replaced only by a later run.
    if (closed || earlyDeaths > MAX_EARLY_DEATHS) return;
    if (spare?.alive) {
      pool.push(spare);
      spare = spawn();
    } else {
      pool.push(spawn());
    }
  }

  function onGone(w: PoolWorker): void {
    replace(w);
    // The run inside a guest slice when the thread died is the one that killed it; the others
    // continue on another worker from what they had already received.
    const inSlice = w.slice[1] ?? 0;
    for (const run of [...w.runs.values()]) {
      if (run.id !== inSlice && replay(run)) continue;
      finalize(run, {
        status: 'failed',
        code: 'WF_SANDBOX_WORKER_LOST',
        message: 'the worker thread running this run stopped',
      });
    }
  }

  /**
   * Continues a run whose worker was lost through no fault of its own: a fresh worker re-runs it
   * from the start with the same seed, start time and arguments, and the settlements it already
   * received are delivered again in the same order. The guest is deterministic given those (no
   * real clock, seeded random, UTC), so it reaches the same state and its result is identical to
   * an undisturbed run. Calls it already made are not dispatched again (contract 1: at most once).
   */
  function replay(run: Run): boolean {
    if (run.ended || closed || run.replays >= MAX_REPLAYS) return false;
    run.replays += 1;
    run.worker.runs.delete(run.id);
    const w = pick();
    run.worker = w;
    w.runs.set(run.id, run);
    w.hold();
    const elapsed = performance.now() - run.t0;
    w.send({
      t: TO_WORKER.start,
      runId: run.id,
      ...run.start,
      limits: {
        ...run.limits,
        wallMs: Math.max(1, Math.ceil(run.limits.wallMs - elapsed)),
        maxErrorChars: MAX_ERROR_CHARS,
      },
      seed: run.seed,
      startTime: run.startTime,
      replay: run.log.slice(),
    });
    return true;
  }

  /** Terminates a worker that stopped answering; the run that held it timed out. */
  function wedged(w: PoolWorker, culprit: Run, reason: 'wall' | 'slice' = 'wall'): void {
    if (!w.alive) return;
    w.alive = false;
    replace(w);
    void w.worker.terminate();
    for (const run of [...w.runs.values()]) {
      if (run !== culprit && replay(run)) continue;
      finalize(
        run,
        run === culprit
          ? reason === 'slice'
            ? {
                status: 'timeout',
                code: 'WF_SANDBOX_CPU_SLICE',
                message: `a synchronous guest slice used more than ${run.limits.cpuSliceMs} ms of CPU and its worker was replaced`,
              }
            : {
                status: 'timeout',
                code: 'WF_SANDBOX_WALL_TIMEOUT',
                message: 'the run exceeded its wall-clock limit and its worker was replaced',
              }
          : {
              status: 'failed',
              code: 'WF_SANDBOX_WORKER_LOST',
              message: 'the worker thread running this run was replaced',
            },
      );
    }
  }

  // Catches slices that run long between interrupt polls (native builtins, deep error unwinding).
  // Measured in the worker thread's CPU time where the platform has a thread clock (Linux), so a
  // busy machine does not end an innocent slice; the part of the slice before the watchdog first
  // saw it (at most one tick) is counted as wall time.
  const sliceWatch = setInterval(() => {
    const t = performance.timeOrigin + performance.now();
    for (const w of [...pool]) {
      const runId = w.slice[1] ?? 0;
      const started = w.slice[0] ?? t;
      if (!w.alive || runId === 0) {
        w.watch = null;
        continue;
      }
      if (w.watch === null || w.watch.runId !== runId || w.watch.started !== started) {
        w.watch = {
          runId,
          started,
          wall0: t,
          cpu0: w.tid === null ? Number.NaN : taskCpuMs(w.tid),
        };
      }
      const run = w.runs.get(runId);
      if (run === undefined || run.ended) continue;
      const bound = run.limits.cpuSliceMs + SLICE_GRACE_MS;
      if (t - started <= bound) continue;
      const cpuNow = w.tid === null ? Number.NaN : taskCpuMs(w.tid);
      // The worker's own CPU baseline for this slice (taken ~1 ms in) is preferred: this thread
      // may itself have been descheduled before it first saw the slice.
      const baseCpu = w.slice[2] ?? Number.NaN;
      const baseAt = w.slice[3] ?? Number.NaN;
      const used =
        baseAt >= started && Number.isFinite(baseCpu + cpuNow)
          ? baseAt - started + (cpuNow - baseCpu)
          : Number.isFinite(w.watch.cpu0 + cpuNow)
            ? w.watch.wall0 - started + (cpuNow - w.watch.cpu0)
            : t - started;
      if (used > bound) wedged(w, run, 'slice');
    }
  }, SLICE_WATCH_MS);
  sliceWatch.unref();

  function onMessage(w: PoolWorker, msg: RunMessage): void {
    const run = w.runs.get(msg.runId);
    if (run === undefined) return;
    if (msg.t === FROM_WORKER.call) {
      const m: CallMessage = msg;
      // A replay re-issues the calls the run made before its worker was lost: they already ran.
      if (m.callId <= run.dispatched) return;
      run.dispatched = m.callId;
      if (m.refuse !== undefined) refuse(run, m.callId, m.refuse);
      else dispatch(run, m.callId, m.name, m.input);
    } else if (msg.t === FROM_WORKER.end) {
      onEnd(run, msg);
    } else if (msg.t === FROM_WORKER.disposed) {
      run.disposed?.();
    }
  }

  /** Settles a call the worker refused without effect, in order with the host's settlements. */
  function refuse(run: Run, callId: number, envelope: string): void {
    setImmediate(() => send(run, callId, envelope));
  }

  function send(run: Run, callId: number, envelope: string): void {
    if (run.ended) return;
    run.log.push([callId, envelope]);
    if (run.worker.alive) {
      run.worker.send({ t: TO_WORKER.settle, runId: run.id, callId, env: envelope });
    }
  }

  function dispatch(run: Run, callId: number, name: string, inputText: string): void {
    // invariant 3: a call the worker accepted is tracked here until it settles.
    if (run.ended) return;
    const fn = Object.hasOwn(run.capabilities, name) ? run.capabilities[name] : undefined;
    // The controller is created on first use: most capabilities never read their signal.
    let controller: AbortController | undefined;
    const call: Call = {
      abort: () => {
        controller ??= new AbortController();
        controller.abort();
      },
      done: Promise.resolve(),
    };
    let now: number | undefined;
    const ctx: CapabilityContext = Object.freeze({
      get signal(): AbortSignal {
        controller ??= new AbortController();
        return controller.signal;
      },
      callId,
      setNow(epochMs: number): void {
        if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) {
          throw new TypeError('setNow(epochMs) needs a finite number');
        }
        now = epochMs;
      },
    });
    const L = run.limits;
    const invoke = async (): Promise<unknown> => {
      if (fn === undefined)
        throw new SandboxError('WF_SANDBOX_UNKNOWN_CAPABILITY', 'no such capability');
      const input = inputText === '' ? undefined : parseJsonText(inputText);
      return fn(input, ctx);
    };
    const done = invoke()
      .then(
        (value) => {
          const r = toJsonText(value, L.maxResultBytes, L.maxJsonDepth);
          if (r.ok) return okEnvelope(r.text, now);
          return errorEnvelope(
            'WF_SANDBOX_HOST_RESULT_INVALID',
            `capability ${name} returned a value that cannot cross as JSON: ${r.detail}`,
            undefined,
            now,
          );
        },
        (error: unknown) => {
          const rawCode = readString(error, 'code');
          const code =
            rawCode !== undefined && CODE_PATTERN.test(rawCode) ? rawCode : 'WF_SANDBOX_HOST_ERROR';
          const rawMessage =
            typeof error === 'string'
              ? error
              : (readString(error, 'message') ?? 'capability failed');
          let dataJson: string | undefined;
          try {
            const data =
              typeof error === 'object' && error !== null
                ? (error as { data?: unknown }).data
                : undefined;
            if (data !== undefined) {
              const r = toJsonText(data, L.maxResultBytes, L.maxJsonDepth);
              if (r.ok) dataJson = r.text;
            }
          } catch {
            dataJson = undefined;
          }
          return errorEnvelope(code, redactHostMessage(rawMessage), dataJson, now);
        },
      )
      .then((envelope) => {
        run.calls.delete(callId);
        // Settlements go to the worker in the order the host promises settled (contract 1).
        send(run, callId, envelope);
      });
    call.done = done;
    run.calls.set(callId, call);
  }

  function onEnd(run: Run, msg: EndMessage): void {
    if (run.ended) return;
    const ending: Ending = {
      status: msg.status as SandboxOutcome['status'],
      code: msg.code,
      message: msg.message,
      ...(msg.value !== undefined ? { valueText: msg.value } : {}),
      ...(msg.guestCode !== undefined ? { guestCode: msg.guestCode } : {}),
    };
    run.stats = msg.stats;
    finalize(run, ending, msg.held);
  }

  /**
   * Ends a run: the bridge is closed (run.ended), outstanding capability calls are aborted and
   * given abortGraceMs to settle, then the worker disposes the VM, then the outcome resolves.
   */
  function finalize(run: Run, ending: Ending, held = false): void {
    if (run.ended) return;
    run.ended = true;
    if (run.watchdog !== null) clearTimeout(run.watchdog);
    run.detachSignal?.();
    const w = run.worker;
    void (async () => {
      if (run.calls.size > 0) {
        for (const call of run.calls.values()) call.abort();
        const drained = Promise.allSettled([...run.calls.values()].map((c) => c.done));
        await Promise.race([drained, delay(run.limits.abortGraceMs)]);
      }
      if (held && w.alive) {
        const acknowledged = new Promise<void>((resolve) => {
          run.disposed = resolve;
        });
        w.send({ t: TO_WORKER.dispose, runId: run.id });
        const answered = await Promise.race([
          acknowledged.then(() => true),
          delay(run.limits.abortGraceMs).then(() => false),
        ]);
        if (!answered) wedged(w, run);
      }
      resolveRun(run, ending);
    })();
  }

  function resolveRun(run: Run, ending: Ending): void {
    if (run.done) return;
    run.done = true;
    run.worker.runs.delete(run.id);
    run.worker.release();
    const stats: SandboxStats = {
      elapsedMs: performance.now() - run.t0,
      cpuMs: run.stats.cpuMs,
      hostCalls: run.stats.hostCalls,
      peakMemoryBytes: run.stats.peakMemoryBytes,
      seed: run.seed,
      startTime: run.startTime,
      workerId: run.stats.workerId || run.worker.id,
      moduleId: run.stats.moduleId,
    };
    if (ending.status === 'completed') {
      let value: unknown;
      try {
        value =
          ending.valueText === undefined || ending.valueText === null
            ? undefined
            : parseJsonText(ending.valueText);
      } catch {
        run.resolve({
          status: 'failed',
          error: { code: 'WF_SANDBOX_INTERNAL', message: 'the result could not be parsed' },
          stats,
        });
        return;
      }
      run.resolve({ status: 'completed', value, stats });
      return;
    }
    const error: SandboxOutcomeError = {
      code: ending.code,
      message: redactHostMessage(ending.message, MAX_ERROR_CHARS),
    };
    if (ending.guestCode !== undefined) error.guestCode = ending.guestCode.slice(0, 100);
    run.resolve({ status: ending.status as SandboxFailureStatus, error, stats });
  }

  async function run(request: SandboxRequest): Promise<SandboxOutcome> {
    if (closed) throw new SandboxError('WF_SANDBOX_CLOSED', 'run() was called after close()');
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
    const seed = request.seed ?? randomInt(0, 2 ** 48 - 1);
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
        },
      };
    }
    const worker = pick();
    runSeq += 1;
    const id = runSeq;
    return new Promise<SandboxOutcome>((resolve) => {
      const start: StartFields = {
        source: request.source,
        argsText,
        prelude: request.prelude ?? null,
        capabilities: Object.keys(request.capabilities),
      };
      const r: Run = {
        id,
        start,
        log: [],
        dispatched: 0,
        replays: 0,
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
        () => wedged(r.worker, r),
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
      worker.send({
        t: TO_WORKER.start,
        runId: id,
        ...start,
        limits: { ...limits, maxErrorChars: MAX_ERROR_CHARS },
        seed,
        startTime,
      });
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    clearInterval(sliceWatch);
    const workers = spare === null ? [...pool] : [...pool, spare];
    spare = null;
    pool.length = 0;
    for (const w of workers) {
      for (const r of [...w.runs.values()]) {
        finalize(r, {
          status: 'aborted',
          code: 'WF_SANDBOX_CLOSED',
          message: 'the sandbox was closed',
        });
      }
      w.alive = false;
    }
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  for (let i = 0; i < poolSize; i += 1) pool.push(spawn());
  const first = [...pool];
  await Promise.all(first.map((w) => w.ready));
  if (!first.some((w) => w.started)) {
    await close();
    throw new SandboxError(
      'WF_SANDBOX_WORKER_LOST',
      'no worker thread could start the QuickJS engine',
    );
  }
  spare = spawn();
  return Object.freeze({ run, close });
}
