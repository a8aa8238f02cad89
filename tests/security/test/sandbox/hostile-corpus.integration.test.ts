// The sandbox alone contains every program of the hostile corpus, run with the static contract
// bypassed (invariant 4): each ends in an allowed outcome status within its wall limit plus a
// small grace, never crashes or wedges the host, leaks no host path or Node version, and leaves
// the host's Object.prototype untouched.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_LIMITS, corpusCapabilities, hostLeaks, loadCorpus } from './corpus.js';

const corpus = loadCorpus();
const protoSnapshot = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
/** Teardown grace on top of wallMs: abort grace + watchdog slack + scheduling on busy cores. */
const GRACE_MS = 5000;

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ poolSize: 2, limits: CORPUS_LIMITS });
});
afterAll(async () => {
  await sb.close();
});

// The per-test timeout covers the longest wall backstop (50 s, memory fixtures) plus GRACE_MS.
describe('hostile corpus', { timeout: 90_000 }, () => {
  it('has at least 60 programs, each with a header', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
  });

  it.each(corpus.map((p) => [p.name, p] as const))('%s is contained', async (_name, program) => {
    const limits = { ...CORPUS_LIMITS, ...program.limits };
    const started = performance.now();
    const outcome = await sb.run({
      source: program.source,
      capabilities: corpusCapabilities(program.caps),
      limits,
      seed: 7,
      startTime: 1_000_000_000_000,
    });
    const elapsed = performance.now() - started;
    expect(
      program.expect,
      `${program.name} (${program.attack}) ended ${JSON.stringify(outcome)}`,
    ).toContain(outcome.status);
    expect(elapsed).toBeLessThan((limits.wallMs ?? 1500) + GRACE_MS);
    const text =
      JSON.stringify(outcome.status === 'completed' ? outcome.value : outcome.error) ?? '';
    expect(text).not.toContain('ESCAPED');
    expect(hostLeaks(text), text).toEqual([]);
    if (outcome.status === 'completed' && program.value !== undefined) {
      expect(JSON.stringify(outcome.value) ?? 'undefined').toMatch(program.value);
    }
    expect(Object.getOwnPropertyNames(Object.prototype).sort().join(',')).toBe(protoSnapshot);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('still serves ordinary runs after the whole corpus', async () => {
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        sb.run({
          source: `async function run(api) { return await api.echo(${i}); }`,
          capabilities: corpusCapabilities(['echo']),
        }),
      ),
    );
    expect(runs.map((o) => (o.status === 'completed' ? o.value : o.status))).toEqual([0, 1, 2, 3]);
  });
});
