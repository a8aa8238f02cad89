// createEngine: preflight (manifest, args, source contract, approval), then one Run per start,
// executed in the sandbox (source-based) or with a host-side wf (trusted-local), finished only at
// quiescence (invariant 3), recorded through the RunRecorder port. This file holds the Engine
// object; the state, preflight, execute and handle modules in internal/ do the work.
import { randomUUID } from 'node:crypto';
import { EngineError } from './errors.js';
import { createEngineState, type Prepared } from './internal/engine-state.js';
import { begin } from './internal/handle.js';
import { checkStart } from './internal/preflight.js';
import type { Engine, EngineOptions, ResumeOptions, RunHandle, StartOptions } from './types.js';

export { DEFAULT_ENGINE_LIMITS } from './limits.js';

export function createEngine(options: EngineOptions): Engine {
  const e = createEngineState(options);

  const startRun = async (
    start: StartOptions,
    extra: Omit<Prepared, 'runId' | 'options'> = {},
  ): Promise<RunHandle> => {
    checkStart(start);
    const runId = start.runId ?? `run-${randomUUID()}`;
    if (e.active.has(runId))
      throw new EngineError('WF_ENGINE_INVALID_START', `run ${runId} is already active`);
    return begin(e, { runId, options: start, ...extra });
  };

  return {
    limits: e.limits,
    start: (start) => startRun(start),
    async resume(previousRunId: string, resumeOptions: ResumeOptions = {}) {
      if (!e.recorder.load) {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: the recorder has no load()`,
        );
      }
      if (e.active.has(previousRunId)) {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: it is still running on this engine`,
        );
      }
      const loaded = await e.recorder.load(previousRunId);
      if (!loaded)
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: no such run in the recorder`,
        );
      const { start, journal } = loaded;
      if (start.source === undefined || start.trust === 'trusted-local') {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: only source-based runs are deterministic enough to replay (this one is ${start.trust})`,
        );
      }
      return startRun(
        {
          workflow: { manifest: start.manifest, source: start.source, name: start.workflow },
          args: start.args,
          trust: start.trust,
          seed: start.seed,
          startTime: start.startTime,
          ...(resumeOptions.runId ? { runId: resumeOptions.runId } : {}),
          ...(resumeOptions.signal ? { signal: resumeOptions.signal } : {}),
          ...(resumeOptions.limits ? { limits: resumeOptions.limits } : {}),
          ...(start.sourceRunId ? { sourceRunId: start.sourceRunId } : {}),
          ...(start.revisionOf ? { revisionOf: start.revisionOf } : {}),
        },
        { replay: journal, resumedFromRunId: previousRunId },
      );
    },
    active: () => [...e.active.keys()],
    async close() {
      const runs = [...e.active.values()];
      for (const r of runs) r.stop('engine closed');
      await Promise.allSettled(runs.map((r) => r.done));
      if (e.ownSandbox) await (await e.ownSandbox).close();
    },
  };
}
