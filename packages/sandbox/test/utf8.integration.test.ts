// The native text path into QuickJS (utf8.js): evalText and newText give what the library's
// evalCode and newString give, for ASCII, multi-byte and ill-formed text, NULs, errors and flags.
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSContext } from 'quickjs-emscripten-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalText, newText, readUtf8, utf8Length } from '../src/internal/utf8.js';

let ctx: QuickJSContext;
let dispose: () => void;
beforeAll(async () => {
  // The variant's CJS typings confuse NodeNext resolution; at run time it is the ESM default export.
  const mod = await newQuickJSWASMModuleFromVariant(
    variant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0],
  );
  const rt = mod.newRuntime();
  ctx = rt.newContext();
  dispose = () => {
    ctx.dispose();
    rt.dispose();
  };
});
afterAll(() => dispose());

/** What a result holds, read back through the library: a value's dump or the error's. */
const read = (r: ReturnType<typeof evalText>) => {
  if (r.error) return { error: r.error.consume((h) => ctx.dump(h)) as unknown };
  return { value: r.value.consume((h) => ctx.dump(h)) as unknown };
};

const TEXTS = [
  'plain ascii',
  'é✓中€',
  '𝄞😀 astral',
  'x'.repeat(20_000),
  'a\uD800b', // lone high surrogate
  '\uDC00', // lone low surrogate
  'nul\u0000after',
  '',
];

describe('evalText', () => {
  it('evaluates as evalCode does, the text written natively', () => {
    for (const text of TEXTS) {
      const source = `(${JSON.stringify(text)} + ${"'\u00e9\u{1D11E}'"})`;
      // The literal characters themselves in the source, not escapes: the bytes matter.
      const literal = `'${text.replace(/[\\'\n\r\u2028\u2029]/g, ' ')}'.length`;
      for (const code of [source, literal]) {
        expect(read(evalText(ctx, code, 'a.js', { strict: true }))).toEqual(
          read(ctx.evalCode(code, 'a.js', { strict: true })),
        );
      }
    }
  });

  it('takes UTF-8 bytes as the same text', () => {
    const code = "'é✓𝄞' + 'x'.repeat(3)";
    expect(read(evalText(ctx, Buffer.from(code, 'utf8'), 'b.js', { strict: true }))).toEqual({
      value: 'é✓𝄞xxx',
    });
  });

  it('keeps the strict and compile-only flags, and reports errors as evalCode does', () => {
    expect(read(evalText(ctx, 'undeclared1 = 1; 2', 'c.js', {}))).toEqual({ value: 2 });
    const strict = read(evalText(ctx, 'undeclared2 = 1', 'c.js', { strict: true }));
    expect(strict).toEqual(read(ctx.evalCode('undeclared2 = 1', 'c.js', { strict: true })));
    expect(JSON.stringify(strict)).toContain('ReferenceError');
    const compiled = evalText(ctx, 'globalThis.ran = true', 'd.js', { compileOnly: true });
    expect(compiled.error).toBeUndefined();
    compiled.value?.dispose();
    expect(read(evalText(ctx, 'typeof globalThis.ran', 'e.js', {}))).toEqual({
      value: 'undefined',
    });
    const syntax = read(evalText(ctx, 'function (', 'f.js', { strict: true }));
    expect(syntax).toEqual(read(ctx.evalCode('function (', 'f.js', { strict: true })));
    expect(JSON.stringify(syntax)).toContain('SyntaxError');
  });
});

describe('newText', () => {
  it('makes the string newString makes, lone surrogates and NULs included', () => {
    for (const text of TEXTS) {
      const ours = newText(ctx, text).consume((h) => ctx.getString(h));
      const theirs = ctx.newString(text).consume((h) => ctx.getString(h));
      expect(ours).toBe(theirs);
    }
  });

  it('counts UTF-8 bytes, and refuses only ill-formed text', () => {
    expect(utf8Length('é✓𝄞')).toBe(2 + 3 + 4);
    expect(utf8Length('a\uD800')).toBe(-1);
  });
});

describe('readUtf8', () => {
  it('reads what UTF8ToString reads, megabytes and malformed bytes included', () => {
    const c = ctx as unknown as {
      module: {
        HEAPU8: Uint8Array;
        UTF8ToString(p: number): string;
        _malloc(n: number): number;
        _free(p: number): void;
      };
      ffi: {
        QTS_GetString(ctx: number, v: number): number;
        QTS_FreeCString(ctx: number, p: number): void;
      };
      ctx: { value: number };
    };
    const texts = [...TEXTS, 'é✓𝄞'.repeat(300_000)];
    for (const text of texts) {
      const h = ctx.newString(text);
      const p = c.ffi.QTS_GetString(c.ctx.value, h.value);
      expect(readUtf8(c.module, p)).toBe(c.module.UTF8ToString(p));
      c.ffi.QTS_FreeCString(c.ctx.value, p);
      h.dispose();
    }
    // Bytes no encoder writes (a truncated sequence, a stray continuation byte): U+FFFD alike.
    const p = c.module._malloc(8);
    c.module.HEAPU8.set([0x61, 0xe2, 0x9c, 0x62, 0x80, 0x63, 0], p);
    expect(readUtf8(c.module, p)).toBe(c.module.UTF8ToString(p));
    expect(readUtf8(c.module, p)).toBe('a\uFFFDb\uFFFDc');
    c.module._free(p);
    expect(readUtf8(c.module, 0)).toBe('');
  });
});
