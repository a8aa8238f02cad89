// The pool of workers behind one sandbox: picking and replacing workers, replaying the bystanders
// of a lost worker, the CPU-slice watchdog, and routing each worker message to its run.
import { taskCpuMs } from './cpu-clock.js';
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
/** Times one run may be replayed on a fresh worker after losing its worker to another run. */
const MAX_REPLAYS = 3;
const MAX_EARLY_DEATHS = 3;

export function spawn(s: SandboxState): PoolWorker {
  s.workerSeq += 1;
  // The first worker compiles the engine itself; later ones get its compiled module.
  if (s.workerOptions.wasmModule === null) {
    const compiled = [...s.pool, ...(s.spare === null ? [] : [s.spare])].find(
      (w) => w.compiled !== null,
    )?.compiled;
    if (compiled !== undefined) s.workerOptions.wasmModule = compiled;
  }
  return new PoolWorker(
    `w${s.workerSeq}`,
    s.workerOptions,
    (w, msg) => onMessage(s, w, msg),
    (w) => onGone(s, w),
  );
}

/**
 * Runs a started worker takes on before a worker that is still booting gets one: booting takes
 * about as long as starting this many runs, and its runs wait until it is ready.
 */
const BOOT_PENALTY = 8;

/**
 * The least busy worker. Workers start on demand: when every worker already holds a run, one
 * more is started (up to poolSize). A booting worker counts as BOOT_PENALTY runs busier, so
 * sequential runs never wait for a boot while a burst still spreads over the whole pool.
 */
export function pick(s: SandboxState): PoolWorker {
  let best: PoolWorker | undefined;
  let bestLoad = Number.POSITIVE_INFINITY;
  let starting = 0;
  for (const w of s.pool) {
    if (!w.alive) continue;
    if (!w.started) starting += 1;
    const load = w.runs.size + (w.started ? 0 : BOOT_PENALTY);
    if (load < bestLoad) {
      best = w;
      bestLoad = load;
    }
  }
  if (bestLoad > 0 && starting === 0 && s.pool.length < s.maxWorkers && !s.closed) {
    s.pool.push(spawn(s));
  }
  if (best === undefined) {
    best = spawn(s);
    s.pool.push(best);
  }
  return best;
}

/** Starts a spare worker (kept for replays after a worker loss) when there is none. */
export function ensureSpare(s: SandboxState): void {
  if (s.spare !== null || s.closed || s.earlyDeaths > MAX_EARLY_DEATHS) return;
  s.spare = spawn(s);
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
 * an undisturbed run. Calls it already made are not dispatched again (contract 1: at most once).
 */
export function replay(s: SandboxState, run: Run): boolean {
  if (run.ended || s.closed || run.replays >= MAX_REPLAYS) return false;
  run.replays += 1;
  run.worker.runs.delete(run.id);
  const w = pick(s);
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
      if (used > bound) wedged(s, w, run, 'slice');
    }
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
