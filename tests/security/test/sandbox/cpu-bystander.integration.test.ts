// CPU attacks next to innocent runs (issue 11): busy loops, microtask storms, many busy lanes and
// catastrophic regexes are stopped by their own CPU limits (slice or per-run budget, both in CPU
// time) while innocent runs on the same worker keep their exact results within 3x of their
// undisturbed latency.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bystanderBound,
  expectedValue,
  logRatios,
  soloLatency,
  withBystanders,
} from './bystander.js';
import { corpusCapabilities, loadCorpus } from './corpus.js';

const corpus = new Map(loadCorpus().map((p) => [p.name, p]));

let sb: Sandbox;
beforeAll(async () => {
  // One worker: the hostile run and every innocent run share it.
  sb = await createSandbox({ poolSize: 1, limits: { wallMs: 30_000, cpuSliceMs: 300 } });
});
afterAll(async () => {
  await sb.close();
});

describe('CPU attacks do not starve innocent runs', () => {
  it.each([
    'cpu-sync-loop',
    'cpu-microtask-loop',
    'cpu-storm-after-settle',
    'cpu-lanes-busy',
    'cpu-redos',
  ])(
    '%s: innocents keep results and stay within 3x solo',
    async (name) => {
      const p = corpus.get(name);
      if (p === undefined) throw new Error(`no fixture ${name}`);
      const ids = [0, 1, 2, 3];
      const expected = await Promise.all(ids.map((id) => expectedValue(sb, id)));
      const solo = await soloLatency(sb);
      const r = await withBystanders(sb, () =>
        sb.run({
          source: p.source,
          capabilities: corpusCapabilities(p.caps),
          limits: { cpuMs: 1000, ...p.limits },
          seed: 7,
        }),
      );
      expect(p.expect, JSON.stringify(r.hostile)).toContain(r.hostile.status);
      for (const [id, o] of r.innocents.entries()) {
        expect(o.status, JSON.stringify(o)).toBe('completed');
        expect(o.status === 'completed' && JSON.stringify(o.value)).toBe(expected[id]);
      }
      logRatios(name, solo, r.latencies);
      for (const ms of r.latencies) expect(ms).toBeLessThanOrEqual(bystanderBound(solo));
    },
    90_000,
  );
});
