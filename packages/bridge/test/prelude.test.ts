// createGuestPrelude as text: a single function expression whose per-run data is double-encoded
// JSON (never evaluated as code), building the wf object over whatever capabilities it is given.
// The sandbox-side behaviour (lanes, budget mirror, frozen api) is tested through the real
// QuickJS runtime in @wf/engine's integration tests; here a throwaway node:vm context stands in.
import { createContext, runInContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createGuestPrelude, WF_METHODS } from '../src/index.js';

type Caps = Record<string, (input: unknown) => Promise<unknown>>;
const context = createContext({});
const build = (init: Parameters<typeof createGuestPrelude>[0], caps: Caps) => {
  const prelude = runInContext(createGuestPrelude(init), context) as (
    c: Caps,
    m: { seed: number },
  ) => Record<string, unknown>;
  return prelude(caps, { seed: 1 });
};
const envelope = (value: unknown, spent = 0, reserved = 0) =>
  Promise.resolve({ value, state: { spent, reserved, agents: 0 } });

describe('createGuestPrelude', () => {
  it('embeds hostile args as data, not code', () => {
    const evil = '"));globalThis.pwned = 1;//\u2028</script>$' + '{x}`';
    const wf = build({ runId: 'run-1', args: { evil }, budgetTotal: null }, {});
    expect((wf.args as { evil: string }).evil).toBe(evil);
    expect(wf.runId).toBe('run-1');
    expect(runInContext('typeof globalThis.pwned', context)).toBe('undefined');
  });

  it('task methods take the id or the handle spawnAgent resolved with', async () => {
    const seen: [string, unknown][] = [];
    const caps: Caps = {};
    for (const m of ['wait', 'snapshot', 'output', 'send', 'stop'])
      caps[m] = (input) => {
        seen.push([m, input]);
        return envelope(null);
      };
    const wf = build({}, caps) as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const handle = { taskId: 'task-1', name: 'a' };
    await wf.wait?.(handle, { timeoutMs: 5 });
    await wf.snapshot?.(handle);
    await wf.output?.('task-2');
    await wf.send?.(handle, 'hi');
    await wf.stop?.(handle, 'enough');
    await wf.stop?.({ taskId: 7 });
    expect(seen).toEqual([
      ['wait', { timeoutMs: 5, taskId: 'task-1' }],
      ['snapshot', { taskId: 'task-1' }],
      ['output', { taskId: 'task-2' }],
      ['send', { taskId: 'task-1', text: 'hi' }],
      ['stop', { taskId: 'task-1', reason: 'enough' }],
      // not a handle: passed on as given, so the host names the bad field
      ['stop', { taskId: { taskId: 7 } }],
    ]);
  });

  it('defines console over wf.log where the realm has none, and leaves an existing one alone', async () => {
    const logs: unknown[] = [];
    const caps: Caps = {
      log: (input) => {
        logs.push(input);
        return envelope(null);
      },
    };
    const bare = createContext({});
    runInContext('delete globalThis.console', bare); // V8 gives every context one; QuickJS none
    const prelude = runInContext(createGuestPrelude({}), bare) as (c: Caps, m: object) => unknown;
    prelude(caps, { seed: 1 });
    runInContext("console.log('a', 1, { b: true }); console.warn('w')", bare);
    await Promise.resolve();
    expect(logs).toEqual([{ message: 'a 1 {"b":true}' }, { message: '[warn] w' }]);
    const own = { log: () => 'mine' };
    const hosted = createContext({ console: own });
    const p2 = runInContext(createGuestPrelude({}), hosted) as (c: Caps, m: object) => unknown;
    p2(caps, { seed: 1 });
    expect(runInContext('console', hosted)).toBe(own);
  });

  it('builds every wf member WF_METHODS lists', () => {
    const wf = build({}, {});
    for (const m of WF_METHODS) expect(wf, m.name).toHaveProperty(m.name);
  });

  it('mirrors the budget from each settled call and never reports Infinity', async () => {
    const caps: Caps = {
      log: () => envelope(null, 120, 30),
      runAgent: () => envelope({ status: 'completed' }, 500, 0),
    };
    const bounded = build({ budgetTotal: 1000 }, caps);
    const budget = bounded.budget as { total: number; spent(): number; remaining(): number | null };
    expect(budget.remaining()).toBe(1000);
    await (bounded.runAgent as (i: unknown) => Promise<unknown>)({ name: 'a', prompt: 'p' });
    expect(budget.spent()).toBe(500);
    expect(budget.remaining()).toBe(500);
    const unbounded = build({}, caps).budget as { total: null; remaining(): null };
    expect(unbounded.total).toBeNull();
    expect(unbounded.remaining()).toBeNull();
  });

  it('runAgent -> null with lastFailure; parallel keeps ordinary failures as null, rethrows run control', async () => {
    const control = Object.assign(new Error('limit'), {
      code: 'WF_ENGINE_AGENT_LIMIT',
      data: { runControl: true },
    });
    const caps: Caps = {
      runAgent: (input) =>
        (input as { name: string }).name === 'limit'
          ? Promise.reject(control)
          : envelope({
              taskId: 'task-1',
              name: 'x',
              status: 'failed',
              error: { code: 'E', message: 'broke' },
            }),
    };
    const wf = build({}, caps) as Record<
      'runAgent' | 'lastFailure' | 'parallel',
      (...a: unknown[]) => unknown
    >;
    expect(await wf.runAgent({ name: 'x', prompt: 'p' })).toBeNull();
    expect(wf.lastFailure()).toMatchObject({
      taskId: 'task-1',
      status: 'failed',
      error: { message: 'broke' },
    });
    const out = await wf.parallel([
      () => Promise.reject(new Error('ordinary')),
      () => Promise.resolve(2),
    ]);
    expect(out).toEqual([null, 2]);
    await expect(wf.parallel([() => wf.runAgent({ name: 'limit', prompt: 'p' })])).rejects.toBe(
      control,
    );
    await expect(wf.parallel([() => 1], { concurrency: 0 })).rejects.toThrow(/positive integer/);
  });

  it('tasks inherit the innermost phase; phases report both edges', async () => {
    const seen: unknown[] = [];
    const caps: Caps = {
      phase: (input) => {
        seen.push(input);
        return envelope(null);
      },
      spawnAgent: (input) => {
        seen.push(input);
        return envelope({ taskId: 'task-1', name: 'a' });
      },
    };
    const wf = build({}, caps) as Record<
      'phase' | 'spawnAgent',
      (...a: unknown[]) => Promise<unknown>
    >;
    await wf.phase('outer', () =>
      wf.phase('inner', () => wf.spawnAgent({ name: 'a', prompt: 'p' })),
    );
    expect(seen).toEqual([
      { name: 'outer', state: 'started' },
      { name: 'inner', state: 'started' },
      { name: 'a', prompt: 'p', phase: 'inner' },
      { name: 'inner', state: 'completed' },
      { name: 'outer', state: 'completed' },
    ]);
  });
});
