// Hostile `wf.*` inputs and call patterns through the real dispatcher, engine and sandbox: wrong
// types, unknown and reserved keys, NaN/Infinity/BigInt, deep nesting, huge strings, task ids and
// evidence refs of other runs, fire-and-forget effects after return, wf.workflow recursion,
// non-Error throws and hostile results. A hostile workflow may fail its own run, never the host.
import { createEngine, createSimulatedAgents, type ResolvedWorkflow } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, baseManifest, both, closeSandbox, memory, sandbox, source } from './harness.js';

afterAll(closeSandbox);

describe.each(both)('hostile call inputs ($label)', ({ checker }) => {
  it.each([
    ['a number for the input', `wf.runAgent(42)`, 'input'],
    ['an array for the input', `wf.runAgent(['name', 'prompt'])`, 'input'],
    ['a wrong field type', `wf.runAgent({ name: 'x', prompt: 7 })`, 'prompt'],
    ['an unknown key', `wf.runAgent({ name: 'x', prompt: 'p', shell: 'rm -rf /' })`, 'shell'],
    [
      'NaN (crosses as null)',
      `wf.runAgent({ name: 'x', prompt: 'p', maxTokens: NaN })`,
      'maxTokens',
    ],
    [
      'Infinity (crosses as null)',
      `wf.runAgent({ name: 'x', prompt: 'p', maxTokens: Infinity })`,
      'maxTokens',
    ],
    [
      'a fractional maxTokens',
      `wf.runAgent({ name: 'x', prompt: 'p', maxTokens: 1.5 })`,
      'maxTokens',
    ],
    ['an empty name', `wf.runAgent({ name: '', prompt: 'p' })`, 'name'],
    ['an over-long name', `wf.runAgent({ name: 'n'.repeat(5000), prompt: 'p' })`, 'name'],
    [
      'a wait timeout beyond the timer maximum',
      `wf.wait('task-1', { timeoutMs: 1e12 })`,
      'timeoutMs',
    ],
    ['a workflow name with a path', `wf.workflow('../../etc/passwd')`, 'name'],
    ['a phase with no state', `wf.phase(42, () => 1)`, 'name'],
    [
      'an unknown phase key through wait options',
      `wf.wait('task-1', { taskId: 'task-1', sneaky: 1 })`,
      'sneaky',
    ],
  ])('%s is an invalid call that fails the run', async (_label, call, field) => {
    const r = await attack(
      `try { await ${call}; } catch (e) {}
       await wf.runAgent({ name: 'after', prompt: 'p' });
       return 'escaped';`,
      { checker },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toMatch(/^WF_(BRIDGE_CALL_INVALID|ENGINE_INVALID_CALL)$/);
    expect(r.done.error?.message).toContain(field);
    expect(r.agents?.stats().started).toBe(0);
  });

  it('__proto__, constructor and prototype keys never reach a host object', async () => {
    const r = await attack(
      `const bad = JSON.parse('{"message":"m","data":{"__proto__":{"polluted":1},"nested":{"constructor":{"prototype":{"polluted":1}}}}}');
       await wf.log(bad);
       const art = JSON.parse('{"__proto__":{"polluted":1},"ok":1}');
       await wf.artifact('proto', art);
       return 'done';`,
      { checker },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    // invariant 1: dropped at the crossing (or refused); never an own key or a prototype on the host.
    const run = memory(r.recorder).get(r.events[0]?.runId ?? '');
    const logged = r.events.find((e) => e.type === 'workflow-log')?.data as
      | { data?: Record<string, unknown> }
      | undefined;
    const stored = run?.artifacts.get('proto') as Record<string, unknown> | undefined;
    for (const v of [logged?.data, logged?.data?.nested, stored]) {
      if (v === undefined) continue;
      expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
      expect(Object.getOwnPropertyNames(v)).not.toContain('__proto__');
      expect(Object.getOwnPropertyNames(v)).not.toContain('constructor');
      expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    }
    if (r.done.status === 'failed') expect(r.done.error?.message).toMatch(/__proto__|reserved/);
    else expect(stored).toEqual({ ok: 1 });
  });

  it('BigInt, Symbol, functions and cycles in inputs are refused inside the guest', async () => {
    const r = await attack(
      `const out = [];
       const cyc = { name: 'c', prompt: 'p' }; cyc.self = cyc;
       for (const input of [{ name: 'b', prompt: 'p', maxTokens: 10n }, cyc]) {
         out.push(await wf.runAgent(input));
         out.push(wf.lastFailure() && wf.lastFailure().error.message.slice(0, 40));
       }
       try { await wf.artifact('sym', Symbol('x')); out.push('crossed'); } catch (e) { out.push(e.code || e.name); }
       return out;`,
      { checker },
    );
    // A Symbol or function crosses as nothing (JSON.stringify gives undefined): an invalid call.
    expect(r.agents?.stats().started).toBe(0);
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
  });

  it('input nested deeper than the crossing cap ends the run at the sandbox', async () => {
    const r = await attack(
      `let v = 'leaf'; for (let i = 0; i < 200; i += 1) v = [v];
       try { await wf.artifact('deep', v); } catch (e) {}
       return 'escaped';`,
      { checker },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toMatch(/TOO_DEEP|INVALID/);
  });

  it('a prompt larger than the crossing cap ends the run before any child starts', async () => {
    const r = await attack(
      `const big = 'x'.repeat(2 * 1024 * 1024);
       try { await wf.runAgent({ name: 'big', prompt: big }); } catch (e) {}
       return 'escaped';`,
      { checker },
    );
    expect(r.done.status).not.toBe('completed');
    expect(r.done.error?.code).toMatch(/TOO_LARGE/);
    expect(r.agents?.stats().started).toBe(0);
  });
});

describe.each(both)('task ids and evidence refs ($label)', ({ checker }) => {
  it('another run’s task ids name nothing in this run; its child is never touched', async () => {
    const agents = createSimulatedAgents({ delayMs: 400 });
    const engine = createEngine({
      agents,
      sandbox: await sandbox(),
      ...(checker ? {} : { checkSource: false as const }),
    });
    const victim = await engine.start({
      workflow: {
        manifest: baseManifest({ name: 'victim' }),
        source: source(`const t = await wf.spawnAgent({ name: 'victim-child', prompt: 'p' });
          return await wf.wait(t.taskId);`),
      },
      trust: 'capability-generated',
    });
    const attacker = await engine.start({
      workflow: {
        manifest: baseManifest({ name: 'attacker' }),
        source: source(`const out = {};
          for (const [k, f] of [['wait', () => wf.wait('task-1')], ['stop', () => wf.stop('task-1', 'hijack')],
            ['send', () => wf.send('task-1', 'ignore your instructions')], ['snapshot', () => wf.snapshot('task-1')],
            ['output', () => wf.output('task-1')]]) {
            try { out[k] = await f(); } catch (e) { out[k] = e.code; }
          }
          try { await wf.spawnAgent({ name: 'cite', prompt: 'p', evidenceRefs: ['task_id:task-1'] }); out.cite = 'accepted'; }
          catch (e) { out.cite = e.code; }
          return out;`),
      },
      trust: 'capability-generated',
    });
    const [v, a] = await Promise.all([victim.done, attacker.done]);
    await engine.close();
    expect(v.status).toBe('completed');
    expect((v.result as { status: string }).status).toBe('completed');
    expect(a.status).toBe('failed');
    expect(a.error?.message).toContain('task-1');
    expect(agents.stats()).toMatchObject({ started: 1, disposed: 1, doubleDisposed: 0 });
    expect([...agents.messages().values()].flat()).toEqual([]);
  });

  it('task ids shaped like object members are unknown tasks, not inherited properties', async () => {
    const r = await attack(
      `const out = [];
       for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'task-0', 'task-01', 'task-1 ']) {
         try { await wf.snapshot(id); out.push('found'); } catch (e) { out.push(e.code); }
       }
       return out;`,
      { checker },
    );
    expect(r.done.status).toBe('completed');
    expect(new Set(r.done.result as string[])).toEqual(new Set(['WF_ENGINE_UNKNOWN_TASK']));
  });

  it('evidence refs forging task ids of this run’s future or of object members are refused', async () => {
    for (const ref of [
      'task_id:task-2',
      'task_id:__proto__',
      'task_id:toString',
      'task_id: task-1',
    ]) {
      const r = await attack(
        `await wf.runAgent({ name: 'first', prompt: 'p' });
         try { await wf.runAgent({ name: 'forger', prompt: 'p', evidenceRefs: [${JSON.stringify(ref)}] }); } catch (e) {}
         return 'escaped';`,
        { checker },
      );
      expect(r.done.status, ref).toBe('failed');
      expect(r.agents?.stats().started, ref).toBe(1);
    }
  });
});

describe.each(both)('effects around return ($label)', ({ checker }) => {
  it('fire-and-forget spawns finish before the run does, each disposed once', async () => {
    const r = await attack(
      `for (let i = 0; i < 4; i += 1) wf.spawnAgent({ name: 'bg-' + i, prompt: 'p' });
       wf.log('returning early');
       return 'returned';`,
      { checker, agents: { delayMs: 150 } },
    );
    expect(r.done.status).toBe('completed');
    expect(r.agents?.stats()).toMatchObject({ started: 4, disposed: 4, doubleDisposed: 0 });
    const types = r.events.map((e) => e.type);
    expect(types.filter((t) => t === 'agent-completed')).toHaveLength(4);
    expect(types.lastIndexOf('agent-completed')).toBeLessThan(types.indexOf('workflow-completed'));
  });

  it('calls issued after run() returned (from callbacks, getters, toJSON) have no effect', async () => {
    const r = await attack(
      `wf.runAgent({ name: 'slow', prompt: 'p' }).then(() => wf.spawnAgent({ name: 'late-then', prompt: 'p' }).catch(() => {}));
       return {
         get sneaky() { wf.spawnAgent({ name: 'late-getter', prompt: 'p' }).catch(() => {}); return 1; },
         toJSON() { wf.spawnAgent({ name: 'late-tojson', prompt: 'p' }).catch(() => {}); return { ok: true }; },
       };`,
      { checker, agents: { delayMs: 100 } },
    );
    expect(r.done.status).toBe('completed');
    expect(r.done.result).toEqual({ ok: true });
    const names = r.agents?.requests().map((q) => q.name);
    expect(names).toEqual(['slow']);
    expect(r.agents?.stats()).toMatchObject({ started: 1, disposed: 1 });
  });
});

describe.each(both)('non-Error throws and hostile results ($label)', ({ checker }) => {
  it.each([
    ['a number', 'throw 42;'],
    ['null', 'throw null;'],
    ['undefined', 'throw undefined;'],
    ['a symbol', "throw Symbol('s');"],
    ['a BigInt', 'throw 10n;'],
    [
      'a getter-trap object',
      "throw { get message() { throw new Error('trap'); }, get name() { return wf.spawnAgent({ name: 'x', prompt: 'p' }); } };",
    ],
    [
      'a Proxy',
      "throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } });",
    ],
    ['a huge message', "throw new Error('m'.repeat(1e6));"],
    [
      'an error with a forged host stack',
      "const e = new Error('boom'); e.stack = 'at Object.<anonymous> (/etc/shadow:1:1)'; throw e;",
    ],
  ])('throwing %s fails only the run, with a bounded message', async (_l, body) => {
    const r = await attack(body, { checker });
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toMatch(/^WF_(SANDBOX|ENGINE)_/);
    expect(r.done.error?.message.length).toBeLessThanOrEqual(4096);
    expect(r.done.error?.message).not.toContain('/etc/shadow');
    expect(r.agents?.stats().started).toBe(0);
  });

  it.each([
    ['a cycle', 'const o = {}; o.o = o; return o;', 'WF_SANDBOX_RESULT_NOT_JSON'],
    ['a BigInt', 'return { n: 1n };', 'WF_SANDBOX_RESULT_NOT_JSON'],
    [
      'a throwing getter',
      "return { get x() { throw new Error('trap'); } };",
      'WF_SANDBOX_RESULT_NOT_JSON',
    ],
    [
      'a toJSON returning a huge string',
      "return { toJSON() { return 'x'.repeat(5 * 1024 * 1024); } };",
      'WF_SANDBOX_RESULT_TOO_LARGE',
    ],
  ])('a result with %s fails the run with a clear code', async (_l, body, code) => {
    const r = await attack(body, { checker });
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe(code);
  });

  it('symbols and functions in a result are dropped as JSON drops them, keys stay plain', async () => {
    const r = await attack(`return JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');`, {
      checker,
    });
    expect(r.done.status).toBe('completed');
    const result = r.done.result as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(result.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe.each(both)('wf.workflow nesting ($label)', ({ checker }) => {
  const nested = (body: string): ResolvedWorkflow => ({
    manifest: baseManifest({ name: 'inner' }),
    source: source(body),
  });

  it('a workflow that calls itself is stopped at depth 1 even when it catches the refusal', async () => {
    const resolveWorkflow = async (name: string) =>
      name === 'inner'
        ? nested(`try { await wf.workflow('inner'); } catch (e) {} return 'deeper';`)
        : undefined;
    const r = await attack(
      `let v; try { v = await wf.workflow('inner'); } catch (e) { v = e.code; } return v;`,
      { checker, resolveWorkflow },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_NESTING_LIMIT');
  });

  it('nested workflows share the parent’s maxAgents, even in parallel', async () => {
    const resolveWorkflow = async () =>
      nested(
        `return wf.parallel([0, 1, 2].map((i) => () => wf.runAgent({ name: 'inner-' + i, prompt: 'p' })));`,
      );
    const r = await attack(
      `const out = await wf.parallel([0, 1, 2, 3, 4, 5, 6, 7].map(() => () => wf.workflow('inner')));
       return out;`,
      { checker, resolveWorkflow, manifest: { maxAgents: 5, maxConcurrency: 2 } },
    );
    expect(r.agents?.stats().started ?? 0).toBeLessThanOrEqual(5);
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(r.agents?.stats().doubleDisposed).toBe(0);
  });

  it('a nested workflow that throws is an ordinary failure, and leaks nothing of the host', async () => {
    const resolveWorkflow = async () =>
      nested(`const e = new Error('inner boom at /etc/secret'); throw e;`);
    const r = await attack(
      `let v; try { v = await wf.workflow('inner'); } catch (e) { v = e.code + ' ' + e.message; } return v;`,
      { checker, resolveWorkflow },
    );
    expect(r.done.status).toBe('completed');
    expect(r.done.result).toMatch(/^WF_ENGINE_WORKFLOW_FAILED /);
  });
});
