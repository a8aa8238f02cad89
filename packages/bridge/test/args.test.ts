// validateArgs: the inputSchema subset applied with paths, and the plain-JSON rules without a schema.
import { describe, expect, it } from 'vitest';
import {
  type InputSchema,
  parseManifest,
  validateArgs,
  type WorkflowManifest,
} from '../src/index.js';

function manifest(inputSchema?: InputSchema): WorkflowManifest {
  const result = parseManifest({
    name: 'args-test',
    description: 'Args test.',
    phases: ['one'],
    readOnly: true,
    maxAgents: 1,
    maxConcurrency: 1,
    patterns: ['tournament'],
    ...(inputSchema === undefined ? {} : { inputSchema }),
  });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.manifest;
}

function issues(m: WorkflowManifest, args: unknown) {
  const result = validateArgs(m, args);
  if (result.ok) throw new Error('expected the args to be refused');
  return result.issues;
}

const review = manifest({
  type: 'object',
  additionalProperties: false,
  properties: {
    request: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string', enum: ['code', 'tests', 'docs'] } },
    depth: { type: 'integer' },
    ratio: { type: 'number' },
    strict: { type: 'boolean' },
    mode: { type: 'string', const: 'review' },
    extra: { type: 'json' },
  },
  required: ['request', 'scopes'],
});

describe('validateArgs with an inputSchema', () => {
  it('accepts matching args and returns a copy', () => {
    const args = {
      request: 'r',
      scopes: ['code', 'docs'],
      depth: 2,
      ratio: 0.5,
      strict: true,
      mode: 'review',
      extra: { any: [1, null] },
    };
    const result = validateArgs(review, args);
    expect(result).toEqual({ ok: true, args });
    if (result.ok) expect(result.args).not.toBe(args);
  });

  it('names every wrong field with its path', () => {
    expect(
      issues(review, {
        scopes: ['code', 'tests', 'ops', 3],
        depth: 1.5,
        ratio: 'x',
        strict: 'no',
        mode: 'edit',
        other: 1,
      }),
    ).toEqual([
      { path: 'args.request', message: 'args.request is required' },
      {
        path: 'args.scopes[2]',
        message: 'args.scopes[2] must be one of code, tests, docs (got "ops")',
      },
      { path: 'args.scopes[3]', message: 'args.scopes[3] must be a string (got 3)' },
      { path: 'args.depth', message: 'args.depth must be an integer (got 1.5)' },
      { path: 'args.ratio', message: 'args.ratio must be a number (got "x")' },
      { path: 'args.strict', message: 'args.strict must be a boolean (got "no")' },
      { path: 'args.mode', message: 'args.mode must be "review" (got "edit")' },
      {
        path: 'args.other',
        message:
          'args.other is not a known field (allowed: request, scopes, depth, ratio, strict, mode, extra)',
      },
    ]);
  });

  it('refuses a non-object where the schema wants an object', () => {
    expect(issues(review, ['r'])).toEqual([
      { path: 'args', message: 'args must be an object (got an array of 1)' },
    ]);
    expect(issues(review, null)).toEqual([
      { path: 'args', message: 'args must be an object (got null)' },
    ]);
  });

  it('treats missing args as {} for an object schema, so the required fields are named', () => {
    expect(issues(review, undefined)).toEqual([
      { path: 'args.request', message: 'args.request is required' },
      { path: 'args.scopes', message: 'args.scopes is required' },
    ]);
    expect(validateArgs(manifest({ type: 'object' }), undefined)).toEqual({ ok: true, args: {} });
  });

  it('allows extra properties unless additionalProperties is false', () => {
    const open = manifest({ type: 'object', properties: { a: { type: 'string' } } });
    expect(validateArgs(open, { a: 'x', b: [1] })).toEqual({ ok: true, args: { a: 'x', b: [1] } });
    expect(issues(open, { a: 1 })).toEqual([
      { path: 'args.a', message: 'args.a must be a string (got 1)' },
    ]);
  });

  it('checks nested objects and arrays with full paths', () => {
    const nested = manifest({
      type: 'object',
      properties: {
        packets: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: { type: 'integer', const: 1 } },
            required: ['id'],
            additionalProperties: false,
          },
        },
      },
    });
    expect(issues(nested, { packets: [{ id: 1 }, {}, { id: 2, x: 0 }] })).toEqual([
      { path: 'args.packets[1].id', message: 'args.packets[1].id is required' },
      { path: 'args.packets[2].id', message: 'args.packets[2].id must be 1 (got 2)' },
      {
        path: 'args.packets[2].x',
        message: 'args.packets[2].x is not a known field (allowed: id)',
      },
    ]);
  });

  it('applies a non-object root schema', () => {
    const list = manifest({ type: 'array', items: { type: 'number' } });
    expect(validateArgs(list, [1, 2.5])).toEqual({ ok: true, args: [1, 2.5] });
    expect(issues(list, undefined)).toEqual([
      { path: 'args', message: 'args must be an array (got null)' },
    ]);
    const flag = manifest({ type: 'boolean', const: true });
    expect(issues(flag, false)).toEqual([
      { path: 'args', message: 'args must be true (got false)' },
    ]);
  });

  it('reports both plain-JSON and schema issues, once each', () => {
    expect(
      issues(review, { request: 'r', scopes: ['code', 'nope'], ratio: Number.POSITIVE_INFINITY }),
    ).toEqual([
      { path: 'args.ratio', message: 'args.ratio must be a finite number (got Infinity)' },
      {
        path: 'args.scopes[1]',
        message: 'args.scopes[1] must be one of code, tests, docs (got "nope")',
      },
    ]);
  });

  it('still refuses non-JSON values under a json-typed field', () => {
    expect(issues(review, { request: 'r', scopes: [], extra: { when: new Date(0) } })).toEqual([
      {
        path: 'args.extra.when',
        message: 'args.extra.when must be a plain object (got a class instance)',
      },
    ]);
  });
});

describe('validateArgs without an inputSchema: plain JSON only', () => {
  const plain = manifest();

  it('accepts JSON values and maps missing args to null', () => {
    for (const value of [null, true, 0, -1.5, 'x', [], {}, { a: [1, { b: 'c' }] }]) {
      expect(validateArgs(plain, value)).toEqual({ ok: true, args: value });
    }
    expect(validateArgs(plain, undefined)).toEqual({ ok: true, args: null });
  });

  it('accepts an object with a null prototype', () => {
    const bare = Object.assign(Object.create(null), { a: 1 });
    expect(validateArgs(plain, bare)).toEqual({ ok: true, args: { a: 1 } });
  });

  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const withAccessor = Object.defineProperty({}, 'x', { get: () => 1, enumerable: true });
  const hidden = Object.defineProperty({}, 'x', { value: 1, enumerable: false });
  const extraArrayProp = Object.assign([1], { tag: 'x' });
  class Point {
    x = 1;
  }

  it.each([
    ['NaN', { n: Number.NaN }, 'args.n', 'must be a finite number (got NaN)'],
    ['-Infinity', [Number.NEGATIVE_INFINITY], 'args[0]', 'must be a finite number (got -Infinity)'],
    ['-0', { n: -0 }, 'args.n', 'must not be -0 (JSON cannot carry it)'],
    ['undefined', { u: undefined }, 'args.u', 'must be a JSON value (got undefined)'],
    ['a function', { f: () => 1 }, 'args.f', 'must be a JSON value (got a function)'],
    ['a bigint', { b: 1n }, 'args.b', 'must be a JSON value (got a bigint)'],
    ['a symbol', [Symbol('s')], 'args[0]', 'must be a JSON value (got a symbol)'],
    ['a cycle', cyclic, 'args.self', 'must not contain a cycle'],
    ['a sparse array', sparse, 'args[1]', 'must not be a hole (sparse arrays are not JSON)'],
    ['an accessor', withAccessor, 'args.x', 'must be a data property, not an accessor'],
    ['a non-enumerable property', hidden, 'args.x', 'must be an enumerable property'],
    [
      'an array with extra properties',
      extraArrayProp,
      'args',
      'must be a plain array (it has an extra property tag)',
    ],
    [
      'a class instance',
      { p: new Point() },
      'args.p',
      'must be a plain object (got a class instance)',
    ],
    ['a Map', new Map(), 'args', 'must be a plain object (got a class instance)'],
    [
      'a __proto__ key',
      JSON.parse('{"__proto__":{"polluted":1}}'),
      'args.__proto__',
      'is a reserved key (__proto__, constructor and prototype are never accepted)',
    ],
    [
      'a constructor key',
      { nested: { constructor: 1 } },
      'args.nested.constructor',
      'is a reserved key (__proto__, constructor and prototype are never accepted)',
    ],
  ])('refuses %s', (_label, value, path, message) => {
    expect(issues(plain, value)).toEqual([{ path, message: `${path} ${message}` }]);
  });

  it('refuses a symbol key', () => {
    expect(issues(plain, { [Symbol('k')]: 1 })).toEqual([
      { path: 'args', message: 'args must not have symbol keys (Symbol(k))' },
    ]);
  });

  it('refuses nesting deeper than 64 levels', () => {
    let deep: unknown = {};
    for (let i = 0; i < 70; i++) deep = { d: deep };
    const result = issues(plain, deep);
    expect(result).toHaveLength(1);
    expect(result[0]?.message).toBe(`args${'.d'.repeat(64)} nests deeper than 64 levels`);
    let ok: unknown = {};
    for (let i = 0; i < 63; i++) ok = { d: ok };
    expect(validateArgs(plain, ok).ok).toBe(true);
  });

  it('does not run getters while checking', () => {
    let calls = 0;
    const value = Object.defineProperty({}, 'x', {
      get: () => {
        calls++;
        return 1;
      },
      enumerable: true,
    });
    validateArgs(plain, value);
    validateArgs(review, { request: 'r', scopes: [], extra: value });
    expect(calls).toBe(0);
  });
});

describe('validateArgs with a manifest that did not come from parseManifest', () => {
  const handBuilt = {
    name: 'hand-built',
    description: 'Built in code by a trusted-local workflow.',
    phases: ['one'],
    readOnly: true,
    maxAgents: 1,
    maxConcurrency: 1,
    patterns: ['tournament'],
  } as const;

  it('reads it first and applies its schema', () => {
    const m = {
      ...handBuilt,
      inputSchema: { type: 'object', required: ['q'], properties: { q: { type: 'string' } } },
    } as const;
    expect(validateArgs(m as unknown as WorkflowManifest, { q: 1 })).toEqual({
      ok: false,
      issues: [{ path: 'args.q', message: 'args.q must be a string (got 1)' }],
    });
  });

  it('reports a malformed schema instead of throwing', () => {
    const m = { ...handBuilt, inputSchema: { type: 'array' } };
    expect(validateArgs(m as unknown as WorkflowManifest, [])).toEqual({
      ok: false,
      issues: [
        { path: 'manifest.inputSchema.items', message: 'manifest.inputSchema.items is required' },
      ],
    });
    expect(validateArgs(null as unknown as WorkflowManifest, {})).toEqual({
      ok: false,
      issues: [{ path: 'manifest', message: 'manifest must be an object (got null)' }],
    });
  });

  it('sees a later change to a hand-built manifest (nothing stale is cached)', () => {
    const m: { inputSchema: InputSchema } & Omit<WorkflowManifest, 'inputSchema'> = {
      ...handBuilt,
      inputSchema: { type: 'string' },
    };
    expect(validateArgs(m, 'x').ok).toBe(true);
    m.inputSchema = { type: 'integer' };
    expect(validateArgs(m, 'x')).toEqual({
      ok: false,
      issues: [{ path: 'args', message: 'args must be an integer (got "x")' }],
    });
  });
});
