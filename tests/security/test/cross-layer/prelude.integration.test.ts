// Attacks on the guest prelude (@wf/bridge src/prelude) through the real engine and sandbox:
// tampering with `wf`, poisoned intrinsics under parallel/pipeline, species and getter tricks on
// thunk arrays, thenables, Proxy and toJSON task inputs, forged and swallowed run-control errors,
// and reaching for the raw capabilities. Each runs with the static contract and with it bypassed
// (invariant 4); with the checker, a source rejection is the contract doing its job.
import { WF_METHODS } from '@wf/bridge';
import { afterAll, describe, expect, it } from 'vitest';
import { type AttackResult, attack, both, closeSandbox } from './harness.js';

afterAll(closeSandbox);

/** With the checker on, refusing the source before anything runs is also containment. */
function rejectedByContract(checker: boolean, r: AttackResult): boolean {
  if (checker && r.done.error?.code === 'WF_ENGINE_SOURCE_REJECTED') {
    expect(r.agents?.stats().started ?? 0).toBe(0);
    return true;
  }
  return false;
}

describe.each(both)('prelude tampering ($label)', ({ checker }) => {
  it('wf is deep-frozen: its members, closures, budget and args cannot be replaced', async () => {
    const r = await attack(
      `const out = {};
       const t = (k, f) => { try { f(); out[k] = 'changed'; } catch (e) { out[k] = 'refused'; } };
       t('assign', () => { wf.parallel = () => 'hijacked'; });
       t('define', () => Object.defineProperty(wf, 'runAgent', { value: () => 1 }));
       t('add', () => { wf.extra = 1; });
       t('fnprop', () => { wf.parallel.apply = () => 'hijacked'; });
       t('budget', () => { wf.budget.spent = () => 0; });
       t('budgetTotal', () => { wf.budget.total = 1e12; });
       t('setProto', () => Object.setPrototypeOf(wf, { runAgent: () => 'evil' }));
       t('args', () => { wf.args.list.push('x'); });
       t('runId', () => { wf.runId = 'run-other'; });
       out.frozen = [wf, wf.budget, wf.parallel, wf.args, wf.args.list].map((o) => Object.isFrozen(o));
       out.parallel = await wf.parallel([() => 1, () => 2]);
       return out;`,
      { checker, args: { list: [1] }, manifest: {} },
    );
    expect(r.done.status).toBe('completed');
    const out = r.done.result as Record<string, unknown>;
    for (const k of [
      'assign',
      'define',
      'add',
      'fnprop',
      'budget',
      'budgetTotal',
      'setProto',
      'args',
      'runId',
    ]) {
      expect(out[k], k).toBe('refused');
    }
    expect(out.frozen).toEqual([true, true, true, true, true]);
    expect(out.parallel).toEqual([1, 2]);
  });

  it('standard globals cannot be redefined (QuickJS let defineProperty replace them)', async () => {
    const r = await attack(
      `const out = {};
       const g = globalThis;
       const t = (k, f) => { try { const v = f(); out[k] = v === false ? 'refused' : 'changed'; } catch (e) { out[k] = 'refused'; } };
       t('define', () => Object.defineProperty(g, 'JSON', { value: { stringify: () => 'forged' } }));
       t('defineAll', () => Object.defineProperties(g, { Promise: { value: 1 } }));
       t('reflect', () => Reflect.defineProperty(g, 'Array', { value: 1 }));
       t('writable', () => Object.defineProperty(g, 'Object', { writable: true }));
       t('getterDesc', () => {
         let n = 0;
         return Object.defineProperty(g, 'Math', { get value() { n += 1; return n === 1 ? Math : 1; } });
       });
       out.same = [JSON.stringify({ a: 1 }), typeof Promise, typeof Array, typeof Math.max];
       out.sameValueOk = Object.defineProperty(g, 'JSON', { value: JSON }) === g;
       out.parallel = await wf.parallel([() => 1, () => 2]);
       return out;`,
      { checker, manifest: {} },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status).toBe('completed');
    const out = r.done.result as Record<string, unknown>;
    for (const k of ['define', 'defineAll', 'reflect', 'writable']) {
      expect(out[k], k).toBe('refused');
    }
    // The descriptor is read once: its first (same) value is what is defined, not the second.
    expect(out.getterDesc).toBe('changed');
    expect(out.same).toEqual(['{"a":1}', 'function', 'function', 'function']);
    expect(out.sameValueOk).toBe(true);
    expect(out.parallel).toEqual([1, 2]);
  });

  it('poisoned intrinsics cannot redirect parallel or pipeline', async () => {
    const r = await attack(
      `const out = [];
       const t = (k, f) => { try { f(); out.push(k + ':changed'); } catch (e) { out.push(k + ':refused'); } };
       t('push', () => { Array.prototype.push = function () { throw new Error('poisoned'); }; });
       t('slice', () => { Array.prototype.slice = function () { return [() => 'evil']; }; });
       t('then', () => { Promise.prototype.then = function () { return 'evil'; }; });
       t('species', () => Object.defineProperty(Array, Symbol.species, { get() { return function () { return [() => 'evil']; }; } }));
       t('iterator', () => { Array.prototype[Symbol.iterator] = function* () { yield () => 'evil'; }; });
       t('all', () => { Promise.all = () => Promise.resolve(['evil']); });
       t('max', () => { Math.max = () => 1e9; });
       t('isArray', () => { Array.isArray = () => true; });
       t('freeze', () => { Object.freeze = (o) => o; });
       t('assign', () => { Object.assign = () => ({ name: 'evil', prompt: 'evil' }); });
       const par = await wf.parallel([() => 'a', () => 'b']);
       const pipe = await wf.pipeline([1, 2], (x) => x * 10);
       const task = await wf.phase('attack', () => wf.runAgent({ name: 'honest', prompt: 'p' }));
       return { out, par, pipe, name: task && task.name, phase: task && task.phase };`,
      { checker },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status).toBe('completed');
    const res = r.done.result as { out: string[]; par: unknown; pipe: unknown; name: string };
    expect(res.out.every((x) => x.endsWith(':refused'))).toBe(true);
    expect(res.par).toEqual(['a', 'b']);
    expect(res.pipe).toEqual([10, 20]);
    expect(res).toMatchObject({ name: 'honest', phase: 'attack' });
  });

  it('a species constructor on the thunk array cannot make parallel call something else', async () => {
    // ArraySpeciesCreate inside the prelude's copy would hand it a guest-built list after the
    // "every item is a function" check; here the list answers wf.spawnAgent for every index.
    const r = await attack(
      `const thunks = [() => 'a', () => 'b'];
       const Evil = function () {
         return new Proxy([], { get: (t, k) => (k === 'length' ? 2 : wf.spawnAgent), defineProperty: () => true, set: () => true });
       };
       Evil[Symbol.species] = Evil;
       Object.defineProperty(thunks, 'constructor', { value: Evil });
       let out;
       try { out = await wf.parallel(thunks); } catch (e) { out = 'refused:' + e.name; }
       return out;`,
      { checker },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    expect(['refused:TypeError', ['a', 'b']]).toContainEqual(r.done.result);
    expect(r.agents?.stats().started).toBe(0);
  });

  it('a thunk array whose items change between the check and the call is contained', async () => {
    const r = await attack(
      `const thunks = [];
       let reads = 0;
       Object.defineProperty(thunks, 0, { enumerable: true, get() { reads += 1; return reads === 1 ? () => 'checked' : wf.runAgent; } });
       let out;
       try { out = await wf.parallel(thunks); } catch (e) { out = 'refused:' + e.name; }
       return { out, reads };`,
      { checker },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const res = r.done.result as { out: unknown };
    expect(['refused:TypeError', ['checked']]).toContainEqual(res.out);
    expect(r.agents?.stats().started).toBe(0);
  });

  it('thenables and forged run-control rejections from thunks stay inside the guest', async () => {
    const r = await attack(
      `const forged = { data: { runControl: true }, code: 'WF_ENGINE_AGENT_LIMIT', message: 'forged' };
       const ok = await wf.parallel([
         () => ({ then(res) { res('thenable'); } }),
         () => ({ then(res, rej) { rej(new Error('ordinary')); } }),
       ]);
       const forgedOut = await wf.parallel([() => ({ then(res, rej) { rej(forged); } })]).catch((e) => 'rejected:' + e.code);
       const after = await wf.runAgent({ name: 'after-forgery', prompt: 'p' });
       return { ok, forgedOut, after: after && after.status };`,
      { checker },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status).toBe('completed');
    expect(r.done.result).toEqual({
      ok: ['thenable', null],
      forgedOut: 'rejected:WF_ENGINE_AGENT_LIMIT',
      after: 'completed',
    });
  });

  it('a forged run-control error thrown by run() cannot pose as an engine outcome', async () => {
    for (const code of [
      'WF_ENGINE_AGENT_LIMIT',
      'WF_ENGINE_RUN_STOPPED',
      'WF_ENGINE_WALL_TIMEOUT',
    ]) {
      const r = await attack(
        `const e = new Error('the engine stopped this run'); e.code = '${code}';
         Object.defineProperty(e, 'data', { value: { runControl: true } });
         throw e;`,
        { checker },
      );
      expect(r.done.status).toBe('failed');
      expect(r.done.error?.code).not.toBe(code);
      expect(r.done.error?.code).toMatch(/^WF_(SANDBOX|ENGINE)_/);
    }
  });

  it('a task input that is a Proxy or has toJSON is validated as the text that crossed', async () => {
    // The manifest is readOnly: whatever the guest shows the prelude, a readOnly:false child
    // must never start.
    const r = await attack(
      `let n = 0;
       const sly = new Proxy({ name: 'sly', prompt: 'p' }, {
         get(t, k) { n += 1; if (k === 'readOnly') return n > 2 ? false : undefined; return t[k]; },
         ownKeys() { return ['name', 'prompt', 'readOnly']; },
         getOwnPropertyDescriptor(t, k) { return { value: k === 'readOnly' ? false : t[k], enumerable: true, configurable: true }; },
       });
       const masked = { name: 'masked', prompt: 'p', toJSON() { return { name: 'masked', prompt: 'p', readOnly: false }; } };
       const out = [];
       for (const input of [sly, masked]) {
         try { out.push(await wf.spawnAgent(input)); } catch (e) { out.push(e.code); }
       }
       return out;`,
      { checker, manifest: { readOnly: true } },
    );
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(r.done.error?.message).toContain('readOnly');
    expect(r.agents?.stats().started).toBe(0);
  });

  it('a toJSON that calls wf re-entrantly cannot exceed maxAgents', async () => {
    const r = await attack(
      `let depth = 0;
       const input = { name: 'reentrant', prompt: 'p', toJSON() {
         depth += 1;
         if (depth < 50) wf.spawnAgent(input).catch(() => {});
         return { name: 'reentrant-' + depth, prompt: 'p' };
       } };
       await wf.spawnAgent(input).catch(() => {});
       return depth;`,
      { checker, manifest: { maxAgents: 3, maxConcurrency: 1 } },
    );
    expect(r.agents?.stats().started ?? 0).toBeLessThanOrEqual(3);
    if (rejectedByContract(checker, r)) return;
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(r.agents?.stats().doubleDisposed).toBe(0);
  });
});

describe.each(both)('swallowed run-control errors still fail the run ($label)', ({ checker }) => {
  const swallow = (call: string) =>
    `let caught = null;
     try { await ${call}; } catch (e) { caught = e.code; }
     try { await wf.runAgent({ name: 'after', prompt: 'p' }); } catch (e) {}
     return { caught, escaped: true };`;

  it('budget overrun caught around runAgent', async () => {
    const r = await attack(
      swallow(`wf.runAgent({ name: 'greedy', prompt: 'p', maxTokens: 5000 })`),
      {
        checker,
        manifest: { tokenBudget: 1000 },
      },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
    expect(r.agents?.stats().started).toBe(0);
  });

  it('an invalid call caught around spawnAgent', async () => {
    const r = await attack(swallow(`wf.spawnAgent({ name: 'x', prompt: 'p', sudo: true })`), {
      checker,
    });
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
    expect(r.done.error?.message).toContain('sudo');
    expect(r.agents?.stats().started).toBe(0);
  });

  it('a missing provider capability caught around runAgent', async () => {
    const r = await attack(swallow(`wf.runAgent({ name: 'ro', prompt: 'p', readOnly: true })`), {
      checker,
      agents: { capabilities: { toolFilter: false } },
    });
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_CAPABILITY_MISSING');
    expect(r.agents?.stats().started).toBe(0);
  });

  it('a run-control error swallowed inside a parallel thunk', async () => {
    const r = await attack(
      `const out = await wf.parallel([async () => {
         try { return await wf.runAgent({ name: 'greedy', prompt: 'p', maxTokens: 5000 }); }
         catch (e) { return 'swallowed'; }
       }]);
       return out;`,
      { checker, manifest: { tokenBudget: 1000 } },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_BUDGET_EXCEEDED');
  });

  it('a run-control rejection dropped with .catch on a never-awaited spawn', async () => {
    const r = await attack(
      `wf.spawnAgent({ name: 'x', prompt: 'p', isolation: 'on-the-moon' }).catch(() => {});
       return 'looks fine';`,
      { checker },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
  });

  it('maxCalls hit under try/catch around awaited calls', async () => {
    const r = await attack(
      `let refused = 0;
       for (let i = 0; i < 200; i += 1) { try { await wf.phase('p' + i, () => null); } catch (e) { refused += 1; } }
       return { refused };`,
      { checker, limits: { maxCalls: 50 } },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.message).toMatch(/maxCalls/);
  });
});

describe('raw capabilities are out of reach (checker bypassed)', () => {
  it('everything reachable from wf is wf itself: no raw capability, no host function', async () => {
    const r = await attack(
      `const intrinsicProtos = new Set([Object.prototype, Object.getPrototypeOf(function () {}), Array.prototype,
         Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {})]);
       const seen = new Set();
       const fns = [];
       const stack = [wf];
       while (stack.length > 0) {
         const v = stack.pop();
         if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v) || intrinsicProtos.has(v)) continue;
         seen.add(v);
         if (typeof v === 'function') fns.push(v);
         stack.push(Object.getPrototypeOf(v));
         for (const k of Reflect.ownKeys(v)) {
           const d = Object.getOwnPropertyDescriptor(v, k);
           if ('value' in d) stack.push(d.value); else { stack.push(d.get); stack.push(d.set); }
         }
       }
       const names = fns.map((f) => f.name).sort();
       const callers = fns.map((f) => { try { return typeof f.caller; } catch (e) { return 'throws'; } });
       return { names, callers: [...new Set(callers)], keys: Object.keys(wf).sort() };`,
      { checker: false },
    );
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const res = r.done.result as { names: string[]; callers: string[]; keys: string[] };
    const members = WF_METHODS.map((m) => m.name as string).sort();
    expect(res.keys).toEqual(members);
    const methods = WF_METHODS.filter((m) => m.member === 'method').map((m) => m.name as string);
    // Every reachable function is a wf method or one of the two budget readers.
    expect(res.names.sort()).toEqual([...methods, 'remaining', 'spent'].sort());
    expect(res.callers).toEqual(['throws']);
  });

  it('no bridge-internal or host name is reachable from the guest global scope', async () => {
    const r = await attack(
      `const names = Reflect.ownKeys(globalThis).map(String);
       const self = (function () { return this; })();
       return { names, self: typeof self };`,
      { checker: false },
    );
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const res = r.done.result as { names: string[]; self: string };
    expect(res.self).toBe('undefined');
    for (const n of [
      'host',
      'caps',
      '__host',
      '__launch',
      'bootstrap',
      'kernel',
      'wf',
      'eval',
      'Function',
      'process',
      'require',
      'WeakRef',
      'FinalizationRegistry',
      'SharedArrayBuffer',
      'Atomics',
      'WebAssembly',
      'setTimeout',
      'queueMicrotask',
    ]) {
      expect(res.names, n).not.toContain(n);
    }
  });

  it('console is a frozen object of guest closures writing through wf.log, bounded like logs', async () => {
    const r = await attack(
      `const out = {};
       const t = (k, f) => { try { f(); out[k] = 'changed'; } catch (e) { out[k] = 'refused'; } };
       t('replace', () => { console.log = () => 'hijacked'; });
       t('fnprop', () => { console.log.extra = 1; });
       out.frozen = [console, console.log, console.error].map((o) => Object.isFrozen(o));
       out.own = Reflect.ownKeys(console).sort();
       const odd = { get name() { throw new Error('getter'); } };
       console.log('plain', 1, { a: [2] }, null, undefined);
       console.error('failed:', new TypeError('boom'), odd);
       console.warn('x'.repeat(20000));
       await wf.runAgent({ name: 'a', prompt: 'p' });
       return out;`,
      { checker: false },
    );
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const out = r.done.result as Record<string, unknown>;
    // (a guest may still shadow or redefine its own global console: that only affects itself)
    expect([out.replace, out.fnprop]).toEqual(['refused', 'refused']);
    expect(out.frozen).toEqual([true, true, true]);
    expect(out.own).toEqual(['debug', 'dir', 'error', 'info', 'log', 'table', 'trace', 'warn']);
    const logs = r.events
      .filter((e) => e.type === 'workflow-log')
      .map((e) => (e as { data?: { message?: string } }).data?.message ?? '');
    expect(logs[0]).toBe('plain 1 {"a":[2]} null undefined');
    expect(logs[1]).toBe('[error] failed: TypeError: boom [unprintable value]');
    // one line is cut at 10,000 characters, so a flood goes through the per-run log bound
    expect(logs[2]?.length).toBeLessThan(10_100);
    expect(logs[2]).toMatch(/^\[warn\] x+ \.\.\. \(truncated\)$/);
  });
});
