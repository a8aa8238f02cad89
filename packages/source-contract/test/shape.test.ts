// Program shape (docs/design.md#pinned-api): one async run, helper functions and consts, nothing else.
import { describe, expect, it } from 'vitest';
import { checkWorkflowSource } from '../src/index.js';
import { errorCodes, errorsOf, inRun } from './helpers.js';

const RUN = "async function run(wf, args) { return wf.runAgent({ name: 'a', prompt: 'p' }); }\n";

describe('program shape', () => {
  it('accepts the minimal workflow with no diagnostics', () => {
    expect(checkWorkflowSource(RUN)).toEqual({ ok: true, warnings: [] });
  });

  it.each([
    ['no parameters', 'async function run() { return 1; }'],
    ['one parameter', 'async function run(wf) { return wf.runAgent({}); }'],
    ['renamed parameters', 'async function run(api, input) { return api.runAgent(input); }'],
    [
      'destructured args with defaults',
      'async function run(wf, { topic = "x", n = 3 } = {}) { return wf.runAgent({ topic, n }); }',
    ],
    [
      'destructured wf',
      'async function run({ runAgent }, [first] = []) { return runAgent({ first }); }',
    ],
    ['a default on wf', 'async function run(wf = null, args) { return wf.runAgent(args); }'],
  ])('accepts run with %s', (_name, source) => {
    expect(errorCodes(source)).toEqual([]);
  });

  it('accepts helper functions (plain, async, generator) and consts, including a class expression', () => {
    const source = `${RUN}
function pick(xs) { return xs[0]; }
async function ask(wf, p) { return wf.runAgent({ prompt: p }); }
function* ids(n) { for (let i = 0; i < n; i++) yield i; }
const LIMIT = 3;
const { a, b: [c] } = { a: 1, b: [2] };
const Box = class { #v; constructor(v) { this.#v = v; } get v() { return this.#v; } static of(v) { return new Box(v); } };
;`;
    expect(errorCodes(source)).toEqual([]);
  });

  it('refuses a source without run, with the position 1:1', () => {
    const [d] = errorsOf('function helper() {}');
    expect(d).toMatchObject({ code: 'WF_SOURCE_SHAPE', line: 1, column: 1 });
    expect(d?.message).toContain('async function run');
  });

  it('accepts `const run = async (wf, args) => ...` and checks it like the declaration', () => {
    expect(errorCodes('const run = async (wf) => wf.runAgent({});')).toEqual([]);
    expect(
      errorCodes('const run = async function (wf, args) { return wf.runAgent({}); };'),
    ).toEqual([]);
    // the same rules as for the declaration: async, at most two parameters, one run
    expect(errorsOf('const run = (wf) => wf.runAgent({});')[0]?.message).toContain(
      'must be an async function',
    );
    expect(errorsOf('const run = async (wf, a, b) => wf.runAgent({});')[0]?.message).toContain(
      'at most 2',
    );
    // two runs do not even parse as a script
    expect(errorCodes(`const run = async (wf) => wf.runAgent({});\n${RUN}`)).toEqual([
      'WF_SOURCE_SYNTAX',
    ]);
    // a run that is not a function is still no run
    const d = errorsOf('const run = 1;').find((e) => e.line === 1 && e.column === 1);
    expect(d?.message).toContain('no top-level `async function run');
    expect(d?.hint).toContain('const run = async (wf, args) =>');
  });

  it.each([
    ['a top-level class declaration', 'class A { m() { return 1; } }'],
    ['a use strict directive', "'use strict';"],
  ])('accepts %s (no security reason to refuse it)', (_name, extra) => {
    expect(errorCodes(`${extra}\n${RUN}`)).toEqual([]);
  });

  it.each([
    ['a sync run', 'function run(wf, args) { return 1; }', 'must be an async function'],
    ['a generator run', 'async function* run(wf, args) { yield 1; }', 'generator'],
    ['three parameters', 'async function run(wf, args, extra) { return 1; }', 'at most 2'],
    ['a rest parameter', 'async function run(...all) { return 1; }', 'rest parameter'],
  ])('refuses %s', (_name, source, text) => {
    const errors = errorsOf(source).filter((d) => d.code === 'WF_SOURCE_SHAPE');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain(text);
  });

  it('refuses a second run', () => {
    const errors = errorsOf(`${RUN}${RUN}`);
    expect(errors.map((d) => [d.code, d.line])).toEqual([['WF_SOURCE_SHAPE', 2]]);
  });

  it.each([
    ['an expression statement', 'run();', 'expression statement'],
    ['a call at top level', 'wf.runAgent({});', 'expression statement'],
    ['a top-level if', 'if (true) {}', '`if` statement'],
    ['a top-level block', '{ }', 'block'],
    ['a top-level loop', 'for (const x of []) {}', '`for...of` loop'],
    ['a top-level try', 'try {} catch {}', '`try` statement'],
  ])('refuses %s', (_name, extra, text) => {
    const errors = errorsOf(`${extra}\n${RUN}`);
    expect(errors.map((d) => d.code)).toContain('WF_SOURCE_SHAPE');
    expect(errors.find((d) => d.code === 'WF_SOURCE_SHAPE')?.message).toContain(text);
    expect(errors[0]?.line).toBe(1);
  });

  it('refuses class static blocks anywhere, even inside run', () => {
    expect(errorCodes(`const A = class { static { globalThis; } };\n${RUN}`)).toContain(
      'WF_SOURCE_SHAPE',
    );
    expect(errorCodes(`class C { static { } }\n${RUN}`)).toEqual(['WF_SOURCE_SHAPE']);
    expect(errorCodes(inRun('const B = class { static { } };'))).toEqual(['WF_SOURCE_SHAPE']);
  });

  it('refuses a hashbang line as unsupported syntax', () => {
    expect(errorCodes(`#!/usr/bin/env node\n${RUN}`)).toEqual(['WF_SOURCE_UNSUPPORTED_SYNTAX']);
  });
});

describe('module syntax', () => {
  it.each([
    ['an import declaration', `import fs from 'fs';\n${RUN}`],
    ['an export declaration', `export ${RUN}`],
    ['export default', `${RUN}export default run;`],
    ['import.meta', inRun('return import.meta.url;')],
  ])('refuses %s', (_name, source) => {
    expect(errorCodes(source)).toContain('WF_SOURCE_MODULE_SYNTAX');
  });

  it('refuses dynamic import() and names the Node module it loads', () => {
    const errors = errorsOf(inRun("const m = await import('node:fs');"));
    expect(errors.map((d) => d.code)).toEqual(['WF_SOURCE_MODULE_SYNTAX', 'WF_SOURCE_NODE_MODULE']);
    expect(errors[1]?.message).toContain("'node:fs'");
  });

  it('refuses import() of a computed specifier too', () => {
    expect(errorCodes(inRun('await import(args.path);'))).toEqual(['WF_SOURCE_MODULE_SYNTAX']);
  });
});

describe('statements', () => {
  it('refuses `with` (a strict-mode syntax error) as a forbidden statement', () => {
    const [d] = errorsOf(inRun('with (args) { x; }'));
    expect(d).toMatchObject({ code: 'WF_SOURCE_FORBIDDEN_STATEMENT', line: 3, column: 3 });
  });

  it('refuses `debugger` with its position', () => {
    const [d] = errorsOf(inRun('debugger;'));
    expect(d).toMatchObject({ code: 'WF_SOURCE_FORBIDDEN_STATEMENT', line: 3, column: 3 });
  });
});

describe('unsupported syntax (Babel accepts, QuickJS does not)', () => {
  it.each([
    ['using', inRun('{ using r = args.resource; }')],
    ['await using', inRun('await using r = args.resource;')],
    ['a decorator', `const A = @dec class {};\n${RUN}`],
    ['an accessor field', `const A = class { accessor x = 1 };\n${RUN}`],
  ])('refuses %s', (_name, source) => {
    expect(errorCodes(source)).toEqual(['WF_SOURCE_UNSUPPORTED_SYNTAX']);
  });

  it.each([
    ['an inverted quantifier', '/a{2,1}/'],
    ['an inverted class range', '/[b-a]/'],
    ['a double quantifier', '/a**/'],
    ['an out-of-range code point', '/\\u{110000}/u'],
    ['a class escape in a range', '/[\\d-a]/u'],
    ['a lone brace in unicode mode', '/{/u'],
  ])('refuses a regular expression with %s (QuickJS rejects it at compile time)', (_n, re) => {
    const [d] = errorsOf(inRun(`return ${re}.test(args.s);`));
    expect(d?.code).toBe('WF_SOURCE_SYNTAX');
    expect(d?.message).toContain('invalid regular expression');
  });
});

describe('syntax errors', () => {
  it('reports the parser position 1-based, without the parser suffix', () => {
    const [d] = errorsOf('async function run(wf, args) {\n  return (;\n}');
    expect(d).toMatchObject({ code: 'WF_SOURCE_SYNTAX', line: 2, column: 11 });
    expect(d?.message).not.toMatch(/\(\d+:\d+\)$/);
    expect(d?.hint.length).toBeGreaterThan(10);
  });

  it.each([
    ['a legacy octal literal', inRun('return 010;')],
    ['top-level await', 'await 1;'],
    ['an unterminated string', inRun("return 'abc;")],
    ['binding eval', 'async function run(eval) {}'],
    ['a sloppy-mode octal escape', inRun("return '\\08';")],
  ])('refuses %s', (_name, source) => {
    expect(errorCodes(source)).toEqual(['WF_SOURCE_SYNTAX']);
  });

  it('explains how to fix a top-level await', () => {
    expect(errorsOf('await 1;')[0]?.hint).toContain('async function run');
  });
});
