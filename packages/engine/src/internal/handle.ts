// A run's handle: begin() creates the per-run context, starts execute() and returns the handle
// whose pause / resume / stop act on the run (and on preflight, before the run exists).
import { createWallClock } from '../limits.js';
import type { RunHandle } from '../types.js';
import { type EngineState, type Prepared, type RunContext, safeEmit } from './engine-state.js';
import { createEventLog } from './event-log.js';
import { execute, finishWith } from './execute.js';
import { errorInfo } from './run-agent.js';
import { createGate } from './semaphore.js';

export function begin(e: EngineState, prepared: Prepared): RunHandle {
  const { runId, options: start } = prepared;
  const events = createEventLog(runId, e.recorder);
  const gate = createGate();
  const wall = createWallClock(start.limits?.wallMs ?? e.limits.wallMs);
  const ctx: RunContext = {
    prepared,
    runId,
    start,
    events,
    gate,
    wall,
    // Aborts a pending approval when the run is stopped during preflight.
    preflight: new AbortController(),
    run: undefined,
    stopRequest: undefined,
  };

  const done = execute(e, ctx).catch(async (thrown: unknown) => {
    // A host-side failure (a port threw, the sandbox crashed): stop and drain, then report it.
    const error = errorInfo(thrown);
    const run = ctx.run;
    if (run) {
      run.fail({
        code: 'WF_ENGINE_HOST_ERROR',
        message: `the run failed on the host: ${error.message}`,
      });
      await run.quiesce();
    }
    return finishWith(e, runId, run, events, { status: 'failed', error: run?.fatal ?? error });
  });
  e.active.set(runId, { stop: (r) => handle.stop(r), done });
  done.finally(() => e.active.delete(runId)).catch(() => {});

  const handle: RunHandle = {
    runId,
    events: events.iterable,
    done,
    pause() {
      if (gate.paused || ctx.run?.ended) return;
      gate.pause();
      wall.pause();
      safeEmit(events, 'workflow-paused', {});
      e.recorder.update(runId, { status: 'paused' });
    },
    resume() {
      if (!gate.paused) return;
      gate.resume();
      wall.resume();
      safeEmit(events, 'workflow-resumed', {});
      e.recorder.update(runId, { status: 'running' });
    },
    stop(reason = 'stopped by the user') {
      ctx.stopRequest ??= reason;
      ctx.preflight.abort();
      ctx.run?.stop(reason);
    },
  };
  if (start.signal) {
    if (start.signal.aborted) handle.stop('aborted by the caller signal');
    else
      start.signal.addEventListener('abort', () => handle.stop('aborted by the caller signal'), {
        once: true,
      });
  }
  return handle;
}
