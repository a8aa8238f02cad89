// Schema validation is charged to the run that asked for it: waiting validations are served
// round-robin by run, so a run with a backlog of validations (a hostile fan-out of heavy schemas)
// delays another run's validation by at most one job per busy worker, not by its whole backlog.
import { afterAll, describe, expect, it } from 'vitest';
import { createSchemaPool } from '../src/internal/schema-pool.js';

// One worker, so the order in which jobs resolve is the order in which they were served (a long
// job limit: on a starved machine a slow job must not end by time and blur the order).
const pool = createSchemaPool({ timeoutMs: 60_000, maxWorkers: 1, maxHeapMb: 96, idleMs: 10_000 });
afterAll(async () => {
  await pool.close();
});

const SCHEMA = JSON.stringify({ type: 'object', required: ['v'] });

describe('schema worker fairness', () => {
  it("a bystander run's validation is served next turn, not after a hostile run's backlog", async () => {
    const hostileRun = {};
    const bystanderRun = {};
    const order: string[] = [];
    const jobs = Array.from({ length: 8 }, (_, i) =>
      pool.run(SCHEMA, '{"v":1}', hostileRun).then((r) => {
        order.push(`hostile-${i}`);
        return r;
      }),
    );
    const bystander = pool.run(SCHEMA, '{"w":1}', bystanderRun).then((r) => {
      order.push('bystander');
      return r;
    });
    const results = await Promise.all([...jobs, bystander]);
    expect(results.slice(0, 8).every((r) => r.ok)).toBe(true);
    expect(results[8]).toMatchObject({ ok: false, stage: 'validate' });
    // The first hostile job was already running; the bystander takes the next turn after the one
    // the hostile run queued first (FIFO would put it last, at index 8).
    expect(order.indexOf('bystander')).toBeLessThanOrEqual(2);
  }, 180_000);
});
