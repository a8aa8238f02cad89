// Cost guards: no listener leak at wide fan-out, default task allocation under
// small budgets, engine-wide default budget, per-child wall limit, 80% warnings.
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createSimulatedAgents,
  type HostWorkflowApi,
  type TaskResult,
} from '../src/index.js';
import { byType, manifest, runToEnd, local } from './helpers.js';

describe('engine cost guards', () => {
  it('50 agents queued on the semaphores emit no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const agents = createSimulatedAgents({ delayMs: 2 });
      const engine = createEngine({
        agents,
        limits: { maxConcurrency: 1, deploymentConcurrency: 1 },
      });
      const { done } = await runToEnd(
        engine,
        local(
          async (wf) =>
            wf.parallel(
              Array.from(
                { length: 50 },
                (_, i) => () => wf.runAgent({ name: `q${i}`, prompt: 'p' }),
              ),
            ),
          manifest({ maxAgents: 50, maxConcurrency: 1 }),
        ),
      );
      expect(done.status).toBe('completed');
      expect(agents.stats().started).toBe(50);
      // warnings are emitted on process.nextTick; let them arrive
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('a small budget admits default tasks: each reserves min(16000, budget / concurrency)', async () => {
    const agents = createSimulatedAgents({
      respond: () => ({ usage: { inputTokens: 400, outputTokens: 100 } }),
    });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(
        async (wf) => {
          const out = await wf.parallel(
            Array.from({ length: 4 }, (_, i) => () => wf.runAgent({ name: `s${i}`, prompt: 'p' })),
          );
          return out.map((x) => (x as TaskResult | null)?.status ?? null);
        },
        manifest({ tokenBudget: 10_000, maxConcurrency: 4 }),
      ),
    );
    // 10,000 / 4 = 2,500 reserved per child: all four fit (16,000 each refused the first).
    expect(done.status).toBe('completed');
    expect(done.result).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(agents.stats().started).toBe(4);
  });

  it('the engine-wide tokenBudget applies to a manifest without one; the tighter of both wins', async () => {
    const agents = createSimulatedAgents({
      respond: () => ({ usage: { inputTokens: 600, outputTokens: 400 } }),
    });
    const engine = createEngine({ agents, limits: { tokenBudget: 3_000 } });
    const loop = async (wf: HostWorkflowApi) => {
      const total = wf.budget.total;
      for (let i = 0; i < 10; i += 1)
        await wf.runAgent({ name: `t${i}`, prompt: 'p', maxTokens: 1000 });
      return total;
    };
    const plain = await runToEnd(engine, local(loop, manifest({ maxConcurrency: 1 })));
    expect(plain.done.status).toBe('failed');
    expect(plain.done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
    expect(plain.done.error?.message).toContain('token budget of 3000');
    const looser = await runToEnd(
      engine,
      local(loop, manifest({ maxConcurrency: 1, tokenBudget: 50_000 })),
    );
    expect(looser.done.error?.message).toContain('token budget of 3000');
    const tighterManifest = await runToEnd(
      engine,
      local(loop, manifest({ maxConcurrency: 1, tokenBudget: 2_000 })),
    );
    expect(tighterManifest.done.error?.message).toContain('token budget of 2000');
    // a per-run override is capped by the engine's budget too
    const override = await runToEnd(engine, {
      ...local(loop, manifest({ maxConcurrency: 1 })),
      limits: { tokenBudget: 1_500 },
    });
    expect(override.done.error?.message).toContain('token budget of 1500');
  });

  it('warns once in the event log when 80% of the token budget is spent', async () => {
    const agents = createSimulatedAgents({
      respond: () => ({ usage: { inputTokens: 150, outputTokens: 50 } }),
    });
    const engine = createEngine({ agents });
    const { done, events } = await runToEnd(
      engine,
      local(
        async (wf) => {
          // Each reserves 150 (its ceiling) + 11 (its prompt, as the simulated agents count it)
          // and spends 200: the 5th still fits (800 + 161).
          for (let i = 0; i < 5; i += 1)
            await wf.runAgent({ name: `w${i}`, prompt: 'p', maxTokens: 150 });
          return wf.budget.spent();
        },
        manifest({ tokenBudget: 1_000, maxConcurrency: 1 }),
      ),
    );
    expect(done.status).toBe('completed');
    expect(done.result).toBe(1_000);
    const warnings = byType(events, 'limit-warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.data).toMatchObject({ limit: 'tokenBudget', used: 800, max: 1_000 });
    // emitted right after the 4th child (800 of 1000), before the 5th started
    const at = events.indexOf(warnings[0] as (typeof events)[number]);
    expect(byType(events.slice(0, at), 'agent-completed')).toHaveLength(4);
  });

  it('warns once when 80% of the wall limit is used, before the timeout', async () => {
    const agents = createSimulatedAgents({ delayMs: 10_000 });
    const engine = createEngine({ agents, limits: { wallMs: 400, stopGraceMs: 200 } });
    const { done, events } = await runToEnd(
      engine,
      local(async (wf) => wf.runAgent({ name: 'slow', prompt: 'p' })),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_WALL_TIMEOUT');
    const warnings = byType(events, 'limit-warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.data).toMatchObject({ limit: 'wallMs', max: 400 });
    expect(Number(warnings[0]?.data.used)).toBeGreaterThanOrEqual(300);
    const failedAt = events.findIndex((e) => e.type === 'workflow-failed');
    expect(events.indexOf(warnings[0] as (typeof events)[number])).toBeLessThan(failedAt);
  });

  it('a child running past childWallMs is stopped and fails WF_ENGINE_CHILD_TIMEOUT; the run goes on', async () => {
    const agents = createSimulatedAgents({
      respond: (r) => (r.name === 'stuck' ? { delayMs: 60_000 } : { delayMs: 5 }),
    });
    const engine = createEngine({ agents, limits: { childWallMs: 150 } });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const out = await wf.parallel([
          () => wf.runAgent({ name: 'stuck', prompt: 'loop for ever' }),
          () => wf.runAgent({ name: 'fine', prompt: 'p' }),
        ]);
        return {
          out: out.map((x) => (x as TaskResult | null)?.status ?? null),
          why: wf.lastFailure(),
        };
      }),
    );
    expect(done.status).toBe('completed');
    const r = done.result as { out: unknown[]; why: { error?: { code: string; message: string } } };
    expect(r.out).toEqual([null, 'completed']);
    expect(r.why?.error?.code).toBe('WF_ENGINE_CHILD_TIMEOUT');
    expect(r.why?.error?.message).toContain('per-child wall limit of 150 ms');
    expect(agents.stats()).toMatchObject({ started: 2, disposed: 2 });
  });

  it('childWallMs also bounds the structured-output repair child', async () => {
    const agents = createSimulatedAgents({
      respond: (r) =>
        r.kind === 'repair'
          ? { delayMs: 60_000, structured: { word: 'late' } }
          : { text: 'no json here', structured: { wrong: 1 } },
    });
    const engine = createEngine({ agents, limits: { childWallMs: 300 } });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const r = await wf.runAgent({
          name: 'shaped',
          prompt: 'p',
          outputSchema: {
            type: 'object',
            properties: { word: { type: 'string' } },
            required: ['word'],
            additionalProperties: false,
          },
        });
        return { r, why: wf.lastFailure() };
      }),
    );
    expect(done.status).toBe('completed');
    const out = done.result as { r: unknown; why: { error?: { code: string; message: string } } };
    expect(out.r).toBeNull();
    expect(out.why.error?.code).toBe('WF_ENGINE_OUTPUT_INVALID');
    expect(out.why.error?.message).toContain('stopped at the per-child wall limit of 300 ms');
    expect(agents.stats()).toMatchObject({ started: 2, disposed: 2 });
  });
});
