// The engine through the trusted-local path (a host function with a host-side wf): lifecycle,
// limits, budget, capabilities, structured output, pause/stop, quiescence, events.
import { mkdtemp, mkdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type TaskResult,
} from '../src/index.js';
import { byType, childLifecycles, manifest, runToEnd, local } from './helpers.js';

describe('trusted-local runs', () => {
  it('runs agents, returns the result, emits ordered events with one start and end per child', async () => {
    const agents = createSimulatedAgents();
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents, recorder });
    const { done, events, runId } = await runToEnd(
      engine,
      local(async (wf) => {
        const a = await wf.runAgent({ name: 'alpha', prompt: 'look at alpha' });
        const b = await wf.runAgent({ name: 'beta', prompt: 'look at beta' });
        return { a: a?.finalText, b: b?.status, runId: wf.runId };
      }),
    );
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ b: 'completed', runId });
    expect(String((done.result as { a: string }).a)).toContain('alpha');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]?.type).toBe('workflow-started');
    expect(events.at(-1)?.type).toBe('workflow-completed');
    const lives = childLifecycles(events);
    expect(lives.size).toBe(2);
    for (const l of lives.values()) expect(l).toEqual(['agent-started', 'agent-completed']);
    expect(agents.stats()).toMatchObject({
      started: 2,
      completed: 2,
      disposed: 2,
      doubleDisposed: 0,
    });
    expect(done.cost.agentsStarted).toBe(2);
    expect(done.cost.tokenUsage.totalTokens).toBeGreaterThan(0);
    const rec = recorder.get(runId);
    expect(rec?.finish?.status).toBe('completed');
    expect(rec?.events.length).toBe(events.length);
    expect(rec?.journal.map((j) => j.method)).toEqual(['runAgent', 'runAgent']);
    expect(rec?.journal.map((j) => j.settleSeq)).toEqual([1, 2]);
  });

  it('parallel turns ordinary failures into null and lastFailure names why', async () => {
    const agents = createSimulatedAgents({
      respond: (r) => (r.name === 'bad' ? { fail: 'the bad child broke' } : undefined),
    });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const out = await wf.parallel([
          () => wf.runAgent({ name: 'good', prompt: 'p' }),
          () => wf.runAgent({ name: 'bad', prompt: 'p' }),
          async () => {
            throw new Error('thunk exploded');
          },
        ]);
        const failure = wf.lastFailure();
        // A lane whose thunk throws (no child involved): only the lane itself can name why.
        const thunkOnly = await wf.parallel([
          () => wf.runAgent({ name: 'fine', prompt: 'p' }),
          async () => {
            throw new Error('thunk exploded');
          },
        ]);
        const laneFailure = wf.lastFailure();
        const r = await wf.runAgent({ name: 'bad', prompt: 'again' });
        return {
          statuses: out.map((x) => (x ? (x as TaskResult).status : null)),
          failure,
          thunkOnly: thunkOnly.map((x) => (x ? (x as TaskResult).status : null)),
          laneFailure,
          r,
          last: wf.lastFailure(),
        };
      }),
    );
    expect(done.status).toBe('completed');
    const result = done.result as Record<string, unknown>;
    expect(result.statuses).toEqual(['completed', null, null]);
    // The failed lane of the first parallel: the bad child, with the provider's reason.
    expect(result.failure).toMatchObject({
      name: 'bad',
      status: 'failed',
      error: { code: 'SIMULATED_FAILURE', message: 'the bad child broke' },
    });
    expect(result.thunkOnly).toEqual(['completed', null]);
    expect(result.laneFailure).toMatchObject({
      status: 'failed',
      error: { message: 'thunk exploded' },
    });
    expect(result.r).toBeNull();
    expect(result.last).toMatchObject({
      name: 'bad',
      status: 'failed',
      error: { message: 'the bad child broke' },
    });
  });

  it('a spawn flood beyond maxAgents fails the run with WF_ENGINE_AGENT_LIMIT, even when caught', async () => {
    const agents = createSimulatedAgents();
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(
        async (wf) => {
          for (let i = 0; i < 10; i += 1) {
            try {
              await wf.spawnAgent({ name: `t${i}`, prompt: 'p' });
            } catch {
              // swallowing a run-control error does not save the run
            }
          }
          return 'survived';
        },
        manifest({ maxAgents: 3, maxConcurrency: 3 }),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(done.error?.message).toContain('maxAgents is 3');
    expect(agents.stats().started).toBe(3);
  });

  it('holds per-run concurrency and one deployment-wide semaphore across runs', async () => {
    const agents = createSimulatedAgents({ delayMs: 15 });
    const engine = createEngine({ agents, limits: { deploymentConcurrency: 3 } });
    const fan = local(
      async (wf) =>
        wf.parallel(
          Array.from({ length: 6 }, (_, i) => () => wf.runAgent({ name: `n${i}`, prompt: 'p' })),
        ),
      manifest({ maxConcurrency: 2 }),
    );
    const one = await runToEnd(engine, fan);
    expect(one.done.cost.peakConcurrency).toBe(2);
    expect(agents.stats().peakActive).toBe(2);
    const wide = local(
      async (wf) =>
        wf.parallel(
          Array.from({ length: 6 }, (_, i) => () => wf.runAgent({ name: `w${i}`, prompt: 'p' })),
        ),
      manifest({ maxConcurrency: 3 }),
    );
    const [a, b] = await Promise.all([runToEnd(engine, wide), runToEnd(engine, wide)]);
    expect(a.done.status).toBe('completed');
    expect(b.done.status).toBe('completed');
    expect(agents.stats().peakActive).toBe(3);
  });

  it('reserves tokens before launch: an overrun fails the run with WF_ENGINE_BUDGET_EXCEEDED', async () => {
    const agents = createSimulatedAgents({
      respond: () => ({ usage: { inputTokens: 300, outputTokens: 200 } }),
    });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(
        async (wf) => {
          const seen: unknown[] = [wf.budget.total, wf.budget.remaining()];
          for (let i = 0; i < 10; i += 1) {
            await wf.runAgent({ name: `b${i}`, prompt: 'p', maxTokens: 1000 });
            seen.push(wf.budget.spent());
          }
          return seen;
        },
        manifest({ tokenBudget: 2500 }),
      ),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
    expect(done.error?.message).toMatch(/token budget of 2500/);
    // Each child reserves 1000 (its ceiling) + 11 (its prompt, as the simulated agents count it)
    // and spends 500: after 2 children 1000 + 1011 fits; after 3, 1500 + 1011 does not.
    expect(agents.stats().started).toBe(3);
  });

  it('without a budget, remaining() is null, never Infinity', async () => {
    const engine = createEngine({ agents: createSimulatedAgents() });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        await wf.runAgent({ name: 'x', prompt: 'p' });
        return {
          total: wf.budget.total,
          remaining: wf.budget.remaining(),
          spent: wf.budget.spent(),
        };
      }),
    );
    expect(done.result).toMatchObject({ total: null, remaining: null });
    expect((done.result as { spent: number }).spent).toBeGreaterThan(0);
  });

  it('refuses a readOnly task before launch when the provider has no tool filter', async () => {
    const agents = createSimulatedAgents({ capabilities: { toolFilter: false } });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => wf.runAgent({ name: 'ro', prompt: 'p', readOnly: true })),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_CAPABILITY_MISSING');
    expect(done.error?.message).toContain('toolFilter');
    expect(agents.stats().started).toBe(0);
  });

  it('refuses fields the provider cannot honour (outputSchema, model) before launch', async () => {
    const agents = createSimulatedAgents({
      capabilities: { outputSchema: false, agentOptions: false },
    });
    const engine = createEngine({ agents });
    const schema = await runToEnd(
      engine,
      local(async (wf) =>
        wf.runAgent({ name: 's', prompt: 'p', outputSchema: { type: 'object' } }),
      ),
    );
    expect(schema.done.error?.code).toBe('WF_ENGINE_CAPABILITY_MISSING');
    expect(schema.done.error?.message).toContain('outputSchema');
    const model = await runToEnd(
      engine,
      local(async (wf) => wf.runAgent({ name: 'm', prompt: 'p', model: 'x' })),
    );
    expect(model.done.error?.message).toContain('model needs provider capability agentOptions');
    expect(agents.stats().started).toBe(0);
  });

  it('validates structured output, repairs once, and fails a task still invalid', async () => {
    const schema = {
      type: 'object' as const,
      properties: { verdict: { type: 'string', enum: ['ok', 'bad'] } },
      required: ['verdict'],
      additionalProperties: false,
    };
    let attempt = 0;
    const agents = createSimulatedAgents({
      respond: (r) => {
        if (r.name.startsWith('fine')) return undefined;
        attempt += 1;
        if (r.name.startsWith('fixable')) {
          return r.kind === 'repair'
            ? { text: '```json\n{"verdict":"ok"}\n```', structured: undefined }
            : { text: 'I think it is fine', structured: undefined };
        }
        return { text: 'no json here', structured: { verdict: 'maybe' } };
      },
    });
    const engine = createEngine({ agents });
    const { done, events } = await runToEnd(
      engine,
      local(async (wf) => {
        const fine = await wf.runAgent({ name: 'fine', prompt: 'p', outputSchema: schema });
        const fixed = await wf.runAgent({ name: 'fixable', prompt: 'p', outputSchema: schema });
        const broken = await wf.spawnAgent({ name: 'broken', prompt: 'p', outputSchema: schema });
        const result = await wf.wait(broken.taskId);
        return {
          fine: fine?.structured,
          fixed: fixed?.structured,
          repaired: (fixed as { repaired?: boolean }).repaired,
          broken: result,
        };
      }),
    );
    expect(done.status).toBe('completed');
    const r = done.result as {
      fine: unknown;
      fixed: unknown;
      repaired: boolean;
      broken: TaskResult;
    };
    expect(r.fine).toEqual({ verdict: 'ok' });
    expect(r.fixed).toEqual({ verdict: 'ok' });
    expect(r.repaired).toBe(true);
    expect(r.broken.status).toBe('failed');
    expect(r.broken.error?.code).toBe('WF_ENGINE_OUTPUT_INVALID');
    expect(r.broken.error?.message).toContain('after one repair');
    // exactly one repair child per invalid task
    const repairs = agents.requests().filter((q) => q.kind === 'repair');
    expect(repairs.map((q) => q.name)).toEqual(['fixable (repair)', 'broken (repair)']);
    expect(repairs.every((q) => q.toolFree === true)).toBe(true);
    expect(attempt).toBe(4);
    for (const l of childLifecycles(events).values())
      expect(l).toEqual(['agent-started', 'agent-completed']);
  });

  it('refuses an unusable outputSchema before launch', async () => {
    const agents = createSimulatedAgents();
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) =>
        wf.runAgent({
          name: 's',
          prompt: 'p',
          outputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } },
        }),
      ),
    );
    expect(done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(done.error?.message).toContain('outputSchema is not a usable JSON Schema');
    expect(agents.stats().started).toBe(0);
  });

  it('fire-and-forget spawns then return: the run ends only after those children end', async () => {
    const agents = createSimulatedAgents({ delayMs: 30 });
    const engine = createEngine({ agents });
    const { done, events } = await runToEnd(
      engine,
      local(async (wf) => {
        for (let i = 0; i < 3; i += 1) wf.spawnAgent({ name: `ff${i}`, prompt: 'p' });
        wf.log('returning early');
        return 'early';
      }),
    );
    expect(done.status).toBe('completed');
    expect(agents.stats()).toMatchObject({ started: 3, completed: 3, disposed: 3 });
    const completedAt = events.findIndex((e) => e.type === 'workflow-completed');
    expect(
      byType(events, 'agent-completed').every((e) => e.seq < (events[completedAt]?.seq ?? 0)),
    ).toBe(true);
    expect(byType(events, 'workflow-log')[0]?.data.message).toBe('returning early');
  });

  it('wait returns the full result on failure, rejects on timeout; unknown ids are named', async () => {
    const agents = createSimulatedAgents({
      respond: (r) => (r.name === 'slow' ? { delayMs: 200 } : { fail: 'nope' }),
    });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const f = await wf.spawnAgent({ name: 'failing', prompt: 'p' });
        const full = await wf.wait(f.taskId);
        const s = await wf.spawnAgent({ name: 'slow', prompt: 'p' });
        const timeout = await wf
          .wait(s.taskId, { timeoutMs: 10 })
          .catch((e: { code: string }) => e.code);
        const snap = await wf.snapshot(s.taskId);
        const unknown = await wf.wait('task-99').catch((e: { message: string }) => e.message);
        return { full, timeout, snap, unknown };
      }),
    );
    expect(done.status).toBe('completed');
    const r = done.result as {
      full: TaskResult;
      timeout: string;
      snap: { status: string };
      unknown: string;
    };
    expect(r.full).toMatchObject({ status: 'failed', error: { message: 'nope' }, name: 'failing' });
    expect(r.timeout).toBe('WF_ENGINE_WAIT_TIMEOUT');
    expect(r.snap.status).toBe('running');
    expect(r.unknown).toContain('task-99');
  });

  it('pause blocks tasks not yet published, including semaphore waiters; resume releases them', async () => {
    const agents = createSimulatedAgents({ delayMs: 20 });
    const engine = createEngine({ agents });
    const handle = await engine.start(
      local(
        async (wf) =>
          wf.parallel(
            Array.from({ length: 4 }, (_, i) => () => wf.runAgent({ name: `p${i}`, prompt: 'p' })),
          ),
        manifest({ maxConcurrency: 1 }),
      ),
    );
    await new Promise((r) => setTimeout(r, 5));
    handle.pause();
    const startedAtPause = agents.stats().started;
    await new Promise((r) => setTimeout(r, 80));
    expect(agents.stats().started).toBe(startedAtPause);
    handle.resume();
    const done = await handle.done;
    expect(done.status).toBe('completed');
    expect(agents.stats().started).toBe(4);
  });

  it('a paused run does not time out while paused; an unpaused one does', async () => {
    const agents = createSimulatedAgents({ delayMs: 40 });
    const engine = createEngine({ agents });
    const slow = local(async (wf) => {
      await wf.runAgent({ name: 'a', prompt: 'p' });
      await wf.runAgent({ name: 'b', prompt: 'p' });
      return 'ok';
    });
    const paused = await engine.start({ ...slow, limits: { wallMs: 150 } });
    paused.pause();
    await new Promise((r) => setTimeout(r, 250));
    paused.resume();
    expect((await paused.done).status).toBe('completed');
    const timed = await runToEnd(engine, { ...slow, limits: { wallMs: 50 } });
    expect(timed.done.status).toBe('failed');
    expect(timed.done.error?.code).toBe('WF_ENGINE_WALL_TIMEOUT');
    expect(agents.stats().doubleDisposed).toBe(0);
  });

  it('stop ends the run stopped, stops running children and disposes each once', async () => {
    const agents = createSimulatedAgents({ delayMs: 500 });
    const engine = createEngine({ agents });
    const handle = await engine.start(
      local(async (wf) =>
        wf.parallel(
          Array.from({ length: 3 }, (_, i) => () => wf.runAgent({ name: `s${i}`, prompt: 'p' })),
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 20));
    handle.stop('user said so');
    const done = await handle.done;
    expect(done.status).toBe('stopped');
    expect(done.error?.message).toBe('user said so');
    expect(agents.stats()).toMatchObject({
      started: 3,
      completed: 3,
      disposed: 3,
      doubleDisposed: 0,
    });
  });

  it('artifacts are write-once; the second write is an ordinary error naming it', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: createSimulatedAgents(), recorder });
    const { done, runId, events } = await runToEnd(
      engine,
      local(async (wf) => {
        const ref = await wf.artifact('report', { ok: 1 });
        const again = await wf
          .artifact('report', { ok: 2 })
          .catch((e: { code: string; message: string }) => ({ code: e.code, message: e.message }));
        return { ref, again };
      }),
    );
    expect(done.status).toBe('completed');
    expect((done.result as { again: { code: string } }).again.code).toBe(
      'WF_ENGINE_ARTIFACT_EXISTS',
    );
    expect(recorder.get(runId)?.artifacts.get('report')).toEqual({ ok: 1 });
    expect(byType(events, 'artifact-written')).toHaveLength(1);
  });

  it('readFile stays inside the workspace and refuses symlinks and escapes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'wf-engine-ws-'));
    await mkdir(join(root, 'docs'));
    await writeFile(join(root, 'docs', 'brief.md'), 'the brief');
    const outside = await mkdtemp(join(tmpdir(), 'wf-engine-out-'));
    await writeFile(join(outside, 'secret.txt'), 'secret');
    await symlink(join(outside, 'secret.txt'), join(root, 'link.txt'));
    const engine = createEngine({ agents: createSimulatedAgents(), workspace: root });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const codes = async (p: string) =>
          wf.readFile(p).catch((e: { message: string }) => e.message);
        return {
          ok: await wf.readFile('docs/brief.md'),
          up: await codes('../x'),
          inside: await codes('docs/../docs/brief.md'),
          abs: await codes(join(outside, 'secret.txt')),
          link: await codes('link.txt'),
          dir: await codes('docs'),
        };
      }),
    );
    const r = done.result as Record<string, string>;
    expect(r.ok).toBe('the brief');
    expect(r.up).toContain('outside the workspace');
    expect(r.inside).toBe('the brief');
    expect(r.abs).toContain('outside the workspace');
    expect(r.link).toContain('symbolic link');
    expect(r.dir).toContain('not an ordinary file');
  });

  it('createEngine refuses unknown or non-positive limits, naming them', () => {
    const agents = createSimulatedAgents();
    expect(() => createEngine({ agents, limits: { maxAgents: 0 } })).toThrow(
      /limits.maxAgents must be a positive integer/,
    );
    expect(() => createEngine({ agents, limits: { wallMs: -1 } })).toThrow(/limits.wallMs/);
    expect(() => createEngine({ agents, limits: { nope: 1 } as never })).toThrow(
      /limits.nope is not a known limit/,
    );
  });

  it('rejects impossible start options and reports an invalid manifest as a failed run', async () => {
    const engine = createEngine({ agents: createSimulatedAgents() });
    await expect(
      engine.start({
        workflow: { manifest: manifest(), run: async () => 1 },
        trust: 'capability-generated',
      }),
    ).rejects.toMatchObject({ code: 'WF_ENGINE_INVALID_START' });
    const { done } = await runToEnd(
      engine,
      local(async () => 1, manifest({ maxConcurrency: 50, maxAgents: 2 })),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_INVALID_MANIFEST');
    expect(done.error?.message).toContain('maxConcurrency');
  });

  it('an invalid task field fails the run loudly, naming the method and field, before any launch', async () => {
    const agents = createSimulatedAgents();
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        try {
          await wf.runAgent({ name: 'x', prompt: 'p', modelHint: 'powerful' as never });
        } catch {
          // caught, yet the run still fails (invariant 2)
        }
        return 'survived';
      }),
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
    expect(done.error?.message).toContain('modelHint');
    expect(done.error?.message).toContain('wf.runAgent');
    expect(agents.stats().started).toBe(0);
  });

  it('maps provider verification: warn -> completed_unverified, hard -> failed', async () => {
    const agents = createSimulatedAgents({
      respond: () => ({ verification: { ok: false, reasons: ['no file changed'] } }),
    });
    const engine = createEngine({ agents });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => {
        const warn = await wf.runAgent({
          name: 'w',
          prompt: 'p',
          verification: { enforcement: 'warn', requiresMutation: true },
        });
        const hard = await wf.spawnAgent({
          name: 'h',
          prompt: 'p',
          verification: { enforcement: 'hard', requiresMutation: true },
        });
        return {
          warn: warn?.status,
          reasons: warn?.verification?.reasons,
          hard: (await wf.wait(hard.taskId)).status,
        };
      }),
    );
    expect(done.result).toEqual({
      warn: 'completed_unverified',
      reasons: ['no file changed'],
      hard: 'failed',
    });
  });

  it('a pending approval is cancelled by stop, and the run ends without a child', async () => {
    const agents = createSimulatedAgents();
    let seen: AbortSignal | undefined;
    const engine = createEngine({
      agents,
      approver: {
        request: (_r, signal) => {
          seen = signal;
          return new Promise((resolve) =>
            signal.addEventListener('abort', () => resolve('cancelled')),
          );
        },
      },
    });
    const handle = await engine.start(local(async (wf) => wf.runAgent({ name: 'x', prompt: 'p' })));
    await new Promise((r) => setTimeout(r, 10));
    handle.stop('changed my mind');
    const done = await handle.done;
    expect(seen?.aborted).toBe(true);
    expect(done.status).toBe('denied');
    expect(agents.stats().started).toBe(0);
  });

  it('a denied approval ends the run denied with no child started', async () => {
    const agents = createSimulatedAgents();
    const engine = createEngine({ agents, approver: { request: async () => 'rejected' } });
    const { done } = await runToEnd(
      engine,
      local(async (wf) => wf.runAgent({ name: 'x', prompt: 'p' })),
    );
    expect(done.status).toBe('denied');
    expect(agents.stats().started).toBe(0);
  });

  it('phases are emitted and inherited by tasks; send steers a running child', async () => {
    const agents = createSimulatedAgents({ delayMs: 30 });
    const engine = createEngine({ agents });
    const { done, events } = await runToEnd(
      engine,
      local(async (wf) =>
        wf.phase('review', async () => {
          const t = await wf.spawnAgent({ name: 'r', prompt: 'p' });
          await wf.send(t.taskId, 'focus on auth');
          const out = await wf.output(t.taskId);
          return { phase: (await wf.wait(t.taskId)).phase, lastText: out.lastText };
        }),
      ),
    );
    expect(done.result).toEqual({ phase: 'review', lastText: 'ack: focus on auth' });
    expect(byType(events, 'phase-started')[0]?.data.phase).toBe('review');
    expect(byType(events, 'phase-completed')).toHaveLength(1);
    expect(byType(events, 'agent-message')[0]?.data.text).toBe('focus on auth');
    expect([...agents.messages().values()].flat()).toEqual(['focus on auth']);
  });
});

describe('misbehaving ports', () => {
  it('a provider that never reports after stop, or hangs in dispose, cannot hold the run', async () => {
    let disposed = 0;
    const stuck = {
      name: 'stuck',
      capabilities: { toolFilter: true, outputSchema: true, steer: false },
      async start(r: { taskId: string }) {
        return {
          id: `stuck-${r.taskId}`,
          result: new Promise<never>(() => {}),
          stop() {},
          dispose() {
            disposed += 1;
            return new Promise<void>(() => {});
          },
        };
      },
    };
    const engine = createEngine({ agents: stuck, limits: { stopGraceMs: 50 } });
    const handle = await engine.start(local(async (wf) => wf.runAgent({ name: 'x', prompt: 'p' })));
    await new Promise((r) => setTimeout(r, 20));
    handle.stop('give up');
    const done = await handle.done;
    expect(done.status).toBe('stopped');
    expect(disposed).toBe(1);
  });

  it('a launch that ignores its abort signal is given up; the late child is disposed once', async () => {
    let disposed = 0;
    let publish!: () => void;
    const late = {
      name: 'late',
      capabilities: { toolFilter: true, outputSchema: true, steer: false },
      start() {
        return new Promise<never>((resolve) => {
          publish = () =>
            resolve({
              id: 'late-1',
              result: Promise.resolve({ status: 'completed', text: 'x' }),
              stop() {},
              dispose() {
                disposed += 1;
              },
            } as never);
        });
      },
    };
    const engine = createEngine({ agents: late });
    const handle = await engine.start(local(async (wf) => wf.runAgent({ name: 'x', prompt: 'p' })));
    await new Promise((r) => setTimeout(r, 20));
    handle.stop('no');
    const done = await handle.done;
    expect(done.status).toBe('stopped');
    expect(done.cost.agentsStarted).toBe(0);
    publish();
    await new Promise((r) => setTimeout(r, 10));
    expect(disposed).toBe(1);
  });

  it('a recorder that throws on event/journal/update does not break the run', async () => {
    const inner = createMemoryRecorder();
    const broken = {
      ...inner,
      event() {
        throw new Error('disk full');
      },
      journal() {
        throw new Error('disk full');
      },
      update() {
        throw new Error('disk full');
      },
    };
    const engine = createEngine({ agents: createSimulatedAgents(), recorder: broken });
    const { done, events } = await runToEnd(
      engine,
      local(async (wf) => (await wf.runAgent({ name: 'x', prompt: 'p' }))?.status),
    );
    expect(done).toMatchObject({ status: 'completed', result: 'completed' });
    expect(byType(events, 'agent-completed')).toHaveLength(1);
  });
});

describe('journal text (each entry serialised once)', () => {
  it("hands the recorder the entry's JSON text, which the memory recorder stores as is", async () => {
    const inner = createMemoryRecorder();
    const seen: [unknown, unknown][] = [];
    const recorder = {
      ...inner,
      journal(runId: string, entry: unknown, text?: string) {
        seen.push([entry, text]);
        inner.journal(runId, entry as never, text);
      },
    };
    const engine = createEngine({ agents: createSimulatedAgents(), recorder });
    const { done, runId } = await runToEnd(
      engine,
      local(async (wf) => {
        await wf.runAgent({ name: 'alpha', prompt: 'p' });
        await wf.log('x');
        return null;
      }),
    );
    expect(done.status).toBe('completed');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    // The text is exactly the entry's serialisation (what maxJournalBytes charged)...
    for (const [entry, text] of seen) expect(text).toBe(JSON.stringify(entry));
    // ...and the memory recorder keeps that text: the journal reads back as the entries.
    expect((await inner.load(runId))?.journal).toEqual(seen.map(([entry]) => entry));
  });
});
