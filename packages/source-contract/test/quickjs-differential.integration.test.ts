// The parser differential: whatever the checker accepts must also compile in real
// QuickJS. Babel is the checker's parser, QuickJS is the runtime's; they must not disagree in
// the dangerous direction (checker accepts, runtime parses something else or rejects).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWorkflowSource, FORBIDDEN_GLOBALS, KNOWN_GLOBALS } from '../src/index.js';
import { beyondStaticFixtures, goodFixtures, hostileFixtures } from './fixtures.js';
import { mutatedFixture, program } from './generators.js';
import { inRun } from './helpers.js';
import { createCompiler, type QuickJSCompiler, wrapForSandbox } from './quickjs.js';

let qjs: QuickJSCompiler;
beforeAll(async () => {
  qjs = await createCompiler();
});
afterAll(() => qjs.dispose());

// Syntax features, including ones where Babel and QuickJS are known to differ.
// biome-ignore-start lint/suspicious/noTemplateCurlyInString: workflow source text under test
const SYNTAX_SNIPPETS: string[] = [
  'return /(?i:a)/;',
  'return /[\\p{L}--a]/v;',
  'return /(?<a>x)|(?<a>y)/;',
  'const A = class { #x; m(o) { return #x in o; } }; return A;',
  'let x; x ??= 1; return x;',
  'return 1_000n;',
  'for await (const a of args.list) { wf.log(a); }',
  'return args?.b?.();',
  'l: for (;;) { break l; }',
  'return { a: 1, ...args };',
  'const g = async function* () { yield* args; }; return g;',
  'return `a${args}`;',
  'return String.raw`\\u`;',
  'const f = function (a, b = 1, ...c) { return [a, b, c]; }; return f;',
  'const K = class { static x = 1; #p = 2; get y() { return 1; } static async *m() {} }; return K;',
  'try { return 1; } catch { return 2; }',
  'return 0b101 + 0o17 + 0x1f;',
  'return "\\u{1F600}";',
  'return args.a ** args.b;',
  'return (-args.a) ** 2;',
  'return /a/dgimsuy;',
  'return /a/v;',
  'function f() { return new.target; } return f;',
  'return "\u2028";',
  'return 1 <!-- 2\n;',
  'return args.b\n--> c\n;',
  'return /[\\q{abc}]/v;',
  'return 1.e3 + .5;',
  'return args.\\u0062;',
  'return async (x) => x;',
  'return function* () {};',
  'if (args) { function f() {} }',
  'return { get a() { return 1; }, set a(v) {}, [args.k]: 1, async *m() {} };',
  'return /(?<=a)b/;',
  'return /\\p{Script=Greek}/u;',
  'return /(?<𝒜>.)/u;',
  'return 9007199254740993n ** 2n;',
  'return args?.[0]?.b;',
  'const A = class { static async #m() {} }; return A;',
  'const B = class extends Array { constructor() { super(); super.push(1); } }; return B;',
  'return { async [args.a]() {} };',
  'const { a = 1 } = args ?? {}; return a;',
  'let a, b; [a, , b] = args.l; return a + b;',
  'for (const [k, v] of Object.entries(args)) { wf.log(k + v); }',
  'for (let i = 0, j = 1; i < j; i++) {}',
  'switch (args.a) { case 1: { let b; break; } default: }',
  'do args.x++; while (0);',
  'return typeof args === "undefined";',
  'return void 0;',
  'return "a" in args;',
  'return args instanceof Array;',
  'return delete args.b;',
  'return (args.a, args.b);',
  'return args.a ? 1 : 2;',
  'return args.a || (args.b && args.c) || args.d;',
  'return /[/]/;',
  'return args.a / args.b / args.c;',
  'return "\\x41";',
  'const A = class { "constructor"() {} }; return A;',
  'return { 0: 1, "a b": 2, 1n: 3 };',
  'const A = class { 1n() {} }; return A;',
  'return function () { "use strict"; };',
  'return { async: 1, get: 2, set: 3, static: 4, of: 5, let: 6, yield: 7, await: 8 };',
  'const { a, b: [c, d = 2], ...rest } = args; return [a, c, d, rest];',
  "return '\\u{10FFFF}';",
  'return `${`${args}`}`;',
  'const x = "a"\n/args.b/g; return x;',
  'return { a() { return super.a; } };',
  'return Array.from({ length: 3 }, (_, i) => i);',
  'return 1n / 2n;',
  'return 0.1e-10 + 1_0.0_1e1_0;',
  'return /(?<a>.)\\k<a>/;',
  'return /\\k<a>/;',
  'return /a{2,1}/;',
  'return /[b-a]/;',
  'return /(?-i:a)/;',
  'return /\\1(a)/;',
  'return /a**/;',
  'return /(?:)/;',
  'return /\\c/;',
  'return /\\u{110000}/u;',
  'return /[\\d-a]/;',
  'return /[\\d-a]/u;',
  'return /\\p{Basic_Emoji}/v;',
  'return /{/;',
  'return /}/;',
  'return /]/;',
  'return /{/u;',
  'return /a{/;',
  '{ using r = args.r; }',
  'await using r = args.r;',
  'label: { break label; }',
  'return args.a?.b.c?.(1)?.[2];',
  'return new.target;',
  'return arguments.length;',
  'return class { static m() { return this; } };',
  'return [1, 2, 3].at(-1);',
  'return Object.groupBy([], (x) => x);',
  'var v = 1; return v;',
  'const o = { __proto__x: 1 }; return o;',
  "return '\\0';",
  'return 08;',
  "return '\\8';",
  'return args.a\n++args.b;',
  'return async function () { await 1; };',
  'const a = async () => { for await (const x of args) {} }; return a;',
];
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: workflow source text under test

describe('QuickJS differential', () => {
  it('compiles every accepted fixture (realistic and beyond-static) exactly as checked', () => {
    for (const f of [...goodFixtures, ...beyondStaticFixtures]) {
      expect(checkWorkflowSource(f.source).ok, f.name).toBe(true);
      expect(qjs.compile(f.source), f.name).toBeNull();
      expect(qjs.compile(wrapForSandbox(f.source)), f.name).toBeNull();
    }
  });

  it('compiles every syntax snippet the checker accepts, and counts the refused ones', () => {
    let accepted = 0;
    const refusedButCompiles: string[] = [];
    const refusedAndRejected: string[] = [];
    for (const snippet of SYNTAX_SNIPPETS) {
      const source = inRun(snippet);
      const verdict = checkWorkflowSource(source);
      const compileError = qjs.compile(source);
      if (verdict.ok) {
        accepted++;
        expect(compileError, `accepted but QuickJS rejects: ${snippet}`).toBeNull();
      } else if (compileError === null) refusedButCompiles.push(snippet);
      else refusedAndRejected.push(snippet);
    }
    expect(accepted).toBeGreaterThan(80);
    // The known safe-direction differentials: Babel accepts, QuickJS rejects, checker refuses.
    for (const known of [
      'await using r = args.r;',
      'return /a{2,1}/;',
      'return /[b-a]/;',
      'return /a**/;',
      'return /{/u;',
    ]) {
      expect(refusedAndRejected).toContain(known);
    }
  });

  it('compiles the hostile fixtures that are syntactically valid, so refusals are policy, not parse luck', () => {
    const syntaxCodes = new Set([
      'WF_SOURCE_SYNTAX',
      'WF_SOURCE_MODULE_SYNTAX',
      'WF_SOURCE_UNSUPPORTED_SYNTAX',
      'WF_SOURCE_TOO_DEEP',
      'WF_SOURCE_FORBIDDEN_STATEMENT',
    ]);
    let compiled = 0;
    for (const f of hostileFixtures) {
      if (f.expect.some((c) => syntaxCodes.has(c))) continue;
      expect(qjs.compile(f.source), f.name).toBeNull();
      compiled++;
    }
    expect(compiled).toBeGreaterThan(30);
  });

  it('compiles every generated program the checker accepts (fast-check)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(program, (source) => {
        if (!checkWorkflowSource(source).ok) return;
        accepted++;
        expect(qjs.compile(source)).toBeNull();
      }),
      { numRuns: 600 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it('compiles every mutated realistic workflow the checker accepts (fast-check)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(mutatedFixture(goodFixtures.map((f) => f.source)), (source) => {
        if (!checkWorkflowSource(source).ok) return;
        accepted++;
        expect(qjs.compile(source)).toBeNull();
      }),
      { numRuns: 400 },
    );
    expect(accepted).toBeGreaterThan(20);
  });

  it('classifies every QuickJS global: KNOWN_GLOBALS is exactly its globals minus the forbidden ones', () => {
    const names = qjs.globalNames();
    expect(names.filter((n) => !KNOWN_GLOBALS.has(n) && !FORBIDDEN_GLOBALS.has(n))).toEqual([]);
    expect([...KNOWN_GLOBALS].filter((n) => !names.includes(n))).toEqual([]);
  });
});
