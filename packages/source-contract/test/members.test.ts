// Prototype-reaching member names in every position the contract covers, and the near-misses.
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_MEMBERS } from '../src/index.js';
import { errorCodes, errorsOf, inRun } from './helpers.js';

const M = 'WF_SOURCE_FORBIDDEN_MEMBER';

describe('forbidden member names', () => {
  it.each([...FORBIDDEN_MEMBERS])('refuses .%s in dot access, at the property', (name) => {
    const errors = errorsOf(inRun(`return args.${name};`));
    expect(errors.map((d) => d.code)).toEqual([M]);
    expect(errors[0]).toMatchObject({ line: 3, column: 15 });
    expect(errors[0]?.hint.length).toBeGreaterThan(10);
  });

  it.each([
    ['Object.prototype.hasOwnProperty.call(args, "k")', 'Object.hasOwn(obj, key)'],
    ['Object.prototype.toString.call(args)', 'Array.isArray'],
    ['Array.prototype.slice.call(args)', 'list.slice(...)'],
    ['String.prototype.trim.call(args)', 'String(value).trim(...)'],
    ['args.prototype', 'Object.hasOwn(obj, key)'],
  ])('refuses %s with a hint naming the safe alternative', (expr, hint) => {
    const errors = errorsOf(inRun(`return ${expr};`));
    expect(errors.map((d) => d.code)).toEqual([M]);
    expect(errors[0]?.hint).toContain(hint);
  });

  it.each([...FORBIDDEN_MEMBERS])("refuses ['%s'] in computed access", (name) => {
    expect(errorCodes(inRun(`return args['${name}'];`))).toEqual([M]);
  });

  it.each([
    ['a unicode escape', "args['\\u0063onstructor']"],
    ['a braced escape', "args['\\u{63}onstructor']"],
    ['a hex escape', "args['\\x63onstructor']"],
    ['a line continuation', "args['constr\\\nuctor']"],
    ['a template literal', 'args[`constructor`]'],
    ['an escaped template', 'args[`\\u0063onstructor`]'],
    ['a concatenation', "args['constr' + 'uctor']"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: workflow source text under test
    ['a template of literals', "args[`${'__pro'}to__`]"],
    ['a conditional', "args[args.x ? 'a' : 'prototype']"],
    ['a logical fallback', "args[args.k || '__proto__']"],
    ['a sequence', "args[(0, 'caller')]"],
    ['optional chaining', 'args?.constructor'],
    ['optional computed', "args?.['constructor']"],
    ['a call receiver', "(async () => {}).constructor('return this')"],
    ['super', '({ m() { return super.constructor; } })'],
    ['delete', 'delete args.__proto__'],
    ['an assignment target', 'args.prototype = {}'],
    ['a compound assignment target', "args['__proto__'] ||= {}"],
    ['a member of a literal', "'x'.constructor"],
    ['callee', 'args.callee'],
  ])('refuses a forbidden member through %s', (_name, expr) => {
    expect(errorCodes(inRun(`return ${expr};`))).toContain(M);
  });

  it.each([
    ['shorthand', 'const { constructor } = args;'],
    ['renamed', 'const { constructor: C } = args;'],
    ['string key', "const { 'prototype': P } = args;"],
    ['escaped string key', "const { '\\u005f_proto__': P } = args;"],
    ['computed literal key', "const { ['caller']: c } = args;"],
    ['nested', 'const { a: { __proto__: p } } = args;'],
    ['parameter', 'const f = ({ constructor }) => constructor;'],
    ['assignment pattern', 'let c; ({ constructor: c } = args);'],
    ['for-of pattern', 'for (const { prototype } of args.list) {}'],
  ])('refuses an object-pattern key (%s)', (_name, body) => {
    expect(errorCodes(inRun(`${body}\n  return 1;`))).toContain(M);
  });

  it.each([
    ['plain', 'return { __proto__: null };'],
    ['string', "return { '__proto__': args };"],
    ['computed', "return { ['__proto__']: args };"],
    ['shorthand', 'const __proto__ = 1; return { __proto__ };'],
    ['method', 'return { __proto__() {} };'],
  ])('refuses __proto__ as an object-literal key (%s)', (_name, body) => {
    expect(errorCodes(inRun(body))).toEqual([M]);
  });

  it.each([
    ['a longer member name', 'return args.constructorName + args.prototypes + args.callers;'],
    ["'constructor' as a plain string value", "return 'constructor';"],
    ["'constructor' compared", "return args.kind === 'constructor' || '__proto__'.length;"],
    ["'constructor' in", "return 'constructor' in args;"],
    ['an object-literal key other than __proto__', 'return { constructor: 1, prototype: 2 };'],
    ['a class constructor', 'const K = class { constructor(x) { this.x = x; } }; return new K(1);'],
    ['a dynamic key', 'return args[args.key];'],
    ['a number key', 'return args[0] + args[1n];'],
    [
      'a private name',
      'const K = class { #caller = 1; get c() { return this.#caller; } }; return K;',
    ],
    [
      'an identifier named like a member',
      'const callee = 1; const caller = 2; return callee + caller;',
    ],
    ['a string mentioning a member', 'return `use .constructor and __proto__ carefully`;'],
    ['an arguments local', 'function f() { return arguments.length; } return f(1, 2);'],
  ])('allows %s', (_name, body) => {
    expect(errorCodes(inRun(body))).toEqual([]);
  });
});
