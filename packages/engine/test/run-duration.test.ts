// One duration per run: the workflow-started event, run.json's startedAt and the start record
// share one clock reading; the terminal event, run.json's endedAt and cost.wallClockDurationMs
// share another. A refusal after a slow preflight reports the time it took, not 0 ms.
import { describe, expect, it } from 'vitest';
import {
  type ApprovalDecision,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
} from '../src/index.js';
import { runToEnd, local } from './helpers.js';

function recorded(recorder: ReturnType<typeof createMemoryRecorder>, runId: string) {
  const rec = recorder.get(runId);
  if (!rec?.finish) throw new Error('run not finished on the recorder');
  const first = rec.events[0];
  const last = rec.events.at(-1);
  return { rec, first, last, finish: rec.finish };
}

describe('run duration', () => {
  it('a completed run: the start record, the events and the cost tell one duration', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: createSimulatedAgents({ delayMs: 30 }), recorder });
    const { done, runId } = await runToEnd(
      engine,
      local(async (wf) => {
        await wf.runAgent({ name: 'a', prompt: 'p' });
        return 'ok';
      }),
    );
    const { rec, first, last, finish } = recorded(recorder, runId);
    expect(first?.type).toBe('workflow-started');
    expect(last?.type).toBe('workflow-completed');
    expect(first?.time).toBe(rec.start.startedAt);
    expect(last?.time).toBe(finish.endedAt);
    expect(done.cost.wallClockDurationMs).toBe(finish.endedAt - rec.start.startedAt);
    expect(done.cost.wallClockDurationMs).toBeGreaterThanOrEqual(30);
  });

  it('a run refused after a slow approval reports the time the refusal took', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({
      agents: createSimulatedAgents(),
      recorder,
      approver: {
        request: () =>
          new Promise<ApprovalDecision>((resolve) => setTimeout(() => resolve('rejected'), 80)),
      },
    });
    const { done, runId } = await runToEnd(
      engine,
      local(async () => 'never runs'),
    );
    expect(done.status).toBe('denied');
    const { rec, last, finish } = recorded(recorder, runId);
    expect(last?.type).toBe('workflow-stopped');
    expect(last?.time).toBe(finish.endedAt);
    expect(done.cost.wallClockDurationMs).toBe(finish.endedAt - rec.start.startedAt);
    // setTimeout may fire a millisecond early on a loaded machine; the refusal took ~80 ms.
    expect(done.cost.wallClockDurationMs).toBeGreaterThanOrEqual(75);
  });
});
