// Limits under adversarial timing, through the real engine and sandbox: spawn floods racing the
// agent limit, a concurrency option wider than the manifest, several runs racing the deployment
// semaphore, spawn/stop races, budget reservations raced by a parallel fan-out, and the wall
// limit with a crowd of pending waits (invariants 6 and 7).
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, baseManifest, both, closeSandbox, sandbox, source } from './harness.js';

afterAll(closeSandbox);

describe.each(both)('limits under adversarial timing ($label)', ({ checker }) => {
  it('a synchronous spawn flood admits exactly maxAgents children', async () => {
    const r = await attack(
      `const all = [];
       for (let i = 0; i < 60; i += 1) all.push(wf.spawnAgent({ name: 's' + i, prompt: 'p' }).catch((e) => e.code));
       return await Promise.all(all);`,
      { checker, manifest: { maxAgents: 6, maxConcurrency: 3 }, agents: { delayMs: 20 } },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    const s = r.agents?.stats();
    expect(s?.started).toBeLessThanOrEqual(6);
    expect(s?.disposed).toBe(s?.started);
    expect(s?.doubleDisposed).toBe(0);
  });

  it('options.concurrency wider than the manifest does not widen the run', async () => {
    const r = await attack(
      `return wf.parallel([0, 1, 2, 3, 4, 5].map((i) => () => wf.runAgent({ name: 'c' + i, prompt: 'p' })), { concurrency: 1e9 });`,
      { checker, manifest: { maxAgents: 6, maxConcurrency: 2 }, agents: { delayMs: 30 } },
    );
    expect(r.done.status).toBe('completed');
    expect(r.agents?.stats().peakActive).toBeLessThanOrEqual(2);
    expect(r.done.cost.peakConcurrency).toBeLessThanOrEqual(2);
  });

  it('runs racing each other never exceed deploymentConcurrency together', async () => {
    const agents = createSimulatedAgents({ delayMs: 25 });
    const engine = createEngine({
      agents,
      sandbox: await sandbox(),
      limits: { deploymentConcurrency: 2 },
      ...(checker ? {} : { checkSource: false as const }),
    });
    const body = `return wf.parallel([0, 1, 2, 3, 4].map((i) => () => wf.runAgent({ name: 'd' + i, prompt: 'p' })));`;
    const handles = await Promise.all(
      [0, 1, 2].map((i) =>
        engine.start({
          workflow: {
            manifest: baseManifest({ name: `race-${i}`, maxAgents: 5, maxConcurrency: 5 }),
            source: source(body),
          },
          trust: 'capability-generated',
        }),
      ),
    );
    const dones = await Promise.all(handles.map((h) => h.done));
    await engine.close();
    expect(dones.map((d) => d.status)).toEqual(['completed', 'completed', 'completed']);
    expect(agents.stats()).toMatchObject({ started: 15, disposed: 15, doubleDisposed: 0 });
    expect(agents.stats().peakActive).toBeLessThanOrEqual(2);
  });

  it('spawn/stop races: each child is started, ended and disposed exactly once', async () => {
    const r = await attack(
      `const out = [];
       for (let i = 0; i < 6; i += 1) {
         const t = wf.spawnAgent({ name: 'r' + i, prompt: 'p' });
         t.then((h) => wf.stop(h.taskId, 'race')).catch(() => {});
         if (i % 2 === 0) out.push(await t.then((h) => wf.wait(h.taskId)).then((x) => x.status, (e) => e.code));
       }
       return out;`,
      { checker, manifest: { maxAgents: 6, maxConcurrency: 2 }, agents: { delayMs: 40 } },
    );
    expect(r.done.status).toBe('completed');
    const s = r.agents?.stats();
    expect(s?.disposed).toBe(s?.started);
    expect(s?.doubleDisposed).toBe(0);
    const starts = r.events.filter((e) => e.type === 'agent-started').length;
    const ends = r.events.filter((e) => e.type === 'agent-completed').length;
    expect(starts).toBe(ends);
  });

  it('a parallel fan-out racing budget reservations cannot launch past the budget', async () => {
    const r = await attack(
      `return wf.parallel([0, 1, 2, 3, 4, 5, 6, 7].map((i) => () => wf.runAgent({ name: 'b' + i, prompt: 'p', maxTokens: 10000 })));`,
      {
        checker,
        manifest: { maxAgents: 8, maxConcurrency: 8, tokenBudget: 35000 },
        agents: {
          delayMs: 30,
          respond: () => ({ usage: { inputTokens: 100, outputTokens: 100 } }),
        },
      },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
    expect(r.agents?.stats().started).toBeLessThanOrEqual(3);
  });

  it('the wall limit ends a run parked on a crowd of waits, disposing its child once', async () => {
    const started = Date.now();
    const r = await attack(
      `const t = await wf.spawnAgent({ name: 'forever', prompt: 'p' });
       const waits = [];
       for (let i = 0; i < 150; i += 1) waits.push(wf.wait(t.taskId).catch((e) => e.code));
       return await Promise.all(waits);`,
      { checker, limits: { wallMs: 400 }, agents: { delayMs: 600_000 } },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_WALL_TIMEOUT');
    expect(r.agents?.stats()).toMatchObject({ started: 1, disposed: 1, doubleDisposed: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
