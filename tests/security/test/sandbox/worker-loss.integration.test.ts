// No bystander loss (invariant 6): a run that can only be stopped by ending its worker thread
// (builtins that never reach an interrupt poll) takes no other run with it. Innocent runs that
// shared the worker continue on a fresh one from what they had received, and their results are
// identical to an undisturbed run; WF_SANDBOX_WORKER_LOST never reaches them.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareWithControl, expectedValue, expectUndisturbed, logRatios } from './bystander.js';
import { loadCorpus } from './corpus.js';

const corpus = new Map(loadCorpus().map((p) => [p.name, p]));
const source = (name: string) => {
  const p = corpus.get(name);
  if (p === undefined) throw new Error(`no fixture ${name}`);
  return p.source;
};

const LIMITS = { wallMs: 60_000, cpuSliceMs: 200 };
let sb: Sandbox;
let control: Sandbox;
beforeAll(async () => {
  // One worker: every innocent run shares the hostile run's thread. The control sandbox (its own
  // worker, innocent runs only) measures undisturbed latency at the same moment.
  [sb, control] = await Promise.all([
    createSandbox({ poolSize: 1, limits: LIMITS }),
    createSandbox({ poolSize: 1, limits: LIMITS }),
  ]);
});
afterAll(async () => {
  await Promise.all([sb.close(), control.close()]);
});

describe('a worker ended for one run loses no other run', () => {
  it.each(['cpu-indexof-huge', 'cpu-copywithin-huge', 'cpu-json-dag'])(
    '%s: innocents on the same worker finish with identical results within 3x of a control',
    async (name) => {
      const expected = await Promise.all([0, 1, 2, 3].map((id) => expectedValue(control, id)));
      const r = await compareWithControl(sb, control, () =>
        sb.run({ source: source(name), capabilities: {}, seed: 7 }),
      );
      logRatios(name, r);
      expectUndisturbed(r, expected);
      for (const round of r.rounds) {
        expect(['timeout', 'memory']).toContain(round.hostile.status);
        // The hostile run really ended its worker: the innocents finished on another one.
        expect(
          new Set(round.innocents.map((o) => o.stats.workerId)).has(round.hostile.stats.workerId),
        ).toBe(false);
      }
    },
    600_000,
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
