// Host-work bounds of structured output (invariant 6): the expansion budget over the $ref graph and
// the schema worker pool's time limit. Real ajv in real worker threads.
import { describe, expect, it } from 'vitest';
import { MAX_SCHEMA_EXPANSION, schemaExpansion } from '../src/internal/schema-budget.js';
import { createSchemaPool, SCHEMA_WORKER_LIMITS } from '../src/internal/schema-pool.js';
import { createSchemaCheck } from '../src/internal/structured.js';

function refNest(depth: number, width = 3): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`d${depth}`]: { type: 'string' } };
  for (let i = 0; i < depth; i += 1) {
    defs[`d${i}`] = { anyOf: Array.from({ length: width }, () => ({ $ref: `#/$defs/d${i + 1}` })) };
  }
  return { type: 'object', $defs: defs, properties: { v: { $ref: '#/$defs/d0' } } };
}

describe('schemaExpansion', () => {
  it('counts $ref targets once per use, in linear time, and refuses an exponential nest with its pointer', () => {
    expect(schemaExpansion(refNest(4))).toMatchObject({ ok: true });
    const t0 = performance.now();
    const deep = schemaExpansion(refNest(40));
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(deep.ok).toBe(false);
    if (!deep.ok)
      expect(deep.message).toMatch(
        /^at #\/\$defs\/d\d+\S* the schema expands to more than 20000 nodes/,
      );
    const small = schemaExpansion(refNest(6));
    expect(small.ok && small.cost).toBeGreaterThan(3 ** 6);
    expect(small.ok && small.cost).toBeLessThan(MAX_SCHEMA_EXPANSION);
  });

  it('allows recursive schemas (a back-reference costs one node)', () => {
    const tree = {
      type: 'object',
      properties: { left: { $ref: '#' }, right: { $ref: '#' }, v: { type: 'number' } },
    };
    expect(schemaExpansion(tree)).toMatchObject({ ok: true });
  });

  it.each([
    [{ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, /not a local/],
    [{ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, /does not resolve/],
    [{ type: 'object', properties: { a: { $anchor: 'x' } } }, /\$anchor is not supported/],
    [{ type: 'object', properties: { a: { $id: 'x', type: 'string' } } }, /nested \$id/],
  ])('refuses refs it cannot follow: %j', (schema, message) => {
    const r = schemaExpansion(schema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});

describe('createSchemaCheck', () => {
  it('refuses a bad shape before launch and validates in a worker', async () => {
    const check = createSchemaCheck();
    expect(
      check.compile({ type: 'object', properties: { a: { type: 'nonsense' } } }),
    ).toMatchObject({
      ok: false,
      message: expect.stringContaining('#/properties/a/type'),
    });
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    expect(check.compile(schema)).toEqual({ ok: true });
    expect(await check.validate(schema, { a: 1 })).toEqual({ ok: true, value: { a: 1 } });
    const bad = await check.validate(schema, { a: 'x' });
    expect(bad).toMatchObject({ ok: false, final: false });
  });
});

describe('schema worker pool', () => {
  it('ends a job at its time limit, keeps serving others, and keeps the host loop free', async () => {
    const pool = createSchemaPool({ ...SCHEMA_WORKER_LIMITS, timeoutMs: 1_000, maxWorkers: 2 });
    try {
      // 3^9 failing leaves per item, 20,000 items: far more than 1 s of ajv work.
      const defs: Record<string, unknown> = { h9: { type: 'string' } };
      for (let i = 8; i >= 0; i -= 1) {
        const next = { $ref: `#/$defs/h${i + 1}` };
        defs[`h${i}`] = { anyOf: [next, next, next, ...(i === 0 ? [{ type: 'number' }] : [])] };
      }
      const heavy = JSON.stringify({ $defs: defs, type: 'array', items: { $ref: '#/$defs/h0' } });
      const items = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i));
      let last = performance.now();
      let stall = 0;
      const probe = setInterval(() => {
        const now = performance.now();
        stall = Math.max(stall, now - last);
        last = now;
      }, 5);
      const slow = pool.run(heavy, items);
      const quick = await pool.run(JSON.stringify({ type: 'number' }), '1');
      const ended = await slow;
      clearInterval(probe);
      expect(quick, JSON.stringify(quick)).toEqual({ ok: true });
      expect(ended).toMatchObject({ ok: false, stage: 'limit' });
      if (!ended.ok) expect(ended.message).toContain('more than 1000 ms of CPU');
      // The ajv work ran in the worker: the host loop kept ticking (generous for a loaded machine).
      expect(stall).toBeLessThan(250);
      expect(await pool.run(JSON.stringify({ type: 'string' }), '"after"')).toEqual({ ok: true });
    } finally {
      await pool.close();
    }
  }, 30_000);
});
