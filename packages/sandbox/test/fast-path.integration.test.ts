// The direct FFI of the host-call hot path (fast-path.js): strings are read without running guest
// code, whatever a kernel entry point returns, and settlement texts cross intact.
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import { describe, expect, it } from 'vitest';
import { FastPath } from '../src/internal/fast-path.js';

const setup = async () => {
  // The variant's CJS typings confuse NodeNext resolution; at run time it is the ESM default export.
  const mod = await newQuickJSWASMModuleFromVariant(
    variant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0],
  );
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  const fast = new FastPath({ mod } as never, rt, ctx);
  const handles: { dispose(): void }[] = [];
  const fn = (src: string) => {
    const h = ctx.unwrapResult(ctx.evalCode(`(${src})`));
    handles.push(h);
    return h;
  };
  const done = () => {
    for (const h of handles) h.dispose();
    fast.dispose();
    ctx.dispose();
    rt.dispose();
  };
  return { ctx, fast, fn, done };
};

describe('FastPath.callString', () => {
  it('reads flat and rope strings, and never converts anything else (no guest code runs)', async () => {
    const { ctx, fast, fn, done } = await setup();
    expect(fast.stringTag).not.toBe(-1);
    expect(fast.callString(fn('() => "1\\nx\\n{\\"a\\":\\"é✓\\"}"'))).toBe('1\nx\n{"a":"é✓"}');
    expect(fast.callString(fn('() => "a".repeat(700) + "b".repeat(700)'))).toBe(
      'a'.repeat(700) + 'b'.repeat(700),
    );
    const hostile = [
      '() => ({ toString() { globalThis.ran = true; return "EVIL"; } })',
      '() => [ { toString() { globalThis.ran = true; return "EVIL"; } } ]',
      '() => Object.assign(function () {}, { toString() { globalThis.ran = true; return "F"; } })',
      '() => 42',
      '() => 1.5',
      '() => undefined',
      '() => null',
      '() => Symbol("s")',
      '() => 10n',
      '() => { throw "thrown text"; }',
    ];
    for (const src of hostile) expect(fast.callString(fn(src))).toBe('');
    const ran = ctx.unwrapResult(ctx.evalCode('globalThis.ran === true'));
    expect(ctx.dump(ran)).toBe(false);
    ran.dispose();
    done();
  });
});

describe('FastPath.promiseState and fulfilledString', () => {
  it('reports pending, fulfilled and rejected, and reads only a string result', async () => {
    const { ctx, fast, fn, done } = await setup();
    const call = (src: string) => {
      const h = ctx.unwrapResult(ctx.callFunction(fn(src), ctx.undefined));
      return h;
    };
    const pending = call('() => new Promise(() => {})');
    const text = call('async () => "O42"');
    const obj = call('async () => ({ toString() { globalThis.ran = true; return "EVIL"; } })');
    const rejected = call('async () => { throw new Error("x"); }');
    ctx.runtime.executePendingJobs();
    expect(fast.promiseState(pending)).toBe(0);
    expect(fast.promiseState(text)).toBe(1);
    expect(fast.fulfilledString(text)).toBe('O42');
    expect(fast.promiseState(obj)).toBe(1);
    expect(fast.fulfilledString(obj)).toBe('');
    expect(fast.promiseState(rejected)).toBe(2);
    const ran = ctx.unwrapResult(ctx.evalCode('globalThis.ran === true'));
    expect(ctx.dump(ran)).toBe(false);
    for (const h of [pending, text, obj, rejected, ran]) h.dispose();
    done();
  });
});

describe('FastPath.callWithString', () => {
  it('delivers texts of any size intact through the reused buffer', async () => {
    const { ctx, fast, fn, done } = await setup();
    const keep = fn('(s) => { globalThis.last = s; }');
    // Multi-byte texts shorter than the buffer after a long one: the byte bound must hold.
    const texts = [
      '1:{"ok":true,"v":1}',
      'x'.repeat(300),
      '',
      'é✓𝄞'.repeat(500),
      'é✓𝄞'.repeat(50),
      '2:short',
    ];
    for (const text of texts) {
      expect(fast.callWithString(keep, text)).toBe(true);
      const last = ctx.unwrapResult(ctx.evalCode('globalThis.last'));
      expect(ctx.getString(last)).toBe(text);
      last.dispose();
    }
    done();
  });

  it('delivers ill-formed text as the library would (a lone surrogate keeps its bytes)', async () => {
    const { ctx, fast, fn, done } = await setup();
    const keep = fn('(s) => { globalThis.last = s; }');
    for (const text of ['a\uD800b', '\uDC00', `${'é'.repeat(400)}\uD83D`]) {
      expect(fast.callWithString(keep, text)).toBe(true);
      const last = ctx.unwrapResult(ctx.evalCode('globalThis.last'));
      expect(ctx.getString(last)).toBe(ctx.newString(text).consume((h) => ctx.getString(h)));
      last.dispose();
    }
    done();
  });
});
