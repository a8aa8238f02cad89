// The pool of workers behind one sandbox: picking and replacing workers, replaying the bystanders
// of a lost worker, the CPU-slice watchdog, and routing each worker message to its run.
import { taskCpuMs } from './cpu-clock.js';
import { compileEngineBinary } from './engine-wasm.js';
import { dispatch, refuse } from './capability-calls.js';
import { PoolWorker } from './pool-worker.js';
import { type CallMessage, FROM_WORKER, type RunMessage, TO_WORKER } from './protocol.js';
import { onEnd, finalize } from './run-end.js';
import { MAX_ERROR_CHARS, type Run, type SandboxState } from './sandbox-state.js';

/** How often the main thread looks at each worker's current slice. */
const SLICE_WATCH_MS = 100;
/**
 * A slice may overstay cpuSliceMs by this much CPU time before its worker is ended (the worker's
 * own interrupt normally stops it at cpuSliceMs; this catches builtins that never poll).
 */
const SLICE_GRACE_MS = 250;
/**
 * A slice that used this much CPU time makes its worker hot: the other runs on that worker leave
 * for another one (replayed from what they received), so a CPU-heavy slice delays its neighbours
 * by at most this much CPU plus one watchdog tick, not by up to cpuSliceMs + SLICE_GRACE_MS.
 * On one shared worker, bystanders of a long slice would wait for all of it (figures in
 * bench/RESULTS.md).
 */
const EVACUATE_AFTER_MS = 50;
/** Workers the pool may hold beyond poolSize while hot ones finish their slice. */
const EXTRA_WORKERS = 2;
/** Times one run may be replayed on another worker (after a worker loss or leaving a hot one). */
const MAX_REPLAYS = 3;
const MAX_EARLY_DEATHS = 3;

export function spawn(s: SandboxState): PoolWorker {
  s.workerSeq += 1;
  // Later workers get the compiled module (V8 shares its compiled and tiered-up code).
  if (s.workerOptions.wasmModule === null) {
    const compiled = [...s.pool, ...(s.spare === null ? [] : [s.spare])].find(
      (w) => w.compiled !== null,
    )?.compiled;
    if (compiled !== undefined) s.workerOptions.wasmModule = compiled;
  }
  // The first worker: this thread compiles the engine while that one boots (Node's own start,
  // during which this thread is idle), and posts it. Not with --liftoff-only:
  // V8 reads that flag when it compiles, and setting it here first would cost every later
  // thread boot Node's code cache (see tiering.js), so that worker sets it and compiles.
  const engineFollows = s.workerOptions.wasmModule === null && !s.workerOptions.liftoffOnly;
  const w = new PoolWorker(
    `w${s.workerSeq}`,
    { ...s.workerOptions, engineFollows },
    (w, msg) => onMessage(s, w, msg),
    (w) => onGone(s, w),
  );
  if (engineFollows) {
    s.engine ??= compileEngineBinary();
    s.engine.then(
      (wasmModule) => {
        s.workerOptions.wasmModule ??= wasmModule;
        w.send({ t: TO_WORKER.engine, wasmModule });
      },
      () => {
        // The worker compiles it itself and reports what failed; a later spawn tries again.
        s.engine = null;
        w.send({ t: TO_WORKER.engine, wasmModule: null });
      },
    );
  }
  return w;
}

/**
 * Runs a started worker takes on before a worker that is still booting gets one: booting takes
 * about as long as starting this many runs, and its runs wait until it is ready.
 */
const BOOT_PENALTY = 8;

/**
 * The least busy live worker that is not hot (and not in `avoid`); a booting worker counts as
 * BOOT_PENALTY runs busier, so sequential runs never wait for a boot while a burst still spreads
 * over the whole pool. When every such worker already holds a run, one more starts (up to
 * poolSize). When every worker is hot, the started spare joins the pool (bounded by poolSize +
 * EXTRA_WORKERS); past that bound a hot worker is shared again rather than growing the pool.
 */
export function pick(s: SandboxState, avoid?: ReadonlySet<PoolWorker>): PoolWorker {
  let best: PoolWorker | undefined;
  let bestLoad = Number.POSITIVE_INFINITY;
  let hot: PoolWorker | undefined;
  let hotLoad = Number.POSITIVE_INFINITY;
  let starting = 0;
  for (const w of s.pool) {
    if (!w.alive) continue;
    if (!w.started) starting += 1;
    if (avoid?.has(w)) continue;
    const load = w.runs.size + (w.started ? 0 : BOOT_PENALTY);
    if (w.hot !== null) {
      if (load < hotLoad) {
        hot = w;
        hotLoad = load;
      }
    } else if (load < bestLoad) {
      best = w;
      bestLoad = load;
    }
  }
  if (best !== undefined) {
    if (bestLoad > 0 && starting === 0 && s.pool.length < s.poolSize && !s.closed) {
      s.pool.push(spawn(s));
    }
    return best;
  }
  if (hot !== undefined && s.pool.length >= s.poolSize + EXTRA_WORKERS) return hot;
  if (s.spare?.alive) {
    best = s.spare;
    s.spare = s.closed ? null : spawn(s);
  } else {
    best = spawn(s);
  }
  s.pool.push(best);
  return best;
}

/** Starts a spare worker (kept for replays after a worker loss) when there is none. */
export function ensureSpare(s: SandboxState): void {
  if (s.spare !== null || s.closed || s.earlyDeaths > MAX_EARLY_DEATHS) return;
  s.spare = spawn(s);
}

/** The background boot: the pool up to poolSize, then the spare. */
export function bootRest(s: SandboxState): void {
  if (s.closed || s.earlyDeaths > MAX_EARLY_DEATHS) return;
  while (s.pool.length < s.poolSize) s.pool.push(spawn(s));
  ensureSpare(s);
}

/** An extra worker is ended only after this long without runs, so hot slices do not churn threads. */
const TRIM_IDLE_MS = 5000;
const idleSince = new WeakMap<PoolWorker, number>();

/** Ends one worker above poolSize (left over from a hot slice) that has been idle a while. */
function trim(s: SandboxState, t: number): void {
  if (s.pool.length <= s.poolSize) return;
  for (const w of s.pool) {
    if (!w.alive || w.runs.size > 0 || w.hot !== null) {
      idleSince.delete(w);
      continue;
    }
    const since = idleSince.get(w);
    if (since === undefined) {
      idleSince.set(w, t);
      continue;
    }
    if (t - since < TRIM_IDLE_MS) continue;
    s.pool.splice(s.pool.indexOf(w), 1);
    // Not alive first: its exit is not a loss to replace.
    w.alive = false;
    void w.worker.terminate();
    return;
  }
}

export function replace(s: SandboxState, w: PoolWorker): void {
  const i = s.pool.indexOf(w);
  if (i >= 0) s.pool.splice(i, 1);
  if (s.spare === w) s.spare = null;
  s.earlyDeaths = w.started ? 0 : s.earlyDeaths + 1;
  // Never respawn in a tight loop: a worker that cannot start is replaced only by a later run.
  if (s.closed || s.earlyDeaths > MAX_EARLY_DEATHS) return;
  if (s.spare?.alive) {
    s.pool.push(s.spare);
    s.spare = spawn(s);
  } else {
    s.pool.push(spawn(s));
  }
}

export function onGone(s: SandboxState, w: PoolWorker): void {
  replace(s, w);
  // The run inside a guest slice when the thread died is the one that killed it; the others
  // continue on another worker from what they had already received.
  const inSlice = w.slice[1] ?? 0;
  for (const run of [...w.runs.values()]) {
    if (run.id !== inSlice && replay(s, run)) continue;
    finalize(s, run, {
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
 * an undisturbed run. Calls it already made are not dispatched again (a host call runs at most once).
 */
export function replay(s: SandboxState, run: Run): boolean {
  if (run.ended || s.closed || run.replays >= MAX_REPLAYS) return false;
  run.replays += 1;
  run.worker.runs.delete(run.id);
  // Never back to a worker that still holds a copy it left behind: that copy's end would be read
  // as this run's.
  const w = pick(s, run.left);
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
export function wedged(
  s: SandboxState,
  w: PoolWorker,
  culprit: Run,
  reason: 'wall' | 'slice' = 'wall',
): void {
  if (!w.alive) return;
  w.alive = false;
  replace(s, w);
  void w.worker.terminate();
  for (const run of [...w.runs.values()]) {
    if (run !== culprit && replay(s, run)) continue;
    finalize(
      s,
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

/**
 * A slice on `w` used more than EVACUATE_AFTER_MS of CPU: every other run on `w` continues on
 * another worker from what it had received (the same replay as after a worker loss, so its result
 * is identical), and `w` drops its copies once the slice ends. The hostile run keeps its worker
 * (its own thread now, shared with no one), and is still stopped by its own CPU limits.
 */
function evacuate(s: SandboxState, w: PoolWorker, culprit: number, started: number): void {
  w.hot = { runId: culprit, started };
  for (const run of [...w.runs.values()]) {
    if (run.id === culprit || run.ended) continue;
    // Out of replays, a run stays and waits for the slice, as it would on a single worker.
    if (run.replays >= MAX_REPLAYS) continue;
    run.left.add(w);
    replay(s, run);
    // Queued behind the slice: the worker ends its copy silently (no outcome is read from it).
    w.send({ t: TO_WORKER.close, runId: run.id, reason: 'aborted' });
    w.send({ t: TO_WORKER.dispose, runId: run.id });
  }
}

/** CPU time the worker's current slice has used, from the best clock available. */
function sliceCpuUsed(w: PoolWorker, started: number, t: number): number {
  const cpuNow = w.tid === null ? Number.NaN : taskCpuMs(w.tid);
  // The worker's own CPU baseline for this slice (taken at its first poll) is preferred: this
  // thread may itself have been descheduled before it first saw the slice.
  const baseCpu = w.slice[2] ?? Number.NaN;
  const baseAt = w.slice[3] ?? Number.NaN;
  const cpu0 = w.watch?.cpu0 ?? Number.NaN;
  const wall0 = w.watch?.wall0 ?? t;
  return baseAt >= started && Number.isFinite(baseCpu + cpuNow)
    ? baseAt - started + (cpuNow - baseCpu)
    : Number.isFinite(cpu0 + cpuNow)
      ? wall0 - started + (cpuNow - cpu0)
      : t - started;
}

/**
 * CPU time the slice certainly used: thread CPU since its baseline or since the watchdog first
 * saw it, never wall time (a short slice descheduled on a busy machine is not hot). NaN where
 * the platform has no thread clock.
 */
function sliceCpuAtLeast(w: PoolWorker, started: number): number {
  const cpuNow = w.tid === null ? Number.NaN : taskCpuMs(w.tid);
  const baseCpu = w.slice[2] ?? Number.NaN;
  const baseAt = w.slice[3] ?? Number.NaN;
  if (baseAt >= started && Number.isFinite(baseCpu)) return cpuNow - baseCpu;
  return cpuNow - (w.watch?.cpu0 ?? Number.NaN);
}

// Catches slices that run long between interrupt polls (native builtins, deep error unwinding).
// Measured in the worker thread's CPU time where the platform has a thread clock (Linux), so a
// busy machine does not end an innocent slice; the part of the slice before the watchdog first
// saw it (at most one tick) is counted as wall time.
export function watchSlices(s: SandboxState): ReturnType<typeof setInterval> {
  const sliceWatch = setInterval(() => {
    const t = performance.timeOrigin + performance.now();
    for (const w of [...s.pool]) {
      const runId = w.slice[1] ?? 0;
      const started = w.slice[0] ?? t;
      if (w.hot !== null && (w.hot.runId !== runId || w.hot.started !== started)) w.hot = null;
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
      // Wall time bounds CPU time from above: the clock is read only past a threshold.
      if (t - started < EVACUATE_AFTER_MS) continue;
      if (w.hot === null && w.runs.size > 1 && sliceCpuAtLeast(w, started) >= EVACUATE_AFTER_MS) {
        evacuate(s, w, runId, started);
      }
      if (t - started <= run.limits.cpuSliceMs + SLICE_GRACE_MS) continue;
      if (sliceCpuUsed(w, started, t) > run.limits.cpuSliceMs + SLICE_GRACE_MS) {
        wedged(s, w, run, 'slice');
      }
    }
    trim(s, t);
  }, SLICE_WATCH_MS);
  sliceWatch.unref();
  return sliceWatch;
}

export function onMessage(s: SandboxState, w: PoolWorker, msg: RunMessage): void {
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
    onEnd(s, run, msg);
  } else if (msg.t === FROM_WORKER.disposed) {
    run.disposed?.();
  }
}
