// Memory amplification through wf.workflow: each nested workflow is its own sandbox run with its
// own memory limit, so one run can hold many of them at once. A hostile parent must not make the
// shared QuickJS module fail the runs of other workflows (or the host).
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { baseManifest, closeSandbox, sandbox, source } from './harness.js';

afterAll(closeSandbox);

describe('nested workflow memory amplification (checker bypassed)', () => {
  it('sixty nested runs holding 60 MB each fail at most the hostile run, never a bystander', async () => {
    const agents = createSimulatedAgents({ delayMs: 1500 });
    const engine = createEngine({
      agents,
      sandbox: await sandbox(),
      checkSource: false,
      resolveWorkflow: async () => ({
        manifest: baseManifest({ name: 'hog', maxAgents: 1, maxConcurrency: 1 }),
        source: source(`const hold = [];
          for (let i = 0; i < 60; i += 1) hold.push(new Uint8Array(1024 * 1024).fill(i));
          await wf.runAgent({ name: 'hold', prompt: 'p' });
          return hold.length;`),
      }),
    });
    const bystander = await engine.start({
      workflow: {
        manifest: baseManifest({ name: 'bystander' }),
        source: source(`const a = await wf.runAgent({ name: 'b1', prompt: 'p' });
          const b = await wf.runAgent({ name: 'b2', prompt: 'p' });
          return [a.status, b.status];`),
      },
      trust: 'capability-generated',
    });
    const hostile = await engine.start({
      workflow: {
        manifest: baseManifest({ name: 'hostile', maxAgents: 60, maxConcurrency: 60 }),
        source: source(
          `return wf.parallel(Array.from({ length: 60 }, () => () => wf.workflow('hog')));`,
        ),
      },
      trust: 'capability-generated',
    });
    const [b, h] = await Promise.all([bystander.done, hostile.done]);
    await engine.close();
    expect(b.status, JSON.stringify(b.error)).toBe('completed');
    expect(b.result).toEqual(['completed', 'completed']);
    expect(['completed', 'failed']).toContain(h.status);
    expect(agents.stats().doubleDisposed).toBe(0);
  }, 60_000);
});
