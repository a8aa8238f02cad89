// End-to-end behaviour of createSandbox/run against real QuickJS workers: values, capabilities,
// the prelude calling convention, JSON crossings, determinism and stats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CapabilityContext,
  createSandbox,
  type Sandbox,
  type SandboxOutcome,
} from '../src/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({
    poolSize: 2,
    limits: { wallMs: 3000, memoryBytes: 32 * 1024 * 1024 },
  });
});
afterAll(async () => {
  await sb.close();
});

const value = (o: SandboxOutcome) => {
  if (o.status !== 'completed')
    throw new Error(`expected completed, got ${o.status}: ${o.error.code} ${o.error.message}`);
  return o.value;
};

describe('run', () => {
  it('returns the JSON value of run(api, args) and calls capabilities with JSON input', async () => {
    const seen: unknown[] = [];
    const o = await sb.run({
      source: `async function run(api, args) {
        const sum = await api.add({ a: args.x, b: 2 });
        return { sum, list: [1, 'two', null, true], nested: { ok: true } };
      }`,
      args: { x: 40 },
      capabilities: {
        add: (input) => {
          seen.push(input);
          const { a, b } = input as { a: number; b: number };
          return a + b;
        },
      },
    });
    expect(value(o)).toEqual({ sum: 42, list: [1, 'two', null, true], nested: { ok: true } });
    expect(seen).toEqual([{ a: 40, b: 2 }]);
    expect(o.stats.hostCalls).toBe(1);
    expect(o.stats.workerId).toMatch(/^w\d+$/);
    expect(o.stats.moduleId).toMatch(/^w\d+-m\d+$/);
    expect(o.stats.cpuMs).toBeGreaterThan(0);
    expect(o.stats.peakMemoryBytes).toBeGreaterThan(0);
  });

  it('carries non-ASCII text intact through source, prelude, args, host calls and result', async () => {
    const o = await sb.run({
      source: `async function run(api, args) {
        const back = await api.echo({ s: args.s + '中' });
        return [back.s, api.tag, '€𝄞'.length, args.s.length];
      }`,
      prelude: `(caps) => ({ echo: caps.echo, tag: 'é✓' })`,
      args: { s: 'ü😀' },
      capabilities: { echo: (input) => ({ s: `${(input as { s: string }).s}|ß` }) },
    });
    expect(value(o)).toEqual(['ü😀中|ß', 'é✓', 3, 3]);
  });

  it('runs a program of lone surrogates, NULs and 1 MB of text beside an innocent one', async () => {
    const innocent = 'async function run(api) { return (await api.x(41)) + 1; }';
    const x = (v: unknown) => v;
    // The characters themselves in the source, not escapes: lone surrogates around a NUL.
    const hostile = `async function run() { return ['\uD800${'\u0000'}\uDC00'.charCodeAt(0), '${'é'.repeat(500_000)}'.length]; }`;
    const [h, a] = await Promise.all([
      sb.run({ source: hostile, capabilities: {} }),
      sb.run({ source: innocent, capabilities: { x } }),
    ]);
    expect(value(a)).toBe(42);
    // Ill-formed text keeps the library's own path: the lone surrogate reaches the program as is.
    expect(h.status).toBe('completed');
    expect(value(h)).toEqual([0xd800, 500_000]);
    expect(value(await sb.run({ source: innocent, capabilities: { x } }))).toBe(42);
  });

  it('returns undefined when run() returns nothing', async () => {
    const o = await sb.run({ source: 'async function run() {}', capabilities: {} });
    expect(o.status).toBe('completed');
    expect(value(o)).toBeUndefined();
  });

  it('hands the guest frozen args and a frozen api of the capabilities', async () => {
    const o = await sb.run({
      source: `async function run(api, args) {
        const r = {};
        r.argsFrozen = Object.isFrozen(args) && Object.isFrozen(args.inner);
        r.apiFrozen = Object.isFrozen(api) && Object.isFrozen(api.echo);
        try { api.echo = null; r.assigned = true; } catch (e) { r.assigned = false; }
        r.keys = Object.keys(api);
        r.echo = await api.echo('hi');
        return r;
      }`,
      args: { inner: { a: 1 } },
      capabilities: { echo: (x) => x, other: () => 1 },
    });
    expect(value(o)).toEqual({
      argsFrozen: true,
      apiFrozen: true,
      assigned: false,
      keys: ['echo', 'other'],
      echo: 'hi',
    });
  });

  it('drops __proto__, constructor and prototype keys on every crossing', async () => {
    const got: unknown[] = [];
    const o = await sb.run({
      source: `async function run(api, args) {
        const input = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 2, "prototype": 3, "ok": 4, "\\\\u005f_proto__": 5}');
        const back = await api.echo(input);
        return { args: Object.keys(args), back: Object.keys(back), result: input };
      }`,
      args: JSON.parse('{"__proto__": {"x": 1}, "keep": 1}'),
      capabilities: {
        echo: (x) => {
          got.push(x);
          return JSON.parse('{"__proto__": {"y": 1}, "fine": 1}');
        },
      },
    });
    expect(value(o)).toEqual({ args: ['keep'], back: ['fine'], result: { ok: 4 } });
    expect(Object.keys(got[0] as object)).toEqual(['ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('calls the prelude as prelude(caps, meta) and deep-freezes the api it returns', async () => {
    const prelude = `function (caps, meta) {
      const capsFrozen = Object.isFrozen(caps) && Object.getPrototypeOf(caps) === null;
      return { tools: { twice: async (x) => 2 * (await caps.num(x)) }, seed: meta.seed, capsFrozen };
    }`;
    const o = await sb.run({
      source: `async function run(api) {
        let mutated = true;
        try { api.tools.extra = 1; } catch { mutated = false; }
        return { v: await api.tools.twice(21), seed: api.seed, capsFrozen: api.capsFrozen, mutated,
          frozen: Object.isFrozen(api.tools) && Object.isFrozen(api.tools.twice) };
      }`,
      prelude,
      seed: 77,
      capabilities: { num: (x) => x },
    });
    expect(value(o)).toEqual({ v: 42, seed: 77, capsFrozen: true, mutated: false, frozen: true });
  });

  it('reports a prelude that throws as WF_SANDBOX_PRELUDE_ERROR', async () => {
    const o = await sb.run({
      source: 'async function run() { return 1; }',
      prelude: 'function () { throw new Error("bad prelude"); }',
      capabilities: {},
    });
    expect(o.status).toBe('failed');
    if (o.status !== 'completed')
      expect(o.error).toMatchObject({ code: 'WF_SANDBOX_PRELUDE_ERROR' });
  });

  it('fails with WF_SANDBOX_GUEST_ERROR when run() throws, keeping the guest code', async () => {
    const o = await sb.run({
      source: 'async function run() { const e = new Error("nope"); e.code = "MY_CODE"; throw e; }',
      capabilities: {},
    });
    expect(o.status).toBe('failed');
    if (o.status === 'failed') {
      expect(o.error.code).toBe('WF_SANDBOX_GUEST_ERROR');
      expect(o.error.message).toBe('line 1:43: Error: nope');
      expect(o.error.guestCode).toBe('MY_CODE');
    }
  });

  it("names the guest error's line:column in the program's own source (not the wrapper's)", async () => {
    const source = [
      'function pick(o) {',
      '  return o.foo.bar;', // 2:15 reads .bar of undefined
      '}',
      'async function run(api, args) {',
      '  if (args.where === "helper") return pick({});',
      '  if (args.where === "prelude") return api.parallel([1]);',
      '  if (args.where === "string") throw "plain";',
      '  if (args.where === "forged") throw { name: "E", message: "m", stack: "at x (workflow.js:99999999999:1)" };',
      '  return null.x;',
      '}',
    ].join('\n');
    const prelude =
      '(function (caps) { return { parallel(xs) { return Promise.reject(new TypeError("not functions")); } }; })';
    const message = async (where: string) => {
      const o = await sb.run({ source, args: { where }, capabilities: {}, prelude });
      return o.status === 'failed' ? o.error.message : `completed: ${JSON.stringify(o)}`;
    };
    expect(await message('helper')).toBe(
      "line 2:15: TypeError: cannot read property 'bar' of undefined",
    );
    expect(await message('main')).toBe("line 9:14: TypeError: cannot read property 'x' of null");
    // raised in trusted prelude code: the position is the guest's call site
    expect(await message('prelude')).toBe('line 6:52: TypeError: not functions');
    // no Error, no position; a forged stack with an absurd line is ignored
    expect(await message('string')).toBe('Error: plain');
    expect(await message('forged')).toBe('E: m');
  });

  it('reports syntax errors and a missing run function', async () => {
    const a = await sb.run({ source: 'async function run( {', capabilities: {} });
    expect(a.status === 'failed' && a.error.code).toBe('WF_SANDBOX_COMPILE_ERROR');
    const b = await sb.run({ source: 'const x = 1;', capabilities: {} });
    expect(b.status === 'failed' && b.error.code).toBe('WF_SANDBOX_NO_RUN');
  });

  it('refuses a program that closes its wrapper, every time, even after valid programs ran', async () => {
    // Alone this text has an unbalanced brace; wrapped it would run code at top level and
    // replace run. Valid programs (one of the same length) were compiled and remembered first.
    const breakout = "})(); var run = async () => 'escaped'; (function () {";
    const valid = `async function run() { return 'wrapped'; }${' '.repeat(breakout.length - 42)}`;
    expect(valid.length).toBe(breakout.length);
    for (let i = 0; i < 3; i++) {
      const ok = await sb.run({ source: valid, capabilities: {} });
      expect(value(ok)).toBe('wrapped');
      const bad = await sb.run({ source: breakout, capabilities: {} });
      expect(bad.status === 'failed' && bad.error.code).toBe('WF_SANDBOX_COMPILE_ERROR');
    }
  });

  it('fails results that are not JSON (BigInt, cycles)', async () => {
    const a = await sb.run({
      source: 'async function run() { return { n: 10n }; }',
      capabilities: {},
    });
    expect(a.status === 'failed' && a.error.code).toBe('WF_SANDBOX_RESULT_NOT_JSON');
    const b = await sb.run({
      source: 'async function run() { const a = {}; a.a = a; return a; }',
      capabilities: {},
    });
    expect(b.status === 'failed' && b.error.code).toBe('WF_SANDBOX_RESULT_NOT_JSON');
  });

  it('rejects bad requests with a clear SandboxError', async () => {
    await expect(sb.run({ source: 1 as unknown as string, capabilities: {} })).rejects.toThrow(
      /request.source/,
    );
    await expect(sb.run({ source: '', capabilities: { 'a-b': () => 1 } })).rejects.toThrow(
      /valid identifier/,
    );
    await expect(sb.run({ source: '', capabilities: {}, seed: -1 })).rejects.toThrow(/seed/);
    await expect(sb.run({ source: '', capabilities: {}, limits: { wallMs: 0 } })).rejects.toThrow(
      /wallMs/,
    );
    await expect(
      sb.run({ source: '', capabilities: {}, limits: { stackBytes: 8 * 1024 * 1024 } }),
    ).rejects.toThrow(/stackBytes/);
    await expect(sb.run({ source: '', capabilities: {}, args: { n: 1n } })).rejects.toMatchObject({
      code: 'WF_SANDBOX_ARGS_NOT_JSON',
    });
  });
});

describe('capability context', () => {
  it('gives each call an increasing callId and a signal that stays unaborted on success', async () => {
    const seen: { callId: number; aborted: boolean }[] = [];
    const o = await sb.run({
      source:
        'async function run(api) { await api.a(); await Promise.all([api.a(), api.a()]); return 1; }',
      capabilities: {
        a: (_input, ctx) => {
          seen.push({ callId: ctx.callId, aborted: ctx.signal.aborted });
          return null;
        },
      },
    });
    expect(value(o)).toBe(1);
    expect(seen).toEqual([
      { callId: 1, aborted: false },
      { callId: 2, aborted: false },
      { callId: 3, aborted: false },
    ]);
  });

  it('hands each call its own frozen context; setNow works detached from it', async () => {
    const contexts: CapabilityContext[] = [];
    const o = await sb.run({
      source: `async function run(api) {
        await api.a(); const t1 = Date.now(); await api.b(); return [t1, Date.now()];
      }`,
      startTime: 1000,
      capabilities: {
        a: (_input, ctx) => {
          contexts.push(ctx);
          const { setNow } = ctx;
          setNow(5000);
          return null;
        },
        b: (_input, ctx) => {
          contexts.push(ctx);
          return null;
        },
      },
    });
    expect(value(o)).toEqual([5000, 5000]);
    const [first, second] = contexts as [CapabilityContext, CapabilityContext];
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(Object.getPrototypeOf(first))).toBe(true);
    expect(() => {
      (first as { callId: number }).callId = 9;
    }).toThrow(TypeError);
    expect(() => first.setNow(Number.NaN)).toThrow(TypeError);
    expect([first.callId, second.callId]).toEqual([1, 2]);
    expect(first.signal).not.toBe(second.signal);
    expect(first.signal).toBe(first.signal);
  });

  it('ends active runs as aborted when the sandbox closes', async () => {
    const s = await createSandbox({ poolSize: 1 });
    let signalled = false;
    let called: () => void = () => {};
    const calling = new Promise<void>((r) => {
      called = r;
    });
    const p = s.run({
      source: 'async function run(api) { await api.wait(); }',
      capabilities: {
        wait: (_i, ctx) =>
          new Promise((r) => {
            called();
            ctx.signal.addEventListener('abort', () => {
              signalled = true;
              r(null);
            });
          }),
      },
    });
    // Closed while the call is outstanding (a fixed delay raced the worker on a loaded machine).
    await calling;
    await s.close();
    const o = await p;
    expect(o.status).toBe('aborted');
    expect(o.status !== 'completed' && o.error.code).toBe('WF_SANDBOX_CLOSED');
    expect(signalled).toBe(true);
  });
});

describe('capability errors', () => {
  it('passes a valid code, redacts the message and copies data', async () => {
    const o = await sb.run({
      source: `async function run(api) {
        try { await api.fail(); } catch (e) {
          return { name: e.name, code: e.code, message: e.message, data: e.data, isError: e instanceof Error };
        }
      }`,
      capabilities: {
        fail: () => {
          const e = new Error(
            `cannot open /home/alice/secret.txt on Node.js v20.20.2\n    at Object.<anonymous> (/srv/app/x.js:1:1)`,
          );
          Object.assign(e, { code: 'WF_BUDGET_EXCEEDED', data: { left: 0, deep: { k: [1] } } });
          throw e;
        },
      },
    });
    const v = value(o) as Record<string, unknown>;
    expect(v).toMatchObject({
      name: 'Error',
      code: 'WF_BUDGET_EXCEEDED',
      isError: true,
      data: { left: 0, deep: { k: [1] } },
    });
    expect(v.message).not.toMatch(/alice|srv|v20|Node\.js/);
    expect(v.message).toContain('cannot open');
  });

  it('maps other throws to WF_SANDBOX_HOST_ERROR', async () => {
    const o = await sb.run({
      source: `async function run(api) {
        const out = [];
        for (const k of ['a', 'b', 'c']) { try { await api[k](); } catch (e) { out.push(e.code); } }
        return out;
      }`,
      capabilities: {
        a: () => {
          throw new TypeError('x');
        },
        b: () => {
          throw Object.assign(new Error('lower'), { code: 'lower-case' });
        },
        c: () => Promise.reject('a string'),
      },
    });
    expect(value(o)).toEqual([
      'WF_SANDBOX_HOST_ERROR',
      'WF_SANDBOX_HOST_ERROR',
      'WF_SANDBOX_HOST_ERROR',
    ]);
  });

  it('rejects capability results that cannot cross as JSON', async () => {
    const o = await sb.run({
      source: `async function run(api) { try { await api.bad(); } catch (e) { return e.code; } }`,
      capabilities: { bad: () => ({ n: 1n }) },
    });
    expect(value(o)).toBe('WF_SANDBOX_HOST_RESULT_INVALID');
  });
});

describe('determinism', () => {
  const source = `async function run(api) {
    const r = [Math.random(), Math.random(), Date.now(), new Date().toISOString(), String(new Date(0).getHours())];
    await api.tick();
    r.push(Date.now(), new Date().getTime());
    await api.plain();
    r.push(Date.now());
    return r;
  }`;
  const capabilities = {
    tick: (_: unknown, ctx: { setNow(n: number): void }) => ctx.setNow(5_000_000),
    plain: () => null,
  };

  it('is byte-identical for the same seed, startTime and host results', async () => {
    const a = await sb.run({ source, capabilities, seed: 42, startTime: 1_700_000_000_000 });
    const b = await sb.run({ source, capabilities, seed: 42, startTime: 1_700_000_000_000 });
    expect(JSON.stringify(value(a))).toBe(JSON.stringify(value(b)));
    const v = value(a) as unknown[];
    expect(v[2]).toBe(1_700_000_000_000);
    expect(v[3]).toBe('2023-11-14T22:13:20.000Z');
    expect(v[4]).toBe('0');
    expect(v.slice(5)).toEqual([5_000_000, 5_000_000, 5_000_000]);
    const c = await sb.run({ source, capabilities, seed: 43, startTime: 1_700_000_000_000 });
    expect((value(c) as unknown[])[0]).not.toBe(v[0]);
  });

  it('generates and reports a seed and a start time when none is given', async () => {
    const before = Date.now();
    const o = await sb.run({
      source: 'async function run() { return [Math.random(), Date.now()]; }',
      capabilities: {},
    });
    const [r, t] = value(o) as [number, number];
    expect(Number.isSafeInteger(o.stats.seed)).toBe(true);
    expect(o.stats.startTime).toBe(t);
    expect(t).toBeGreaterThanOrEqual(before);
    const again = await sb.run({
      source: 'async function run() { return Math.random(); }',
      capabilities: {},
      seed: o.stats.seed,
    });
    expect(value(again)).toBe(r);
  });

  it('applies setNow when that call result is delivered, not when it is set', async () => {
    const src = `async function run(api) {
      const seen = [Date.now()];
      const late = api.late().then(() => seen.push(['late', Date.now()]));
      const early = api.early().then(() => seen.push(['early', Date.now()]));
      await Promise.all([late, early]);
      seen.push(Date.now());
      return seen;
    }`;
    const o = await sb.run({
      source: src,
      startTime: 10,
      capabilities: {
        late: (_i, ctx) => {
          ctx.setNow(100);
          return new Promise((r) => setTimeout(r, 60));
        },
        early: (_i, ctx) => {
          ctx.setNow(200);
          return new Promise((r) => setTimeout(r, 5));
        },
      },
    });
    expect(value(o)).toEqual([10, ['early', 200], ['late', 100], 100]);
  });

  it('omits capability error data that cannot cross, keeping the error', async () => {
    const o = await sb.run({
      source: `async function run(api) { try { await api.x(); } catch (e) { return [e.code, e.data === undefined]; } }`,
      capabilities: {
        x: () => {
          const data: Record<string, unknown> = {};
          data.self = data;
          throw Object.assign(new Error('cyclic data'), { code: 'WF_TEST_CYCLE', data });
        },
      },
    });
    expect(value(o)).toEqual(['WF_TEST_CYCLE', true]);
  });

  it('delivers settlements in the order the host promises settled', async () => {
    const src = `async function run(api) {
      const order = [];
      await Promise.all([
        api.slow().then(() => order.push('slow')),
        api.fast().then(() => order.push('fast')),
        api.mid().then(() => order.push('mid')),
      ]);
      return order;
    }`;
    const wait = (ms: number) => () => new Promise((r) => setTimeout(r, ms));
    const o = await sb.run({
      source: src,
      capabilities: { slow: wait(60), fast: wait(5), mid: wait(30) },
    });
    expect(value(o)).toEqual(['fast', 'mid', 'slow']);
  });
});
