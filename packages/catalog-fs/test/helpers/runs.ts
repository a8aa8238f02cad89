// Helpers for run-store tests: start and finish records shaped like the engine's.
import type { RunFinishRecordShape, RunStartRecordShape } from '../../src/index.js';

export function startRecord(
  runId: string,
  extra: Partial<RunStartRecordShape> = {},
): RunStartRecordShape {
  return {
    runId,
    workflow: 'review',
    trust: 'capability-generated',
    manifest: { name: 'review', phases: ['run'] },
    source: 'async function run(wf, args) { return 1; }',
    args: { request: 'x' },
    seed: 42,
    startTime: 1_700_000_000_000,
    startedAt: Date.now(),
    ...extra,
  };
}

export function finishRecord(
  status: RunFinishRecordShape['status'] = 'completed',
  extra: Partial<RunFinishRecordShape> = {},
): RunFinishRecordShape {
  return {
    status,
    cost: {
      wallClockDurationMs: 5,
      agentsStarted: 1,
      agentsCompleted: 1,
      cacheHits: 0,
      tokenUsage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      peakConcurrency: 1,
    },
    endedAt: Date.now(),
    ...extra,
  };
}

export function event(
  runId: string,
  seq: number,
  type = 'workflow-log',
  data: Record<string, unknown> = {},
) {
  return { seq, runId, type, time: Date.now(), data: { message: `event ${seq}`, ...data } };
}
