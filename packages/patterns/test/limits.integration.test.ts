// Args cannot push a pattern past its manifest: oversized counts are clamped so the run uses at
// most maxAgents children, and a deployment tighter than the manifest still bounds concurrency.
// Every shipped capsule also passes the engine's smoke run on its examples.
import { smokeRun } from '@wf/engine';
import { describe, expect, it } from 'vitest';
import {
  fanOutAndSynthesize,
  generateAndFilter,
  loopUntilDone,
  parallelInvestigation,
  SHIPPED_WORKFLOWS,
  tournament,
} from '../src/index.js';
import {
  expectParallel,
  expectWithinManifest,
  named,
  runPattern,
  useSharedSandbox,
} from './helpers/run-pattern.js';

const sandbox = useSharedSandbox();

describe('args beyond the caps', () => {
  it('parallel-investigation: maxAgents and maxConcurrency from args never exceed the manifest', async () => {
    const targets = Array.from({ length: 12 }, (_, i) => `angle ${i + 1}`);
    const run = await runPattern(
      parallelInvestigation,
      { question: 'q', targets, maxAgents: 100, maxConcurrency: 100 },
      { delayMs: 40 },
    );
    expectWithinManifest(parallelInvestigation, run, {
      phases: ['investigate', 'synthesize'],
      agents: 8,
    });
    expectParallel(run, 4);
    expect(
      (run.result.findings as { status: string }[]).filter((f) => f.status === 'skipped'),
    ).toHaveLength(5);
  });

  it('loop-until-done: maxRounds 1000 runs five rounds', async () => {
    const run = await runPattern(
      loopUntilDone,
      { request: 'q', maxRounds: 1000 },
      {
        respond: (r) =>
          r.name.startsWith('round-')
            ? { structured: { findings: [{ title: r.name, detail: 'new' }] } }
            : undefined,
      },
    );
    expectWithinManifest(loopUntilDone, run, { phases: ['iterate', 'synthesize'], agents: 6 });
    expect(run.result).toMatchObject({ stopReason: 'round-cap' });
  });

  it('generate-and-filter and tournament: counts are clamped to their lens and stance lists', async () => {
    const gen = await runPattern(generateAndFilter, {
      request: 'q',
      generators: 50,
      ideasPerGenerator: 99,
      keep: 99,
    });
    expectWithinManifest(generateAndFilter, gen, {
      phases: ['generate', 'filter', 'synthesize'],
      agents: 7,
    });
    expect(named(gen, /^generator-/)).toHaveLength(5);
    const t = await runPattern(tournament, { request: 'q', contestants: 40 });
    // 4 contestants and 6 pairs: exactly the manifest's maxAgents.
    expectWithinManifest(tournament, t, { phases: ['compete', 'judge'], agents: 10 });
  });

  it('a deployment with a lower concurrency still bounds the pattern', async () => {
    const run = await runPattern(
      fanOutAndSynthesize,
      { request: 'q' },
      { delayMs: 40, limits: { maxConcurrency: 2 } },
    );
    expectWithinManifest(fanOutAndSynthesize, run, {
      phases: ['fan-out', 'synthesize'],
      agents: 5,
    });
    expectParallel(run, 2);
  });
});

describe('provider capabilities', () => {
  it('a read-only pattern on a provider without a tool filter is refused before any child starts', async () => {
    const run = await runPattern(
      fanOutAndSynthesize,
      { request: 'q' },
      { capabilities: { toolFilter: false } },
    );
    expect(run.done.status).toBe('failed');
    expect(run.done.error?.code).toBe('WF_ENGINE_CAPABILITY_MISSING');
    expect(run.stats.started).toBe(0);
  });

  it('a structured-output pattern on a provider without outputSchema is refused before any child starts', async () => {
    const run = await runPattern(
      loopUntilDone,
      { request: 'q' },
      { capabilities: { outputSchema: false } },
    );
    expect(run.done.status).toBe('failed');
    expect(run.done.error?.code).toBe('WF_ENGINE_CAPABILITY_MISSING');
    expect(run.done.error?.message).toContain('round-1');
    expect(run.stats.started).toBe(0);
  });
});

describe('smoke runs', () => {
  for (const capsule of SHIPPED_WORKFLOWS) {
    // Examples that name packet files need those files in a workspace; the built-ins test covers them.
    const examples = (capsule.inputs?.examples ?? []).filter(
      (e) => !(typeof e === 'object' && e !== null && 'packetFiles' in e),
    );
    it(`${capsule.manifest.name} passes the engine's smoke run on each example`, async () => {
      expect(examples.length).toBeGreaterThan(0);
      for (const args of examples) {
        const smoke = await smokeRun(capsule, { args, sandbox: sandbox() });
        expect(smoke.problems).toEqual([]);
        expect(smoke.ok).toBe(true);
        expect(smoke.stats.started).toBeLessThanOrEqual(capsule.manifest.maxAgents);
      }
    });
  }
});
