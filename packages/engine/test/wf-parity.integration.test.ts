// One semantics for `wf` in both trust classes: every behaviour of the workflow API runs, from the same
// workflow source, as a sandboxed capability-generated run (bridge prelude in QuickJS) and as a
// trusted-local run (a host function), through the real engine, and must give the same answer.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEngine,
  createSimulatedAgents,
  type RunDone,
  type RunEvent,
  type StartOptions,
} from '../src/index.js';
import { manifest, runToEnd } from './helpers.js';

const MODES = ['trusted-local', 'capability-generated'] as const;
type Mode = (typeof MODES)[number];

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
});
afterAll(async () => {
  await sandbox.close();
});

/** Children named `fail*` fail; every child reports the same usage. */
const agentsFor = () =>
  createSimulatedAgents({
    respond: (r) => ({
      usage: { inputTokens: 100, outputTokens: 50 },
      ...(r.name.startsWith('fail') ? { fail: `simulated failure of ${r.name}` } : {}),
    }),
  });

/** The same source, as the run the given trust class gets. */
function startOptions(
  mode: Mode,
  source: string,
  m: Record<string, unknown>,
  args: unknown,
): StartOptions {
  if (mode === 'capability-generated')
    return { workflow: { manifest: m, source }, args, trust: mode, seed: 3 };
  const run = new Function(`${source}\nreturn run;`)() as (wf: unknown, a: unknown) => unknown;
  return { workflow: { manifest: m, run }, args, trust: mode };
}

async function runIn(
  mode: Mode,
  source: string,
  options: { manifest?: Record<string, unknown>; args?: unknown } = {},
): Promise<{ done: RunDone; events: RunEvent[] }> {
  const engine = createEngine({ agents: agentsFor(), sandbox });
  try {
    return await runToEnd(
      engine,
      startOptions(mode, source, options.manifest ?? manifest(), options.args ?? {}),
    );
  } finally {
    await engine.close();
  }
}

const completed = (done: RunDone) => {
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  return done.result;
};

describe.each(MODES)('wf semantics, %s', (mode) => {
  it('phase: returns its value, nests, and tasks inherit the innermost phase', async () => {
    const { done, events } = await runIn(
      mode,
      `async function run(wf) {
        const v = await wf.phase('outer', async () => {
          const a = await wf.runAgent({ name: 'a', prompt: 'p' });
          const inner = await wf.phase('inner', async () => (await wf.runAgent({ name: 'b', prompt: 'p' })).phase);
          const own = await wf.runAgent({ name: 'c', prompt: 'p', phase: 'mine' });
          return [a.phase, inner, own.phase];
        });
        const after = await wf.runAgent({ name: 'd', prompt: 'p' });
        return { v, after: after.phase === undefined };
      }`,
    );
    expect(completed(done)).toEqual({ v: ['outer', 'inner', 'mine'], after: true });
    expect(
      events
        .filter((e) => e.type.startsWith('phase-'))
        .map((e) => `${e.type}:${String(e.data.name ?? e.data.phase)}`),
    ).toEqual([
      'phase-started:outer',
      'phase-started:inner',
      'phase-completed:inner',
      'phase-completed:outer',
    ]);
  });

  it('phase: refuses a non-function body with a TypeError', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        try { await wf.phase('x', 5); return 'no error'; }
        catch (e) { return e.name + ': ' + e.message; }
      }`,
    );
    expect(completed(done)).toBe('TypeError: wf.phase: the second argument must be a function');
  });

  it('runAgent: a full result on success; null and lastFailure() on failure', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        const ok = await wf.runAgent({ name: 'good', prompt: 'p' });
        const before = wf.lastFailure();
        const bad = await wf.runAgent({ name: 'fail-1', prompt: 'p' });
        const f = wf.lastFailure();
        return {
          keys: Object.keys(ok).sort(), kind: ok.kind, origin: ok.origin, status: ok.status,
          durationOk: ok.durationMs === ok.endedAt - ok.startedAt,
          before, bad, frozen: Object.isFrozen(f),
          failure: { taskId: f.taskId, name: f.name, status: f.status, code: f.error.code, message: f.error.message },
        };
      }`,
    );
    expect(completed(done)).toEqual({
      keys: [
        'childId',
        'durationMs',
        'endedAt',
        'finalText',
        'kind',
        'name',
        'origin',
        'provider',
        'startedAt',
        'status',
        'taskId',
        'text',
        'usage',
      ],
      kind: 'task',
      origin: 'executed',
      status: 'completed',
      durationOk: true,
      before: null,
      bad: null,
      frozen: true,
      failure: {
        taskId: 'task-2',
        name: 'fail-1',
        status: 'failed',
        code: 'SIMULATED_FAILURE',
        message: 'simulated failure of fail-1',
      },
    });
  });

  it('parallel: keeps order and bounds lanes; an ordinary failure becomes null', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        let active = 0; let peak = 0;
        const track = async (v) => { active += 1; peak = Math.max(peak, active); await wf.runAgent({ name: 'n' + v, prompt: 'p' }); active -= 1; return v; };
        const out = await wf.parallel([
          () => track(1),
          () => { throw new Error('boom'); },
          async () => 42,
          () => track(4),
          () => wf.runAgent({ name: 'fail-p', prompt: 'p' }),
        ], { concurrency: 2 });
        const f = wf.lastFailure();
        return { out, peak, last: { name: f.name, code: f.error.code } };
      }`,
    );
    expect(completed(done)).toEqual({
      out: [1, null, 42, 4, null],
      peak: 2,
      last: { name: 'fail-p', code: 'SIMULATED_FAILURE' },
    });
  });

  it('parallel: a thrown value without a code is recorded as WF_WORKFLOW_ERROR', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        const out = await wf.parallel([() => { throw new Error('boom'); }, () => Promise.reject('text')]);
        const f = wf.lastFailure();
        return { out, f };
      }`,
    );
    expect(completed(done)).toEqual({
      out: [null, null],
      f: {
        taskId: null,
        name: '',
        status: 'failed',
        error: { code: 'WF_WORKFLOW_ERROR', message: 'text' },
      },
    });
  });

  it('parallel and pipeline: refuse bad arguments with TypeErrors naming the method', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        const msg = async (f) => { try { await f(); return 'no error'; } catch (e) { return e.name + ': ' + e.message; } };
        return [
          await msg(() => wf.parallel('x')),
          await msg(() => wf.parallel([() => 1, 2])),
          await msg(() => wf.parallel([() => 1], { concurrency: 0 })),
          await msg(() => wf.parallel([() => 1], { concurrency: 1.5 })),
          await msg(() => wf.pipeline('x')),
          await msg(() => wf.pipeline([1], 'not a stage')),
        ];
      }`,
    );
    expect(completed(done)).toEqual([
      'TypeError: wf.parallel: the first argument must be an array of functions',
      'TypeError: wf.parallel: item 1 is not a function',
      'TypeError: wf.parallel: options.concurrency must be a positive integer (got 0)',
      'TypeError: wf.parallel: options.concurrency must be a positive integer (got 1.5)',
      'TypeError: wf.pipeline: the first argument must be an array',
      'TypeError: wf.pipeline: stage 0 is not a function',
    ]);
  });

  it('pipeline: runs each item through the stages in order; a failing item becomes null', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        const out = await wf.pipeline([1, 2, 3], (v) => v * 10, async (v, item, i) => {
          if (item === 2) throw new Error('two');
          return v + i;
        });
        return { out, message: wf.lastFailure().error.message };
      }`,
    );
    expect(completed(done)).toEqual({ out: [10, null, 32], message: 'two' });
  });

  it('run control: a limit error fails the run even when every lane catches it', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        await wf.parallel([1, 2, 3].map((i) => async () => {
          try { return await wf.runAgent({ name: 'n' + i, prompt: 'p' }); } catch (e) { return 'caught'; }
        }));
        return 'finished';
      }`,
      { manifest: manifest({ maxAgents: 2, maxConcurrency: 2 }) },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
  });

  it('run control: an invalid call fails the run even when caught', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf) {
        try { await wf.runAgent({ name: 'no-prompt' }); } catch (e) { return 'caught'; }
        return 'not reached';
      }`,
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
  });

  it('budget: total, spent and remaining mirror the run synchronously', async () => {
    const source = `async function run(wf) {
      const before = [wf.budget.total, wf.budget.spent(), wf.budget.remaining()];
      await wf.runAgent({ name: 'b1', prompt: 'p', maxTokens: 200 });
      return { before, after: [wf.budget.spent(), wf.budget.remaining()] };
    }`;
    const withBudget = await runIn(mode, source, { manifest: manifest({ tokenBudget: 1000 }) });
    expect(completed(withBudget.done)).toEqual({ before: [1000, 0, 1000], after: [150, 850] });
    const without = await runIn(mode, source);
    expect(completed(without.done)).toEqual({ before: [null, 0, null], after: [150, null] });
  });

  it('args, runId and the wf object: frozen copies, the same in both trust classes', async () => {
    const { done } = await runIn(
      mode,
      `async function run(wf, args) {
        let wrote = 'refused';
        try { wf.args.list.push(3); wrote = 'wrote'; } catch (e) { wrote = e.name; }
        return {
          same: JSON.stringify(args) === JSON.stringify(wf.args) && Object.isFrozen(args), frozen: Object.isFrozen(wf.args) && Object.isFrozen(wf.args.list),
          wfFrozen: Object.isFrozen(wf) && Object.isFrozen(wf.budget), wrote,
          runId: typeof wf.runId === 'string' && wf.runId.length > 0, list: wf.args.list,
          spawned: (await wf.runAgent({ name: 'x', prompt: 'p' })) !== null,
        };
      }`,
      { args: { list: [1, 2] } },
    );
    expect(completed(done)).toEqual({
      same: true,
      frozen: true,
      wfFrozen: true,
      wrote: 'TypeError',
      runId: true,
      list: [1, 2],
      spawned: true,
    });
  });

  it('spawnAgent, wait and log: handles, full results, fire-and-forget logs', async () => {
    const { done, events } = await runIn(
      mode,
      `async function run(wf) {
        const h = await wf.spawnAgent({ name: 'fail-s', prompt: 'p' });
        wf.log('hello');
        wf.log({ message: 'with data', data: { n: 1 } });
        const r = await wf.wait(h.taskId);
        return { h: Object.keys(h).sort(), status: r.status, code: r.error.code, last: wf.lastFailure() };
      }`,
    );
    expect(completed(done)).toEqual({
      h: ['name', 'taskId'],
      status: 'failed',
      code: 'SIMULATED_FAILURE',
      last: null,
    });
    expect(events.filter((e) => e.type === 'workflow-log').map((e) => e.data.message)).toEqual([
      'hello',
      'with data',
    ]);
  });
});
