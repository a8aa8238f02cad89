// How a run ends on the main thread: the worker's report becomes an ending, outstanding calls are
// aborted and drained, a held runtime is disposed, and the outcome resolves with redacted errors.
import type {
  SandboxFailureStatus,
  SandboxOutcome,
  SandboxOutcomeError,
  SandboxStats,
} from '../types.js';
import { parseJsonText } from './json.js';
import { type EndMessage, TO_WORKER } from './protocol.js';
import { redactHostMessage } from './redact.js';
import {
  delay,
  type Ending,
  MAX_ERROR_CHARS,
  type Run,
  type SandboxState,
} from './sandbox-state.js';
import { wedged } from './worker-pool.js';

export function onEnd(s: SandboxState, run: Run, msg: EndMessage): void {
  if (run.ended) return;
  const ending: Ending = {
    status: msg.status as SandboxOutcome['status'],
    code: msg.code,
    message: msg.message,
    ...(msg.value !== undefined ? { valueText: msg.value } : {}),
    ...(msg.guestCode !== undefined ? { guestCode: msg.guestCode } : {}),
  };
  run.stats = msg.stats;
  finalize(s, run, ending, msg.held);
}

/**
 * Ends a run: the bridge is closed (run.ended), outstanding capability calls are aborted and
 * given abortGraceMs to settle, then the worker disposes the VM, then the outcome resolves.
 */
export function finalize(s: SandboxState, run: Run, ending: Ending, held = false): void {
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
      if (!answered) wedged(s, w, run);
    }
    resolveRun(run, ending);
  })();
}

export function resolveRun(run: Run, ending: Ending): void {
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
    retiredAfterTrouble: run.stats.retiredAfterTrouble,
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
