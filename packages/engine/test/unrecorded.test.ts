// Invariant 12: "done" means durable. A recorder whose finish() rejects makes the run's end
// `unrecorded` (the outcome stands, and says it is not on record), and its terminal event reaches
// readers only once finish() has settled; a recorder whose begin() rejects runs nothing.
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type RunEvent,
  type RunRecorder,
} from '../src/index.js';
import { local } from './helpers.js';

const diskFull = () =>
  Object.assign(new Error('writing run.json failed: the disk is full'), {
    code: 'WF_CATALOG_RUN_IO',
  });

/** The memory recorder with begin/finish replaced by the test's. */
function recorderWith(overrides: Partial<RunRecorder>): RunRecorder & { finished: string[] } {
  const inner = createMemoryRecorder();
  const finished: string[] = [];
  return {
    ...inner,
    begin: (run) => inner.begin(run),
    event: (e) => inner.event(e),
    journal: (runId, entry, text) => inner.journal(runId, entry, text),
    artifact: (runId, name, value) => inner.artifact(runId, name, value),
    update: (runId, patch) => inner.update(runId, patch),
    finish: async (runId, record) => {
      finished.push(runId);
      return inner.finish(runId, record);
    },
    ...overrides,
    finished,
  };
}

describe('a run whose record cannot be written', () => {
  it('finish() rejects: the outcome stands and is marked unrecorded', async () => {
    const recorder = recorderWith({
      finish: async () => {
        throw diskFull();
      },
    });
    const engine = createEngine({ agents: createSimulatedAgents(), recorder });
    const handle = await engine.start(
      local(async (wf) => (await wf.runAgent({ name: 'a', prompt: 'p' }))?.status),
    );
    const done = await handle.done;
    expect(done).toMatchObject({
      status: 'completed',
      result: 'completed',
      unrecorded: {
        stage: 'finish',
        code: 'WF_CATALOG_RUN_IO',
        message: 'writing run.json failed: the disk is full',
      },
    });
  });

  it('a recorded run has no unrecorded mark', async () => {
    const engine = createEngine({ agents: createSimulatedAgents(), recorder: recorderWith({}) });
    const done = await (await engine.start(local(async () => 1))).done;
    expect(done).toMatchObject({ status: 'completed', result: 1 });
    expect(done.unrecorded).toBeUndefined();
  });

  it('the terminal event reaches readers only once finish() has settled', async () => {
    let settle: () => void = () => undefined;
    const order: string[] = [];
    const recorder = recorderWith({
      finish: () =>
        new Promise<void>((resolve) => {
          order.push('finish called');
          settle = () => {
            order.push('finish settled');
            resolve();
          };
        }),
    });
    const engine = createEngine({ agents: createSimulatedAgents(), recorder });
    const handle = await engine.start(local(async () => 'r'));
    const seen: RunEvent[] = [];
    const reading = (async () => {
      for await (const e of handle.events) {
        seen.push(e);
        if (e.type === 'workflow-completed') order.push('terminal event read');
      }
    })();
    while (!order.includes('finish called')) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.map((e) => e.type)).toEqual(['workflow-started']);
    settle();
    await reading;
    expect(order).toEqual(['finish called', 'finish settled', 'terminal event read']);
    expect((await handle.done).unrecorded).toBeUndefined();
  });

  it('begin() rejects: nothing runs, nothing is finished, the run is marked unrecorded at begin', async () => {
    const agents = createSimulatedAgents();
    const recorder = recorderWith({
      begin: async () => {
        throw diskFull();
      },
    });
    const engine = createEngine({ agents, recorder });
    const handle = await engine.start(local(async (wf) => wf.runAgent({ name: 'a', prompt: 'p' })));
    const events: RunEvent[] = [];
    for await (const e of handle.events) events.push(e);
    const done = await handle.done;
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: 'WF_CATALOG_RUN_IO' },
      unrecorded: { stage: 'begin', code: 'WF_CATALOG_RUN_IO' },
    });
    expect(events.map((e) => e.type)).toEqual(['workflow-failed']);
    expect(agents.stats().started).toBe(0);
    expect(recorder.finished).toEqual([]);
  });
});
