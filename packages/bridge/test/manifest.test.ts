// Every manifest rule, accepted and refused, with the exact path and message.
import { describe, expect, it } from 'vitest';
import { PATTERN_IDS, parseManifest, WORKFLOW_NAME_PATTERN } from '../src/index.js';

const base = {
  name: 'review-scopes',
  description: 'Review scopes.',
  phases: ['review', 'synthesize'],
  readOnly: true,
  maxAgents: 6,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize'],
};

function issues(input: unknown, options?: Parameters<typeof parseManifest>[1]) {
  const result = parseManifest(input, options);
  if (result.ok) throw new Error('expected the manifest to be refused');
  return result.issues;
}

describe('parseManifest: accepted', () => {
  it('accepts the minimal manifest and returns a deep-frozen copy', () => {
    const input = structuredClone(base);
    const result = parseManifest(input);
    expect(result).toEqual({ ok: true, manifest: base });
    if (!result.ok) return;
    expect(result.manifest).not.toBe(input);
    expect(Object.isFrozen(result.manifest)).toBe(true);
    expect(Object.isFrozen(result.manifest.phases)).toBe(true);
    input.phases.push('later');
    expect(result.manifest.phases).toEqual(['review', 'synthesize']);
  });

  it('accepts every optional field', () => {
    const full = {
      ...base,
      plannedAgents: 6,
      tokenBudget: 200_000,
      mayUseWorktree: true,
      patterns: [...PATTERN_IDS],
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    };
    expect(parseManifest(full)).toEqual({ ok: true, manifest: full });
  });

  it.each(['a', 'review', 'a1-b2', `a${'b'.repeat(63)}`])('accepts the name %s', (name) => {
    expect(WORKFLOW_NAME_PATTERN.test(name)).toBe(true);
    expect(parseManifest({ ...base, name }).ok).toBe(true);
  });

  it('accepts maxConcurrency equal to maxAgents and plannedAgents equal to maxAgents', () => {
    expect(parseManifest({ ...base, maxAgents: 2, maxConcurrency: 2, plannedAgents: 2 }).ok).toBe(
      true,
    );
  });
});

describe('parseManifest: refused', () => {
  it.each([
    ['Review', '"Review"'],
    ['1review', '"1review"'],
    ['re_view', '"re_view"'],
    ['', '""'],
    [`a${'b'.repeat(64)}`, `"a${'b'.repeat(39)}..."`],
  ])('refuses the name %j', (name, shown) => {
    expect(issues({ ...base, name })).toEqual([
      {
        path: 'manifest.name',
        message: `manifest.name must be kebab-case: a lowercase letter, then up to 63 lowercase letters, digits or hyphens (got ${shown})`,
      },
    ]);
  });

  it('refuses a non-string name', () => {
    expect(issues({ ...base, name: 7 })).toEqual([
      { path: 'manifest.name', message: 'manifest.name must be a string (got 7)' },
    ]);
  });

  it('refuses a blank description', () => {
    expect(issues({ ...base, description: '  ' })).toEqual([
      { path: 'manifest.description', message: 'manifest.description must not be empty or blank' },
    ]);
  });

  it('refuses empty phases and blank phase names, each with its index', () => {
    expect(issues({ ...base, phases: [] })).toEqual([
      { path: 'manifest.phases', message: 'manifest.phases must not be empty' },
    ]);
    expect(issues({ ...base, phases: ['ok', '', 3] })).toEqual([
      { path: 'manifest.phases[1]', message: 'manifest.phases[1] must not be empty or blank' },
      { path: 'manifest.phases[2]', message: 'manifest.phases[2] must be a string (got 3)' },
    ]);
    expect(issues({ ...base, phases: 'review' })).toEqual([
      { path: 'manifest.phases', message: 'manifest.phases must be an array (got "review")' },
    ]);
  });

  it('refuses a missing or non-boolean readOnly', () => {
    const { readOnly: _, ...rest } = base;
    expect(issues(rest)).toEqual([
      { path: 'manifest.readOnly', message: 'manifest.readOnly is required' },
    ]);
    expect(issues({ ...base, readOnly: 'true' })).toEqual([
      { path: 'manifest.readOnly', message: 'manifest.readOnly must be a boolean (got "true")' },
    ]);
  });

  it.each([0, -1, 1.5, '4', null, Number.MAX_SAFE_INTEGER + 1])(
    'refuses maxAgents %j',
    (maxAgents) => {
      const shown =
        typeof maxAgents === 'string'
          ? `"${maxAgents}"`
          : maxAgents === null
            ? 'null'
            : String(maxAgents);
      expect(issues({ ...base, maxAgents, maxConcurrency: 1 })).toEqual([
        {
          path: 'manifest.maxAgents',
          message: `manifest.maxAgents must be a positive integer (got ${shown})`,
        },
      ]);
    },
  );

  it('refuses maxConcurrency above maxAgents', () => {
    expect(issues({ ...base, maxAgents: 2, maxConcurrency: 3 })).toEqual([
      {
        path: 'manifest.maxConcurrency',
        message: 'manifest.maxConcurrency must not exceed maxAgents (2) (got 3)',
      },
    ]);
  });

  it('refuses a non-positive maxConcurrency', () => {
    expect(issues({ ...base, maxConcurrency: 0 })).toEqual([
      {
        path: 'manifest.maxConcurrency',
        message: 'manifest.maxConcurrency must be a positive integer (got 0)',
      },
    ]);
  });

  it('refuses plannedAgents above maxAgents or not a positive integer', () => {
    expect(issues({ ...base, plannedAgents: 7 })).toEqual([
      {
        path: 'manifest.plannedAgents',
        message: 'manifest.plannedAgents must not exceed maxAgents (6) (got 7)',
      },
    ]);
    expect(issues({ ...base, plannedAgents: 0 })).toEqual([
      {
        path: 'manifest.plannedAgents',
        message: 'manifest.plannedAgents must be a positive integer (got 0)',
      },
    ]);
  });

  it('refuses a tokenBudget that is not a positive integer', () => {
    expect(issues({ ...base, tokenBudget: 0 })).toEqual([
      {
        path: 'manifest.tokenBudget',
        message: 'manifest.tokenBudget must be a positive integer (got 0)',
      },
    ]);
    expect(issues({ ...base, tokenBudget: null })).toEqual([
      {
        path: 'manifest.tokenBudget',
        message: 'manifest.tokenBudget must be a positive integer (got null)',
      },
    ]);
  });

  it('refuses a non-boolean mayUseWorktree', () => {
    expect(issues({ ...base, mayUseWorktree: 1 })).toEqual([
      {
        path: 'manifest.mayUseWorktree',
        message: 'manifest.mayUseWorktree must be a boolean (got 1)',
      },
    ]);
  });

  it('refuses empty patterns and ids outside the closed list', () => {
    expect(issues({ ...base, patterns: [] })).toEqual([
      { path: 'manifest.patterns', message: 'manifest.patterns must not be empty' },
    ]);
    expect(issues({ ...base, patterns: ['tournament', 'map-reduce'] })).toEqual([
      {
        path: 'manifest.patterns[1]',
        message:
          'manifest.patterns[1] must be one of classify-and-act, fan-out-and-synthesize, adversarial-verification, generate-and-filter, tournament, loop-until-done (got "map-reduce")',
      },
    ]);
  });

  it('refuses every unknown key, naming each', () => {
    const allowed =
      'name, description, phases, readOnly, plannedAgents, maxAgents, maxConcurrency, tokenBudget, mayUseWorktree, patterns, inputSchema';
    expect(issues({ ...base, timeoutMs: 10, owner: 'me' })).toEqual([
      {
        path: 'manifest.timeoutMs',
        message: `manifest.timeoutMs is not a known field (allowed: ${allowed})`,
      },
      {
        path: 'manifest.owner',
        message: `manifest.owner is not a known field (allowed: ${allowed})`,
      },
    ]);
  });

  it('names a key that is not an identifier in brackets', () => {
    expect(issues({ ...base, 'max agents': 1 })[0]?.path).toBe('manifest["max agents"]');
  });

  it('refuses non-objects at the root', () => {
    for (const [input, shown] of [
      [null, 'null'],
      [[], 'an array of 0'],
      ['manifest', '"manifest"'],
    ] as const) {
      expect(issues(input)).toEqual([
        { path: 'manifest', message: `manifest must be an object (got ${shown})` },
      ]);
    }
  });

  it('reports every issue of a bad manifest at once', () => {
    const result = issues({
      name: 'X',
      phases: [],
      readOnly: 1,
      maxAgents: 2,
      maxConcurrency: 5,
      patterns: ['x'],
    });
    expect(result.map((i) => i.path)).toEqual([
      'manifest.name',
      'manifest.description',
      'manifest.phases',
      'manifest.readOnly',
      'manifest.patterns[0]',
      'manifest.maxConcurrency',
    ]);
  });

  it('applies deployment ceilings when given', () => {
    expect(
      issues(
        { ...base, maxAgents: 10, maxConcurrency: 9 },
        { limits: { maxAgents: 8, maxConcurrency: 4 } },
      ),
    ).toEqual([
      {
        path: 'manifest.maxAgents',
        message:
          'manifest.maxAgents must not exceed the deployment ceiling for maxAgents (8) (got 10)',
      },
      {
        path: 'manifest.maxConcurrency',
        message:
          'manifest.maxConcurrency must not exceed the deployment ceiling for maxConcurrency (4) (got 9)',
      },
    ]);
    expect(parseManifest(base, { limits: { maxAgents: 6, maxConcurrency: 3 } }).ok).toBe(true);
  });
});

describe('parseManifest: inputSchema subset', () => {
  const withSchema = (inputSchema: unknown) => ({ ...base, inputSchema });

  it.each([
    { type: 'object' },
    { type: 'object', properties: {}, required: [], additionalProperties: true },
    { type: 'array', items: { type: 'integer' } },
    { type: 'string', enum: ['a', 'b'] },
    { type: 'string', const: 'x' },
    { type: 'number', const: 1.5 },
    { type: 'integer', const: 2 },
    { type: 'boolean', const: false },
    { type: 'json' },
    { type: 'json', const: null },
    {
      type: 'object',
      properties: {
        nested: {
          type: 'object',
          properties: { list: { type: 'array', items: { type: 'boolean' } } },
        },
      },
    },
  ])('accepts %j', (schema) => {
    expect(parseManifest(withSchema(schema))).toEqual({ ok: true, manifest: withSchema(schema) });
  });

  it.each([
    [
      { type: 'null' },
      'manifest.inputSchema.type',
      'must be one of object, array, string, number, integer, boolean, json (got "null")',
    ],
    [
      {},
      'manifest.inputSchema.type',
      'is required (one of object, array, string, number, integer, boolean, json)',
    ],
    [[], 'manifest.inputSchema', 'must be a schema object (got an array of 0)'],
    [{ type: 'array' }, 'manifest.inputSchema.items', 'is required'],
    [
      { type: 'string', pattern: '^a' },
      'manifest.inputSchema.pattern',
      'is not a known field (allowed: type, enum, const)',
    ],
    [{ type: 'string', enum: [] }, 'manifest.inputSchema.enum', 'must not be empty'],
    [
      { type: 'string', enum: ['a', 1] },
      'manifest.inputSchema.enum[1]',
      'must be a string (got 1)',
    ],
    [
      { type: 'string', const: 1 },
      'manifest.inputSchema.const',
      'must be a string (the const of a string schema) (got 1)',
    ],
    [
      { type: 'number', enum: [1] },
      'manifest.inputSchema.enum',
      'is not a known field (allowed: type, const)',
    ],
    [{ type: 'integer', const: 1.5 }, 'manifest.inputSchema.const', 'must be an integer (got 1.5)'],
    [
      { type: 'boolean', const: 'yes' },
      'manifest.inputSchema.const',
      'must be a boolean (got "yes")',
    ],
    [
      { type: 'json', const: {} },
      'manifest.inputSchema.const',
      'must be a JSON primitive (null, boolean, number or string) (got an object)',
    ],
    [
      { type: 'object', additionalProperties: { type: 'string' } },
      'manifest.inputSchema.additionalProperties',
      'must be a boolean (schemas as additionalProperties are not supported) (got an object)',
    ],
    [
      { type: 'object', properties: [] },
      'manifest.inputSchema.properties',
      'must be an object mapping property names to schemas (got an array of 0)',
    ],
    [
      { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] },
      'manifest.inputSchema.required',
      'must name only declared properties (not declared: b)',
    ],
    [
      { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'a'] },
      'manifest.inputSchema.required',
      'must not repeat a name',
    ],
    [
      { type: 'object', oneOf: [] },
      'manifest.inputSchema.oneOf',
      'is not a known field (allowed: type, properties, required, additionalProperties)',
    ],
    [
      { type: 'object', properties: { a: { type: 'array', items: { type: 'tuple' } } } },
      'manifest.inputSchema.properties.a.items.type',
      'must be one of object, array, string, number, integer, boolean, json (got "tuple")',
    ],
  ])('refuses %j at %s', (schema, path, message) => {
    expect(issues(withSchema(schema))).toEqual([{ path, message: `${path} ${message}` }]);
  });

  it('refuses an undeclared required name even when a property schema is bad too', () => {
    expect(
      issues(withSchema({ type: 'object', properties: { a: { type: 'x' } }, required: ['b'] })).map(
        (i) => i.path,
      ),
    ).toEqual(['manifest.inputSchema.properties.a.type', 'manifest.inputSchema.required']);
  });
});
