// No bystander loss (issue 11): a run that can only be stopped by ending its worker thread
// (builtins that never reach an interrupt poll) takes no other run with it. Innocent runs that
// shared the worker continue on a fresh one from what they had received, and their results are
// identical to an undisturbed run; WF_SANDBOX_WORKER_LOST never reaches them.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bystanderBound,
  expectedValue,
  logRatios,
  soloLatency,
  withBystanders,
} from './bystander.js';
import { loadCorpus } from './corpus.js';

const corpus = new Map(loadCorpus().map((p) => [p.name, p]));
const source = (name: string) => {
  const p = corpus.get(name);
  if (p === undefined) throw new Error(`no fixture ${name}`);
  return p.source;
};

let sb: Sandbox;
beforeAll(async () => {
  // One worker: every innocent run shares the hostile run's thread.
  sb = await createSandbox({ poolSize: 1, limits: { wallMs: 20_000, cpuSliceMs: 200 } });
});
afterAll(async () => {
  await sb.close();
});

describe('a worker ended for one run loses no other run', () => {
  it.each(['cpu-indexof-huge', 'cpu-copywithin-huge', 'cpu-json-dag'])(
    '%s: innocents on the same worker finish with identical results within 3x solo',
    async (name) => {
      const ids = [0, 1, 2, 3];
      const expected = await Promise.all(ids.map((id) => expectedValue(sb, id)));
      const solo = await soloLatency(sb);
      const r = await withBystanders(sb, () =>
        sb.run({ source: source(name), capabilities: {}, seed: 7 }),
      );
      expect(['timeout', 'memory']).toContain(r.hostile.status);
      for (const [id, o] of r.innocents.entries()) {
        expect(o.status, JSON.stringify(o)).toBe('completed');
        expect(o.status === 'completed' && JSON.stringify(o.value)).toBe(expected[id]);
      }
      logRatios(name, solo, r.latencies);
      for (const ms of r.latencies) expect(ms).toBeLessThanOrEqual(bystanderBound(solo));
      // The hostile run really ended its worker: the innocents finished on another one.
      expect(new Set(r.innocents.map((o) => o.stats.workerId)).has(r.hostile.stats.workerId)).toBe(
        false,
      );
    },
    60_000,
  );

  it('keeps at-most-once capability calls across the replay', async () => {
    const seen: number[] = [];
    const counting = {
      wait: (x: unknown) =>
        new Promise((resolve) => {
          seen.push(Number(x));
          setTimeout(() => resolve(x), 10);
        }),
    };
    const innocentRun = sb.run({
      source:
        'async function run(api) { let s = 0; for (let i = 0; i < 40; i++) s += await api.wait(i); return s; }',
      capabilities: counting,
    });
    await new Promise((r) => setTimeout(r, 100));
    const hostile = await sb.run({ source: source('cpu-indexof-huge'), capabilities: {} });
    expect(hostile.status).toBe('timeout');
    const o = await innocentRun;
    expect(o).toMatchObject({ status: 'completed', value: 780 });
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
});
