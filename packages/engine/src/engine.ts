// createEngine: preflight (manifest, args, source contract, approval), then one Run per start,
// executed in the sandbox (source-based) or with a host-side wf (trusted-local), finished only at
// quiescence (invariant 3), recorded through the RunRecorder port. This file holds the Engine
// object; the state, preflight, execute and handle modules in internal/ do the work.
import { randomUUID } from 'node:crypto';
import { EngineError } from './errors.js';
import { createEngineState, type Prepared } from './internal/engine-state.js';
import { begin } from './internal/handle.js';
import { checkStart } from './internal/preflight.js';
import type { RunStartRecord } from './ports.js';
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
      const recorded = recordedProvider(start);
      const agents = e.agents;
      if (
        recorded !== undefined &&
        recorded.simulated !== (agents.simulated === true) &&
        resumeOptions.allowProviderChange !== true
      ) {
        const kind = (simulated: boolean) => (simulated ? 'simulated' : 'real');
        throw new EngineError(
          'WF_ENGINE_RESUME_PROVIDER_MISMATCH',
          `cannot resume ${previousRunId}: it was recorded with ${kind(recorded.simulated)} agents (provider "${recorded.name}") and this engine has ${kind(agents.simulated === true)} agents (provider "${agents.name}"); its completed children would be mixed with ${kind(agents.simulated === true)} ones`,
          {
            hint: 'resume it where it was recorded, or pass allowProviderChange: true to label the resumed run with this provider',
          },
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
          // The host may have changed since (a tool unmounted, another directory): check again.
          ...(start.requires !== undefined ? { requires: start.requires } : {}),
        },
        // Answers shaped by the halt (stopped children, refused calls) run again live.
        {
          replay: journal.filter((entry) => entry.afterHalt !== true),
          resumedFromRunId: previousRunId,
          // Across resumes, the first run of the chain: the guest's wf.runId stays that run's.
          logicalRunId: start.logicalRunId ?? previousRunId,
          replayedFrom: { source: start.source, args: start.args },
        },
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

/** The kind of agents a recorded run used, as its start record names it; undefined when unnamed. */
function recordedProvider(start: RunStartRecord): { name: string; simulated: boolean } | undefined {
  return typeof start.provider === 'string'
    ? { name: start.provider, simulated: start.simulated === true }
    : undefined;
}
