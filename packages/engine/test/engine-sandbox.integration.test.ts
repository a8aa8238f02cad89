// Source-based runs through the real QuickJS sandbox, the bridge prelude and the validated
// dispatch: the same semantics as trusted-local runs, with hostile and sloppy workflows.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type SimulatedAgentsOptions,
} from '../src/index.js';
import { byType, childLifecycles, manifest, runToEnd, shareSandbox } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

const src = (body: string) => `async function run(wf, args) {\n${body}\n}`;
const setup = (o: SimulatedAgentsOptions = {}, engineLimits = {}) => {
  const agents = createSimulatedAgents(o);
  const engine = createEngine({ agents, sandbox, limits: engineLimits });
  return { agents, engine };
};
const sourced = (source: string, m: Record<string, unknown> = manifest(), args: unknown = {}) => ({
  workflow: { manifest: m, source },
  args,
  trust: 'capability-generated' as const,
  seed: 7,
  startTime: 1_700_000_000_000,
});

describe('source-based runs in the sandbox', () => {
  it('runs agents, mirrors the budget synchronously, exposes frozen args and runId', async () => {
    const { agents, engine } = setup();
    const { done, events, runId } = await runToEnd(
      engine,
      sourced(
        src(`
          const r = await wf.runAgent({ name: 'alpha', prompt: 'look at ' + args.topic });
          let frozen = false;
          try { wf.args.topic = 'x'; } catch (e) { frozen = true; }
          return { text: r.finalText, spent: wf.budget.spent(), remaining: wf.budget.remaining(),
                   total: wf.budget.total, runId: wf.runId, frozen, topic: wf.args.topic };
        `),
        manifest({
          tokenBudget: 100000,
          inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
        }),
        { topic: 'auth' },
      ),
    );
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    const r = done.result as Record<string, unknown>;
    expect(r.text).toContain('alpha');
    expect(r.spent).toBeGreaterThan(0);
    expect(r.remaining).toBe(100000 - (r.spent as number));
    expect(r).toMatchObject({ total: 100000, runId, frozen: true, topic: 'auth' });
    expect(agents.stats().started).toBe(1);
    for (const l of childLifecycles(events).values())
      expect(l).toEqual(['agent-started', 'agent-completed']);
  });

  it('exceptions inside parallel become null; lastFailure says why; control errors propagate', async () => {
    const { engine } = setup({
      respond: (r) => (r.name === 'bad' ? { fail: 'bad child' } : undefined),
    });
    const { done } = await runToEnd(
      engine,
      sourced(
        src(`
          const out = await wf.parallel([
            () => wf.runAgent({ name: 'good', prompt: 'p' }),
            async () => { throw new Error('boom in lane'); },
            () => wf.runAgent({ name: 'bad', prompt: 'p' }),
          ], { concurrency: 2 });
          return { out: out.map((x) => x && x.status), last: wf.lastFailure() };
        `),
      ),
    );
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      out: ['completed', null, null],
      last: { name: 'bad', status: 'failed', error: { message: 'bad child' } },
    });
  });

  it('a spawn flood beyond maxAgents fails the run with a message naming the limit', async () => {
    const { agents, engine } = setup();
    const { done } = await runToEnd(
      engine,
      sourced(
        src(`
          const all = [];
          for (let i = 0; i < 50; i += 1) all.push(() => wf.spawnAgent({ name: 'f' + i, prompt: 'p' }));
          await wf.parallel(all);
          return 'survived';
        `),
        manifest({ maxAgents: 5, maxConcurrency: 2 }),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(done.error?.message).toContain('maxAgents is 5');
    expect(agents.stats().started).toBeLessThanOrEqual(5);
    expect(agents.stats().doubleDisposed).toBe(0);
  });

  it('a token budget overrun fails the run with WF_ENGINE_BUDGET_EXCEEDED', async () => {
    const { engine } = setup({
      respond: () => ({ usage: { inputTokens: 400, outputTokens: 400 } }),
    });
    const { done } = await runToEnd(
      engine,
      sourced(
        src(`
          for (let i = 0; i < 20; i += 1) {
            try { await wf.runAgent({ name: 'b' + i, prompt: 'p', maxTokens: 1000 }); } catch (e) {}
          }
          return 'survived';
        `),
        manifest({ tokenBudget: 3000 }),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
    expect(done.error?.message).toContain('token budget of 3000');
  });

  it('invalid task fields fail the run loudly with the method and field named', async () => {
    const { agents, engine } = setup();
    const { done } = await runToEnd(
      engine,
      sourced(
        src(
          `try { await wf.runAgent({ name: 'x', prompt: 'p', modelHint: 'powerful' }); } catch (e) {} return 1;`,
        ),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
    expect(done.error?.message).toMatch(/wf\.runAgent.*modelHint/);
    expect(agents.stats().started).toBe(0);
  });

  it('forgotten awaits and fire-and-forget spawns: the run still waits for every child', async () => {
    const { agents, engine } = setup({ delayMs: 20 });
    const { done, events } = await runToEnd(
      engine,
      sourced(
        src(`
          wf.runAgent({ name: 'forgotten', prompt: 'p' });
          wf.spawnAgent({ name: 'fire-and-forget', prompt: 'p' });
          wf.log({ message: 'leaving', data: { n: 2 } });
          return 'returned early';
        `),
      ),
    );
    expect(done.status).toBe('completed');
    expect(done.result).toBe('returned early');
    expect(agents.stats()).toMatchObject({ started: 2, completed: 2, disposed: 2 });
    const end = events.find((e) => e.type === 'workflow-completed')?.seq ?? 0;
    expect(byType(events, 'agent-completed').every((e) => e.seq < end)).toBe(true);
    expect(byType(events, 'workflow-log')[0]?.data).toEqual({ message: 'leaving', data: { n: 2 } });
  });

  it('nested workflows run one level deep; nested-nested calls fail the run', async () => {
    const child = {
      manifest: manifest({ name: 'child-flow' }),
      source: src(
        `const r = await wf.runAgent({ name: 'inner', prompt: 'p' }); return { inner: r.status, depth: args.depth };`,
      ),
    };
    const deeper = {
      manifest: manifest({ name: 'deeper-flow' }),
      source: src(`return await wf.workflow('child-flow', { depth: 2 });`),
    };
    const agents = createSimulatedAgents();
    const engine = createEngine({
      agents,
      sandbox,
      resolveWorkflow: async (name) =>
        name === 'child-flow' ? child : name === 'deeper-flow' ? deeper : undefined,
    });
    const ok = await runToEnd(
      engine,
      sourced(src(`return await wf.workflow('child-flow', { depth: 1 });`)),
    );
    expect(ok.done.status).toBe('completed');
    expect(ok.done.result).toEqual({ inner: 'completed', depth: 1 });
    expect(byType(ok.events, 'nested-started')).toHaveLength(1);
    expect(ok.done.cost.agentsStarted).toBe(1);
    const nested = await runToEnd(
      engine,
      sourced(src(`return await wf.workflow('deeper-flow', {});`)),
    );
    expect(nested.done.status).toBe('failed');
    expect(nested.done.error?.code).toBe('WF_ENGINE_NESTING_LIMIT');
    expect(nested.done.error?.message).toContain('one level only');
    const missing = await runToEnd(
      engine,
      sourced(src(`return await wf.workflow('no-such-flow').catch((e) => e.code);`)),
    );
    expect(missing.done.result).toBe('WF_ENGINE_WORKFLOW_NOT_FOUND');
  });

  it('a nested workflow shares the parent agent cap', async () => {
    const child = {
      manifest: manifest({ name: 'child-flow' }),
      source: src(
        `for (let i = 0; i < 3; i += 1) await wf.runAgent({ name: 'c' + i, prompt: 'p' }); return 1;`,
      ),
    };
    const { agents } = setup();
    const engine = createEngine({ agents, sandbox, resolveWorkflow: async () => child });
    const { done } = await runToEnd(
      engine,
      sourced(
        src(
          `await wf.runAgent({ name: 'p1', prompt: 'p' }); await wf.runAgent({ name: 'p2', prompt: 'p' }); return await wf.workflow('child-flow');`,
        ),
        manifest({ maxAgents: 4, maxConcurrency: 2 }),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(agents.stats().started).toBe(4);
  });

  it('the guest clock is logical: Date.now() moves only when results are delivered', async () => {
    const { engine } = setup();
    const { done } = await runToEnd(
      engine,
      sourced(
        src(`
          const t0 = Date.now();
          await wf.runAgent({ name: 'a', prompt: 'p' });
          const t1 = Date.now();
          return { t0, later: t1 >= t0, rnd: Math.random() };
        `),
      ),
    );
    expect(done.status).toBe('completed');
    expect((done.result as { t0: number }).t0).toBe(1_700_000_000_000);
    expect((done.result as { later: boolean }).later).toBe(true);
  });

  it('a source that breaks the static contract never runs', async () => {
    const { agents, engine } = setup();
    const { done } = await runToEnd(
      engine,
      sourced(`import fs from 'node:fs';\nasync function run(wf) { return 1; }`),
    );
    expect(done.status).toBe('failed');
    expect(['WF_ENGINE_SOURCE_REJECTED', 'WF_SANDBOX_COMPILE_ERROR']).toContain(done.error?.code);
    expect(agents.stats().started).toBe(0);
  });

  it('stop aborts the VM and the children; the run ends stopped', async () => {
    const { agents, engine } = setup({ delayMs: 2000 });
    const handle = await engine.start(
      sourced(
        src(
          `return await wf.parallel([1,2,3].map((i) => () => wf.runAgent({ name: 's' + i, prompt: 'p' })));`,
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    handle.stop('enough');
    const done = await handle.done;
    expect(done.status).toBe('stopped');
    expect(agents.stats()).toMatchObject({
      started: 3,
      completed: 3,
      disposed: 3,
      doubleDisposed: 0,
    });
  });

  it('every wf member works once through the sandbox', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'wf-engine-all-'));
    await writeFile(join(workspace, 'brief.md'), 'the brief');
    const recorder = createMemoryRecorder();
    const agents = createSimulatedAgents({
      respond: (r) =>
        r.name === 'slow' ? { delayMs: 400 } : r.name === 'doomed' ? { fail: 'doomed' } : undefined,
    });
    const engine = createEngine({
      agents,
      sandbox,
      recorder,
      workspace,
      resolveWorkflow: async () => ({
        manifest: manifest({ name: 'inner-flow' }),
        source: src('return args.v * 2;'),
      }),
    });
    const { done, events, runId } = await runToEnd(
      engine,
      sourced(
        src(`
          const out = { runId: wf.runId, args: wf.args, total: wf.budget.total };
          out.phase = await wf.phase('work', async () => {
            const slow = await wf.spawnAgent({ name: 'slow', prompt: 'p' });
            out.snapshot = (await wf.snapshot(slow.taskId)).status;
            await wf.send(slow.taskId, 'hurry');
            out.output = (await wf.output(slow.taskId)).lastText;
            await wf.stop(slow.taskId, 'too slow');
            out.stopped = (await wf.wait(slow.taskId)).status;
            return 'phase-done';
          });
          out.doomed = await wf.runAgent({ name: 'doomed', prompt: 'p' });
          out.lastFailure = wf.lastFailure();
          out.parallel = await wf.parallel([() => Promise.resolve(1), () => Promise.resolve(2)], { concurrency: 1 });
          out.pipeline = await wf.pipeline([1, 2], (v) => v + 1, (v, item, i) => v * 10 + i);
          out.synth = (await wf.synthesize({ inputs: [1, 2], rubric: 'sum' })).text.length > 0;
          out.nested = await wf.workflow('inner-flow', { v: 21 });
          out.artifact = (await wf.artifact('result', { ok: true })).name;
          out.file = await wf.readFile('brief.md');
          wf.log('all done');
          out.spent = wf.budget.spent() > 0;
          out.remaining = wf.budget.remaining();
          return out;
        `),
        manifest(),
        { topic: 'x' },
      ),
    );
    expect(done.error).toBeUndefined();
    expect(done.result).toEqual({
      runId,
      args: { topic: 'x' },
      total: null,
      phase: 'phase-done',
      snapshot: 'running',
      output: 'ack: hurry',
      stopped: 'stopped',
      doomed: null,
      lastFailure: {
        taskId: 'task-2',
        name: 'doomed',
        status: 'failed',
        error: { code: 'SIMULATED_FAILURE', message: 'doomed' },
      },
      parallel: [1, 2],
      pipeline: [20, 31],
      synth: true,
      nested: 42,
      artifact: 'result',
      file: 'the brief',
      spent: true,
      remaining: null,
    });
    expect(recorder.get(runId)?.artifacts.get('result')).toEqual({ ok: true });
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      'workflow-started',
      'phase-started',
      'phase-completed',
      'agent-started',
      'agent-completed',
      'agent-message',
      'synthesis-started',
      'synthesis-completed',
      'nested-started',
      'nested-completed',
      'artifact-written',
      'workflow-log',
      'workflow-completed',
    ] as const) {
      expect(types.has(t), t).toBe(true);
    }
    for (const l of childLifecycles(events).values())
      expect(l).toEqual(['agent-started', 'agent-completed']);
    expect(agents.stats().doubleDisposed).toBe(0);
  });

  it('pause holds a sandboxed fan-out before launch; resume lets it finish', async () => {
    const { agents, engine } = setup({ delayMs: 30 });
    const handle = await engine.start(
      sourced(
        src(
          `return (await wf.parallel([1,2,3,4].map((i) => () => wf.runAgent({ name: 'p' + i, prompt: 'p' })))).length;`,
        ),
        manifest({ maxConcurrency: 1 }),
      ),
    );
    handle.pause();
    await new Promise((r) => setTimeout(r, 150));
    const whilePaused = agents.stats().started;
    expect(whilePaused).toBeLessThanOrEqual(1);
    handle.resume();
    const done = await handle.done;
    expect(done).toMatchObject({ status: 'completed', result: 4 });
    expect(agents.stats().started).toBe(4);
  });
});
