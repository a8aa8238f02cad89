// CPU attacks next to innocent runs (invariant 6): busy loops, microtask storms, many busy lanes and
// catastrophic regexes are stopped by their own CPU limits (slice or per-run budget, both in CPU
// time) while innocent runs on the same worker keep their exact results within 3x of the latency
// that identical innocent runs on a control sandbox show at the same moment.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareWithControl, expectedValue, expectUndisturbed, logRatios } from './bystander.js';
import { corpusCapabilities, loadCorpus } from './corpus.js';

const corpus = new Map(loadCorpus().map((p) => [p.name, p]));

const LIMITS = { wallMs: 60_000, cpuSliceMs: 300 };
let sb: Sandbox;
let control: Sandbox;
beforeAll(async () => {
  // One worker: the hostile run and every innocent run share it. The control sandbox has its own
  // worker and only innocent runs: it measures undisturbed latency under the same machine load.
  [sb, control] = await Promise.all([
    createSandbox({ poolSize: 1, limits: LIMITS }),
    createSandbox({ poolSize: 1, limits: LIMITS }),
  ]);
});
afterAll(async () => {
  await Promise.all([sb.close(), control.close()]);
});

describe('CPU attacks do not starve innocent runs', () => {
  it.each([
    'cpu-sync-loop',
    'cpu-microtask-loop',
    'cpu-storm-after-settle',
    'cpu-lanes-busy',
    'cpu-redos',
  ])(
    '%s: innocents keep results and stay within 3x of a control',
    async (name) => {
      const p = corpus.get(name);
      if (p === undefined) throw new Error(`no fixture ${name}`);
      const expected = await Promise.all([0, 1, 2, 3].map((id) => expectedValue(control, id)));
      const r = await compareWithControl(sb, control, () =>
        sb.run({
          source: p.source,
          capabilities: corpusCapabilities(p.caps),
          limits: { cpuMs: 1000, ...p.limits },
          seed: 7,
        }),
      );
      logRatios(name, r);
      for (const round of r.rounds) {
        expect(p.expect, JSON.stringify(round.hostile)).toContain(round.hostile.status);
        // Charged to its own run: stopped by its own CPU limits, counted in CPU time.
        if (round.hostile.status === 'timeout')
          expect(round.hostile.stats.cpuMs).toBeGreaterThanOrEqual(LIMITS.cpuSliceMs);
      }
      expectUndisturbed(r, expected);
    },
    600_000,
  );
});
