// Job pump and scheduling: runs a run's promise jobs in CPU-bounded batches, yields between
// runs round-robin, and decides from host facts what the run's state means after a slice.
// @ts-check
import { deliver, drainCalls } from './worker-calls.js';
import { endRun, finishKilled, hostFault, pool } from './worker-lifecycle.js';
import { decodeLaunch } from './outcome.js';
import { JOB_BATCH, now, PUMP_QUANTUM_MS, sliceSlot } from './worker-thread.js';

/** @typedef {import('./worker-run.js').Run} Run */

/**
 * After a pump reached quiescence: decide the run's state, then deliver queued settlements.
 * Deliveries wait while the pump is yielded, so the guest sees exactly the order it would see
 * without yielding (each settlement after the jobs of the previous one ran to quiescence).
 * @param {Run} run
 */
export function afterPump(run) {
  if (run.yielded) return;
  check(run);
  while (run.queue.length > 0 && !run.yielded && !isEnded(run) && run.killed === null) {
    const [callId, envelope] = /** @type {[number, string]} */ (run.queue.shift());
    if (!run.outstanding.has(callId)) {
      run.kill(
        'failed',
        'WF_SANDBOX_INTERNAL',
        'a settlement arrived for a call the run did not make',
      );
      finishKilled(run);
      return;
    }
    deliver(run, callId, envelope);
  }
}

/** Continues a yielded job pump. @param {Run} run */
export function resume(run) {
  if (isEnded(run) || !run.yielded) return;
  pool.touch();
  run.yielded = false;
  try {
    pumpJobs(run, false);
  } catch (e) {
    sliceSlot[1] = 0;
    hostFault(run, e);
    return;
  }
  afterPump(run);
}

/** @param {Run} run (a function so that type narrowing does not outlive calls that end the run) */
export function isEnded(run) {
  return run.phase === 'ended';
}

/**
 * Runs guest jobs to quiescence (one synchronous slice).
 * @param {Run} run
 * @param {boolean} inSlice true when the caller already began the slice (a delivery)
 */
export function pumpJobs(run, inSlice) {
  const fast = run.fast;
  if (fast === null || run.killed !== null || run.phase === 'ended') {
    if (inSlice) run.endSlice();
    return;
  }
  if (!inSlice) run.beginSlice();
  try {
    for (let guard = 0; guard < 100_000_000; guard += 1) {
      if (!fast.runJobs(JOB_BATCH) || run.killed !== null) break;
      // The batch emptied the queue: one cheap look instead of another (allocating) job call.
      if (!fast.hasJobs()) break;
      // Fairness: after a quantum the pump yields to the event loop, so settlements of other
      // runs on this worker are served in between (round-robin); the run is charged its own CPU.
      if (now() - run.sliceStart >= PUMP_QUANTUM_MS) {
        run.yielded = true;
        break;
      }
    }
    drainCalls(run);
  } finally {
    run.endSlice();
    if (run.killed === null && now() - run.lastSample > Math.max(20, 8 * run.sampleCost)) {
      run.sampleMemory();
    }
  }
  if (run.yielded) setImmediate(() => resume(run));
}

/** Decides what the run's state means after a slice, from host-side facts. @param {Run} run */
export function check(run) {
  if (run.phase === 'ended') return;
  if (run.killed !== null) return finishKilled(run);
  const ctx = run.ctx;
  if (ctx === null || run.launchPromise === null) return;
  if (run.result === null) {
    const fast = run.fast;
    const state = fast !== null ? fast.promiseState(run.launchPromise) : -1;
    if (state === 0) {
      if (run.outstanding.size === 0 && !run.rt?.hasPendingJob()) {
        run.kill(
          'deadlock',
          'WF_SANDBOX_DEADLOCK',
          'run() is pending with no queued jobs and no outstanding host calls',
        );
        return finishKilled(run);
      }
      return;
    }
    // launch never rejects (it catches and encodes every error): a rejection is the engine's.
    if (state !== 1 || fast === null) {
      run.kill('failed', 'WF_SANDBOX_INTERNAL', 'the run was stopped by the engine');
      return finishKilled(run);
    }
    run.result = decodeLaunch(run.limits, fast.fulfilledString(run.launchPromise));
    // invariant 3: run() has settled; new calls are refused while accepted ones drain.
    run.phase = 'settled';
  }
  if (run.outstanding.size === 0) {
    const r = run.result;
    endRun(run, {
      status: r.status,
      code: r.code ?? '',
      message: r.message ?? '',
      ...(r.value !== undefined ? { value: r.value } : {}),
      ...(r.guestCode !== undefined ? { guestCode: r.guestCode } : {}),
    });
  }
}
