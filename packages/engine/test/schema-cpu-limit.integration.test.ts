// The schema workers' time limit is CPU time of the worker thread, not wall time: on a machine
// whose cores are busy, an innocent validation waits for a core longer than it computes and must
// still succeed (under a wall limit it failed with "took longer than 1000 ms" in CI-like load).
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createSchemaPool, SCHEMA_WORKER_LIMITS } from '../src/internal/schema-pool.js';

// A schema and value that cost ajv a measurable, moderate amount of work.
const defs: Record<string, unknown> = { h6: { type: 'number' } };
for (let i = 5; i >= 0; i -= 1) {
  const next = { $ref: `#/$defs/h${i + 1}` };
  defs[`h${i}`] = { anyOf: [{ type: 'string' }, next, next] };
}
const schema = JSON.stringify({ $defs: defs, type: 'array', items: { $ref: '#/$defs/h0' } });
const value = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));

const burners: Worker[] = [];
afterAll(async () => {
  await Promise.all(burners.map((w) => w.terminate()));
});

describe('schema worker limit in CPU time', () => {
  it('lets an innocent validation finish when the machine is busier than its limit', async () => {
    const calibrate = createSchemaPool({ ...SCHEMA_WORKER_LIMITS, timeoutMs: 60_000 });
    // Compile once (cached in the worker), then time the validation alone.
    await calibrate.run(schema, value(1));
    let n = 2_000;
    let soloMs = 0;
    for (;;) {
      const t0 = performance.now();
      expect(await calibrate.run(schema, value(n))).toEqual({ ok: true });
      soloMs = performance.now() - t0;
      if (soloMs >= 150 || n >= 512_000) break;
      n *= 2;
    }
    await calibrate.close();
    // Its CPU cost is at most its solo wall time; the limit is twice that.
    const timeoutMs = Math.ceil(2 * soloMs);
    for (let i = 0; i < 4; i += 1) burners.push(new Worker('for (;;) {}', { eval: true }));
    await new Promise((r) => setTimeout(r, 200));

    const pool = createSchemaPool({
      ...SCHEMA_WORKER_LIMITS,
      timeoutMs,
      wallBackstopMs: 60_000,
    });
    try {
      await pool.run(schema, value(1));
      const t0 = performance.now();
      const result = await pool.run(schema, value(n));
      const wallMs = performance.now() - t0;
      expect(
        result,
        `solo ${soloMs.toFixed(0)} ms, limit ${timeoutMs} ms, loaded wall ${wallMs.toFixed(0)} ms`,
      ).toEqual({ ok: true });
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('still ends a validation that uses more CPU than its limit, and names CPU', async () => {
    const pool = createSchemaPool({ ...SCHEMA_WORKER_LIMITS, timeoutMs: 300 });
    try {
      const heavy: Record<string, unknown> = { h9: { type: 'string' } };
      for (let i = 8; i >= 0; i -= 1) {
        const next = { $ref: `#/$defs/h${i + 1}` };
        heavy[`h${i}`] = { anyOf: [next, next, next, ...(i === 0 ? [{ type: 'number' }] : [])] };
      }
      const ended = await pool.run(
        JSON.stringify({ $defs: heavy, type: 'array', items: { $ref: '#/$defs/h0' } }),
        value(20_000),
      );
      expect(ended).toMatchObject({ ok: false, stage: 'limit' });
      if (!ended.ok) expect(ended.message).toContain('more than 300 ms of CPU');
    } finally {
      await pool.close();
    }
  }, 120_000);
});
