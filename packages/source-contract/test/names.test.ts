// Host names are refused as FREE references only; bindings that shadow them stay allowed.
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_GLOBALS } from '../src/index.js';
import { errorCodes, errorsOf, inRun, warningCodes } from './helpers.js';

const ISSUE_NAMES = [
  'require',
  'module',
  'exports',
  'process',
  'global',
  'globalThis',
  'self',
  'window',
  'Deno',
  'Bun',
  'eval',
  'Function',
  'AsyncFunction',
  'GeneratorFunction',
  'WebAssembly',
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'EventSource',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'clearTimeout',
  'clearInterval',
  'SharedArrayBuffer',
  'Atomics',
  'WeakRef',
  'FinalizationRegistry',
];

describe('forbidden host names', () => {
  it('covers every name the issue lists', () => {
    for (const name of ISSUE_NAMES) expect(FORBIDDEN_GLOBALS.has(name), name).toBe(true);
  });

  it.each([...FORBIDDEN_GLOBALS.keys()])('refuses a free read of %s with a hint', (name) => {
    const errors = errorsOf(inRun(`const v = ${name};\n  return v;`));
    expect(errors.map((d) => d.code)).toEqual(['WF_SOURCE_FORBIDDEN_NAME']);
    expect(errors[0]).toMatchObject({ line: 3, column: 13 });
    expect(errors[0]?.message).toContain(`\`${name}\``);
    expect(errors[0]?.hint).toBe(FORBIDDEN_GLOBALS.get(name));
  });

  it.each([
    ['a call', 'setTimeout(() => {}, 1);'],
    ['typeof', "if (typeof process !== 'undefined') return 1;"],
    ['an assignment target', 'globalThis = {};'],
    ['a compound assignment', 'self += 1;'],
    ['an update', 'global++;'],
    ['a shorthand property', 'return { process };'],
    ['a spread', 'return { ...process.env };'],
    ['a member object', 'return process.env.HOME;'],
    ['a computed member object', "return globalThis['fetch'];"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: workflow source text under test
    ['a template substitution', 'return `${process.pid}`;'],
    ['a default parameter', 'const f = (x = eval) => x; return f;'],
    ['a destructuring default', 'const { a = require } = args; return a;'],
    ['a computed key', 'return { [Function]: 1 };'],
    ['a class heritage', 'const K = class extends Function {}; return K;'],
    ['a new expression', "return new Function('return 1');"],
    ['a tagged template', 'return eval`1`;'],
    ['a for-of target', 'for (self of args.list) {} return 1;'],
    ['a destructuring assignment target', '[global] = [1]; return 1;'],
    ['a nested arrow', 'return () => () => fetch(args.url);'],
    ['an optional call', 'return fetch?.(args.url);'],
    ['an escaped identifier', 'return \\u0065val(args.code);'],
    ['an escaped identifier (braces)', 'return \\u{70}rocess;'],
    ['inside a class method', 'const K = class { m() { return process; } }; return K;'],
    ['inside a class field', 'const K = class { f = process; }; return K;'],
  ])('refuses a free reference in %s', (_name, body) => {
    expect(errorCodes(inRun(body))).toContain('WF_SOURCE_FORBIDDEN_NAME');
  });

  it.each([
    ['a member name', 'return args.process + args.eval + wf.require;'],
    ['an object key', 'return { process: 1, eval: 2, setTimeout: 3 };'],
    ['a method key', 'return { fetch() { return 1; } };'],
    ['a class member key', 'const K = class { process() {} static fetch = 1; }; return K;'],
    ['a string value', "return ['process', 'eval', 'require', 'globalThis'];"],
    ['a local const', 'const process = args.p; return process;'],
    [
      'a parameter named frames (the reference implementation flagged this)',
      'const f = (frames) => frames.length; return f(args.x);',
    ],
    ['a parameter named self', 'const f = function (self) { return self.x; }; return f(args);'],
    ['a destructured local', 'const { fetch } = args; return fetch;'],
    ['a catch parameter', 'try { return 1; } catch (global) { return global; }'],
    ['a hoisted var', 'window = 2; var window; return window;'],
    [
      'a function declared later in the block',
      'return setTimeout(); function setTimeout() { return 1; }',
    ],
    ['a class name', 'const module = class module {}; return module;'],
    ['a named function expression', 'const g = function fetch() { return fetch; }; return g;'],
    ['a label', 'eval1: for (;;) { break eval1; } return 1;'],
    ['a for-of binding', 'for (const process of args.list) { wf.log(process); } return 1;'],
  ])('allows %s', (_name, body) => {
    expect(errorCodes(inRun(body))).toEqual([]);
  });

  it('resolves by scope: a shadow in one function does not cover a sibling', () => {
    const source = inRun('const a = (process) => process; const b = () => process; return [a, b];');
    const errors = errorsOf(source);
    expect(errors.map((d) => [d.code, d.column])).toEqual([['WF_SOURCE_FORBIDDEN_NAME', 51]]);
  });

  it.each([
    ['a body var', 'const f = (a = process) => { var process; return a; }; return f;'],
    [
      'a body const',
      'function f(a = process) { const process = 1; return a + process; } return f;',
    ],
    ['a body function', 'function f(a = fetch) { function fetch() {} return a; } return f;'],
  ])(
    'refuses a parameter default that reads the global despite %s of the same name',
    (_n, body) => {
      expect(errorCodes(inRun(body))).toEqual(['WF_SOURCE_FORBIDDEN_NAME']);
    },
  );

  it('lets a default read an earlier parameter and the function name', () => {
    expect(
      errorCodes(
        inRun(
          'const f = function fetch(process, b = process, c = fetch) { return [b, c]; }; return f;',
        ),
      ),
    ).toEqual([]);
  });

  it('resolves block scopes: a let inside a block does not leak out', () => {
    expect(errorCodes(inRun('{ const fetch = 1; } return fetch;'))).toEqual([
      'WF_SOURCE_FORBIDDEN_NAME',
    ]);
  });

  it('allows a helper parameter named like a host global, refuses the global in another helper', () => {
    const source = `${inRun('return 1;')}function a(process) { return process.x; }\nfunction b() { return process.x; }\n`;
    expect(errorsOf(source).map((d) => [d.code, d.line])).toEqual([
      ['WF_SOURCE_FORBIDDEN_NAME', 6],
    ]);
  });

  it.each(['setTimeout', 'Object', 'JSON', 'Promise'])(
    'refuses a top-level declaration that would replace the global %s',
    (name) => {
      const errors = errorsOf(`${inRun('return 1;')}function ${name}() {}\n`);
      expect(errors.map((d) => d.code)).toEqual(['WF_SOURCE_FORBIDDEN_NAME']);
      expect(errors[0]?.message).toContain('would replace a global');
    },
  );

  it('allows the same declaration inside run', () => {
    expect(errorCodes(inRun('function Object() { return 1; } return Object();'))).toEqual([]);
  });
});

describe('node module specifiers', () => {
  it.each([
    ["require('fs')", 'fs'],
    ["require('node:fs/promises')", 'node:fs/promises'],
    ['require(`child_process`)', 'child_process'],
    ["require('net')", 'net'],
    ["require('bun:ffi')", 'bun:ffi'],
    ["require('chil' + 'd_process')", 'child_process'],
  ])('refuses %s and names the module', (call, module) => {
    const errors = errorsOf(inRun(`return ${call};`));
    expect(errors.map((d) => d.code)).toEqual([
      'WF_SOURCE_FORBIDDEN_NAME',
      'WF_SOURCE_NODE_MODULE',
    ]);
    expect(errors[1]?.message).toContain(`'${module}'`);
  });

  it('names the module even when require is a local binding', () => {
    expect(errorCodes(inRun("const require = (x) => x; return require('fs');"))).toEqual([
      'WF_SOURCE_NODE_MODULE',
    ]);
  });

  it('gives the fs hint to use wf.readFile', () => {
    expect(errorsOf(inRun("return require('fs');"))[1]?.hint).toContain('wf.readFile');
  });

  it('allows module names as ordinary strings', () => {
    expect(
      errorCodes(inRun("return [wf.readFile('fs'), 'child_process', { fs: 'node:fs' }];")),
    ).toEqual([]);
  });
});

describe('unknown globals (lint)', () => {
  it('knows console (the bridge prelude maps it onto wf.log): no warning, no error', () => {
    const source = inRun('console.log(1); console.error(2); return 1;');
    expect(errorCodes(source)).toEqual([]);
    expect(warningCodes(source)).toEqual([]);
  });

  it('tells a helper that reads wf to take it as a parameter', () => {
    const source = `${inRun('return helper();')}function helper() { return wf.runAgent({}); }\n`;
    expect(warningCodes(source)).toEqual(['WF_SOURCE_LINT_UNKNOWN_GLOBAL']);
  });

  it('knows the QuickJS globals', () => {
    const body =
      'return [Object, Array, JSON, Math, Date, Promise, Map, Set, RegExp, Error, Symbol, BigInt, Reflect, Proxy, parseInt, Number.isFinite, undefined, NaN, Infinity];';
    expect(warningCodes(inRun(body))).toEqual([]);
  });

  it('does not crash or mislead on names that are Object.prototype members', () => {
    const source = inRun('return [toString, hasOwnProperty, valueOf];');
    const warnings = warningCodes(source);
    expect(warnings).toEqual([
      'WF_SOURCE_LINT_UNKNOWN_GLOBAL',
      'WF_SOURCE_LINT_UNKNOWN_GLOBAL',
      'WF_SOURCE_LINT_UNKNOWN_GLOBAL',
    ]);
  });
});
