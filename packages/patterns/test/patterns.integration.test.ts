// The six patterns end to end through the real engine and QuickJS sandbox with simulated agents:
// phases in order, agent count and concurrency within the manifest, failure injection giving a
// degraded but useful result, and the result shape the README documents.
import { describe, expect, it } from 'vitest';
import {
  adversarialVerification,
  classifyAndAct,
  fanOutAndSynthesize,
  generateAndFilter,
  loopUntilDone,
  tournament,
} from '../src/index.js';
import {
  expectParallel,
  expectWithinManifest,
  named,
  runPattern,
  useSharedSandbox,
  synthesisEvidence,
} from './helpers/run-pattern.js';

const keys = (value: unknown) => Object.keys(value as object).sort();
const fail = { fail: 'upstream timeout' } as const;

useSharedSandbox();

describe('classify-and-act', () => {
  const phases = ['classify', 'act', 'synthesize'];

  it('routes by the classifier label and cites the classification', async () => {
    const run = await runPattern(
      classifyAndAct,
      { request: 'Move the config loader to TOML', context: 'packages/config' },
      {
        respond: (r) =>
          r.name === 'classifier'
            ? {
                structured: {
                  label: 'migration',
                  confidence: 0.9,
                  rationale: 'moves data between formats',
                },
              }
            : r.name === 'migration-worker'
              ? { text: '1. add a TOML reader 2. dual-read 3. remove JSON' }
              : undefined,
      },
    );
    expectWithinManifest(classifyAndAct, run, { phases, agents: 3 });
    expect(run.stats.peakActive).toBe(1);
    const [classifier] = named(run, /^classifier$/);
    expect(classifier).toMatchObject({ modelHint: 'fast', phase: 'classify' });
    expect(classifier?.outputSchema).toBeDefined();
    const [worker] = named(run, /-worker$/);
    expect(worker).toMatchObject({
      name: 'migration-worker',
      modelHint: 'deep',
      phase: 'act',
      evidenceRefs: ['task_id:task-1'],
    });
    expect(worker?.prompt).toContain('Plan the migration without performing it');
    expect(worker?.prompt).toContain('Context: packages/config');
    expect(run.result).toMatchObject({
      label: 'migration',
      classification: { label: 'migration', confidence: 0.9, taskId: 'task-1', fallback: false },
      work: { taskId: 'task-2', text: '1. add a TOML reader 2. dual-read 3. remove JSON' },
      degraded: false,
      failures: [],
    });
    expect(keys(run.result)).toEqual([
      'classification',
      'degraded',
      'failures',
      'label',
      'summary',
      'work',
    ]);
    expect(run.result.summary).toMatch(/^synthesis: simulated synthesis result/);
    expect(synthesisEvidence(run)).toMatchObject({
      label: 'migration',
      work: expect.stringContaining('dual-read'),
    });
  });

  it('falls back to the default label when the classifier fails, and says why', async () => {
    const run = await runPattern(
      classifyAndAct,
      { request: 'What does the cache do?' },
      {
        respond: (r) => (r.name === 'classifier' ? fail : undefined),
      },
    );
    expectWithinManifest(classifyAndAct, run, { phases, agents: 3 });
    expect(run.result).toMatchObject({
      label: 'research',
      classification: { fallback: true, taskId: null },
      degraded: true,
      failures: [
        { name: 'classifier', taskId: 'task-1', reason: 'SIMULATED_FAILURE: upstream timeout' },
      ],
    });
    // A failed classification is not cited as evidence.
    expect(named(run, /-worker$/)[0]?.evidenceRefs).toBeUndefined();
  });

  it('still answers when the worker and then the synthesis fail', async () => {
    const workerDown = await runPattern(
      classifyAndAct,
      { request: 'Why is CI red?' },
      {
        respond: (r) => (r.name.endsWith('-worker') ? fail : undefined),
      },
    );
    expectWithinManifest(classifyAndAct, workerDown, { phases, agents: 3 });
    expect(workerDown.result).toMatchObject({ work: null, degraded: true });
    expect(synthesisEvidence(workerDown)).toMatchObject({
      work: null,
      note: expect.stringContaining('failed'),
    });

    const synthDown = await runPattern(
      classifyAndAct,
      { request: 'Why is CI red?' },
      {
        respond: (r) =>
          r.kind === 'synthesis'
            ? fail
            : r.name.endsWith('-worker')
              ? { text: 'flaky test in a.ts' }
              : undefined,
      },
    );
    expectWithinManifest(classifyAndAct, synthDown, { phases, agents: 3 });
    expect(synthDown.result.summary).toBe('research result (not synthesized):\nflaky test in a.ts');
    expect(synthDown.result.failures).toEqual([
      { name: 'synthesis', taskId: null, reason: expect.stringContaining('upstream timeout') },
    ]);
  });
});

describe('fan-out-and-synthesize', () => {
  const phases = ['fan-out', 'synthesize'];

  it('runs the default angles in parallel (risk on the deep tier) and merges them', async () => {
    const run = await runPattern(
      fanOutAndSynthesize,
      { request: 'Adopt an ORM?' },
      { delayMs: 40 },
    );
    expectWithinManifest(fanOutAndSynthesize, run, { phases, agents: 5 });
    expectParallel(run, 4);
    expect(named(run, /^angle-/).map((r) => [r.name, r.modelHint])).toEqual([
      ['angle-scope', 'balanced'],
      ['angle-evidence', 'balanced'],
      ['angle-risk', 'deep'],
      ['angle-recommendation', 'balanced'],
    ]);
    const result = run.result as { angles: { angle: string; status: string }[] };
    expect(keys(result)).toEqual(['angles', 'degraded', 'failures', 'summary']);
    expect(result.angles.map((a) => [a.angle, a.status])).toEqual([
      ['scope', 'completed'],
      ['evidence', 'completed'],
      ['risk', 'completed'],
      ['recommendation', 'completed'],
    ]);
    expect((synthesisEvidence(run) as { angles: unknown[] }).angles).toHaveLength(4);
  });

  it('caps custom angles at five and synthesizes what survives failures', async () => {
    const run = await runPattern(
      fanOutAndSynthesize,
      {
        request: 'Split the monolith?',
        angles: ['a', 'b', 'c', 'd', 'e', 'f', 'a'],
        deepAngles: ['e'],
      },
      { respond: (r) => (r.name === 'angle-b' || r.name === 'angle-d' ? fail : undefined) },
    );
    expectWithinManifest(fanOutAndSynthesize, run, { phases, agents: 6 });
    expect(named(run, /^angle-e$/)[0]?.modelHint).toBe('deep');
    expect(run.result).toMatchObject({
      degraded: true,
      angles: [
        { angle: 'a', status: 'completed' },
        { angle: 'b', status: 'failed', reason: 'SIMULATED_FAILURE: upstream timeout' },
        { angle: 'c', status: 'completed' },
        { angle: 'd', status: 'failed' },
        { angle: 'e', status: 'completed' },
      ],
    });
    expect(synthesisEvidence(run)).toMatchObject({ missingAngles: ['b', 'd'] });
    expect(
      run.events.some(
        (e) => e.type === 'workflow-log' && String(e.data.message).includes('first 5 angles'),
      ),
    ).toBe(true);
  });

  it('skips the synthesis when every angle failed and says so', async () => {
    const run = await runPattern(fanOutAndSynthesize, { request: 'x' }, { respond: () => fail });
    expectWithinManifest(fanOutAndSynthesize, run, { phases, agents: 4 });
    expect(run.result.summary).toBe(
      'No angle produced a result (4 failed), so there is nothing to synthesize.',
    );
    expect(run.result.failures).toHaveLength(4);
  });
});

describe('adversarial-verification', () => {
  const phases = ['candidate', 'verify', 'synthesize'];
  const falsified = {
    verdict: 'partly-holds',
    objections: [
      { claim: 'writes are atomic', problem: 'two writers race on rename', severity: 'major' },
    ],
    caveats: ['only checked on Linux'],
  };

  it('falsifies the candidate and corrects it with caveats', async () => {
    const run = await runPattern(
      adversarialVerification,
      { request: 'Is the cache safe?', criteria: ['cite code'] },
      {
        respond: (r) =>
          r.name === 'candidate'
            ? { text: 'Yes: writes are atomic.' }
            : r.name === 'falsifier'
              ? { structured: falsified }
              : undefined,
      },
    );
    expectWithinManifest(adversarialVerification, run, { phases, agents: 3 });
    const [verifier] = named(run, /^falsifier$/);
    expect(verifier).toMatchObject({ modelHint: 'deep', evidenceRefs: ['task_id:task-1'] });
    expect(verifier?.prompt).toContain('Yes: writes are atomic.');
    expect(run.result).toMatchObject({
      verified: true,
      verdict: 'partly-holds',
      candidate: { taskId: 'task-1', text: 'Yes: writes are atomic.' },
      verification: { taskId: 'task-2', ...falsified },
      caveats: ['only checked on Linux'],
      degraded: false,
    });
    expect(keys(run.result)).toEqual([
      'candidate',
      'caveats',
      'degraded',
      'failures',
      'summary',
      'verdict',
      'verification',
      'verified',
    ]);
    expect(synthesisEvidence(run)).toMatchObject({
      objections: falsified.objections,
      verdict: 'partly-holds',
    });
  });

  it('marks the answer unverified when the verifier fails', async () => {
    const run = await runPattern(
      adversarialVerification,
      { request: 'q' },
      {
        respond: (r) => (r.name === 'falsifier' ? fail : undefined),
      },
    );
    expectWithinManifest(adversarialVerification, run, { phases, agents: 3 });
    expect(run.result).toMatchObject({
      verified: false,
      verdict: 'unverified',
      verification: null,
      caveats: ['The answer was not independently verified: the verifier failed.'],
      degraded: true,
    });
  });

  it('skips verification without a candidate and still answers, unverified', async () => {
    const run = await runPattern(
      adversarialVerification,
      { request: 'q' },
      {
        respond: (r) => (r.name === 'candidate' ? fail : undefined),
      },
    );
    expectWithinManifest(adversarialVerification, run, { phases, agents: 2 });
    expect(run.result).toMatchObject({ candidate: null, verified: false, degraded: true });
    expect(run.result.caveats).toEqual([
      'No candidate answer was produced, so nothing was verified.',
    ]);
    expect(typeof run.result.summary).toBe('string');
  });
});

describe('generate-and-filter', () => {
  const phases = ['generate', 'filter', 'synthesize'];
  const ideasFor = (lens: string) => ({
    structured: {
      ideas: [
        { title: `${lens} cache`, description: `cache from the ${lens} lens` },
        { title: 'Parallel tests', description: 'shard the suite' },
      ],
    },
  });

  it('generates, lets the filter dedupe and rank by real ids, and develops the strongest', async () => {
    const run = await runPattern(
      generateAndFilter,
      { request: 'Halve CI time', generators: 3, ideasPerGenerator: 2, keep: 2 },
      {
        delayMs: 40,
        respond: (r) => {
          if (r.name.startsWith('generator-')) return ideasFor(r.name.slice('generator-'.length));
          if (r.name === 'filter') {
            return {
              structured: {
                // I1..I6 in generator order; I4 and I6 repeat I2; I9 does not exist.
                ranked: [
                  { id: 'I5', score: 9, reason: 'biggest win' },
                  { id: 'I2', score: 8, reason: 'cheap' },
                  { id: 'I1', score: 8, reason: 'solid' },
                  { id: 'I9', score: 10, reason: 'made up' },
                  { id: 'I3', score: 2, reason: 'meh' },
                ],
                duplicates: [
                  { id: 'I4', duplicateOf: 'I2' },
                  { id: 'I6', duplicateOf: 'I2' },
                ],
              },
            };
          }
          return undefined;
        },
      },
    );
    expectWithinManifest(generateAndFilter, run, { phases, agents: 5 });
    expectParallel(run, 3);
    expect(named(run, /^filter$/)[0]?.prompt).toContain(
      'I6 [ambitious] Parallel tests: shard the suite',
    );
    expect(run.result).toMatchObject({
      generated: 6,
      duplicatesRemoved: 2,
      rankedBy: 'filter',
      degraded: false,
      ideas: [
        { id: 'I5', title: 'ambitious cache', score: 9, generator: 'ambitious' },
        // A tie keeps generation order: I1 before I2.
        { id: 'I1', title: 'conventional cache', score: 8 },
      ],
    });
    expect(keys(run.result)).toEqual([
      'degraded',
      'duplicatesRemoved',
      'failures',
      'generated',
      'ideas',
      'rankedBy',
      'summary',
    ]);
    expect((synthesisEvidence(run) as { strongest: unknown[] }).strongest).toHaveLength(2);
  });

  it('falls back to a local dedupe when the filter fails, and survives a failed generator', async () => {
    const run = await runPattern(
      generateAndFilter,
      { request: 'Halve CI time' },
      {
        respond: (r) =>
          r.name === 'filter' || r.name === 'generator-minimal'
            ? fail
            : r.name.startsWith('generator-')
              ? ideasFor(r.name.slice('generator-'.length))
              : undefined,
      },
    );
    expectWithinManifest(generateAndFilter, run, { phases, agents: 6 });
    expect(run.result).toMatchObject({
      generated: 6,
      duplicatesRemoved: 2,
      rankedBy: 'fallback',
      degraded: true,
    });
    expect((run.result.failures as { name: string }[]).map((f) => f.name).sort()).toEqual([
      'filter',
      'generator-minimal',
    ]);
    expect((run.result.ideas as { title: string }[]).map((i) => i.title)).toEqual([
      'conventional cache',
      'Parallel tests',
      'ambitious cache',
    ]);
  });
});

describe('tournament', () => {
  const phases = ['compete', 'judge'];
  // Judges prefer inventive, then conservative, then risk-first, whatever side they are shown on.
  const preference = ['inventive', 'conservative', 'risk-first', 'pragmatic'];
  const judge = (prompt: string) => {
    const a = /Answer A:\nanswer from (\S+)/.exec(prompt)?.[1] as string;
    const b = /Answer B:\nanswer from (\S+)/.exec(prompt)?.[1] as string;
    return preference.indexOf(a) < preference.indexOf(b) ? 'A' : 'B';
  };

  it('judges every pair head to head and ranks by points', async () => {
    const run = await runPattern(
      tournament,
      { request: 'Roll out the storage engine' },
      {
        delayMs: 40,
        respond: (r) =>
          r.name.startsWith('contestant-')
            ? { text: `answer from ${r.name.slice('contestant-'.length)}` }
            : r.name.startsWith('judge-')
              ? { structured: { winner: judge(r.prompt), reason: 'clearer plan' } }
              : undefined,
      },
    );
    expectWithinManifest(tournament, run, { phases, agents: 6 });
    expectParallel(run, 3);
    expect(named(run, /^contestant-risk-first$/)[0]?.modelHint).toBe('deep');
    // Position alternates: the second pair is shown in reverse order.
    expect(named(run, /^judge-/).map((r) => r.name)).toEqual([
      'judge-conservative-vs-inventive',
      'judge-risk-first-vs-conservative',
      'judge-inventive-vs-risk-first',
    ]);
    expect(run.result).toMatchObject({
      winner: { stance: 'inventive', text: 'answer from inventive' },
      standings: [
        { stance: 'inventive', points: 2, wins: 2, losses: 0 },
        { stance: 'conservative', points: 1, wins: 1, losses: 1 },
        { stance: 'risk-first', points: 0, wins: 0, losses: 2 },
      ],
      degraded: false,
    });
    expect(run.result.matches).toHaveLength(3);
    expect(String(run.result.summary)).toMatch(
      /^Winner: inventive \(points: inventive 2, conservative 1, risk-first 0\)/,
    );
    expect(keys(run.result)).toEqual([
      'degraded',
      'failures',
      'matches',
      'standings',
      'summary',
      'winner',
    ]);
  });

  it('plays on without a failed contestant and counts an unjudged match as no result', async () => {
    const run = await runPattern(
      tournament,
      { request: 'q', contestants: 4 },
      {
        respond: (r) =>
          r.name === 'contestant-pragmatic'
            ? fail
            : r.name === 'judge-conservative-vs-inventive'
              ? fail
              : r.name.startsWith('judge-')
                ? { structured: { winner: 'tie', reason: 'equal' } }
                : undefined,
      },
    );
    // 4 contestants, one fails: 3 pairs among the other three.
    expectWithinManifest(tournament, run, { phases, agents: 7 });
    const matches = run.result.matches as { status: string }[];
    expect(matches.map((m) => m.status)).toEqual(['unjudged', 'judged', 'judged']);
    expect(run.result).toMatchObject({ degraded: true, winner: { stance: 'risk-first' } });
    expect((run.result.failures as { name: string }[]).map((f) => f.name)).toEqual([
      'contestant-pragmatic',
      'judge-conservative-vs-inventive',
    ]);
  });
});

describe('loop-until-done', () => {
  const phases = ['iterate', 'synthesize'];
  const round = (...titles: string[]) => ({
    structured: { findings: titles.map((title) => ({ title, detail: `${title} detail` })) },
  });

  it('stops at the first round with no new findings and synthesizes the convergence', async () => {
    const scripted: Record<string, ReturnType<typeof round>> = {
      'round-1': round('env read in config.ts', 'env read in cli.ts'),
      'round-2': round('Env read in CLI.ts!', 'env read in boot.ts'),
      'round-3': round('env read in boot.ts'),
    };
    const run = await runPattern(
      loopUntilDone,
      { request: 'Find direct process.env reads' },
      {
        respond: (r) => scripted[r.name],
      },
    );
    expectWithinManifest(loopUntilDone, run, { phases, agents: 4 });
    expect(named(run, /^round-2$/)[0]?.prompt).toContain(
      'Already found:\n- env read in config.ts\n- env read in cli.ts',
    );
    expect(run.result).toMatchObject({
      stopReason: 'no-new-findings',
      converged: true,
      degraded: false,
      rounds: [
        { round: 1, status: 'completed', newFindings: 2 },
        { round: 2, status: 'completed', newFindings: 1 },
        { round: 3, status: 'completed', newFindings: 0 },
      ],
    });
    expect(
      (run.result.findings as { title: string; round: number }[]).map((f) => [f.title, f.round]),
    ).toEqual([
      ['env read in config.ts', 1],
      ['env read in cli.ts', 1],
      ['env read in boot.ts', 2],
    ]);
    expect(keys(run.result)).toEqual([
      'converged',
      'degraded',
      'failures',
      'findings',
      'rounds',
      'stopReason',
      'summary',
    ]);
    expect(run.events.filter((e) => e.type === 'workflow-log')).toHaveLength(3);
  });

  it('stops at the round cap', async () => {
    const run = await runPattern(
      loopUntilDone,
      { request: 'q', maxRounds: 2 },
      {
        respond: (r) => (r.name.startsWith('round-') ? round(`finding of ${r.name}`) : undefined),
      },
    );
    expectWithinManifest(loopUntilDone, run, { phases, agents: 3 });
    expect(run.result).toMatchObject({ stopReason: 'round-cap', converged: false });
  });

  it('stops on a failed round, keeps what earlier rounds found, and still synthesizes', async () => {
    const run = await runPattern(
      loopUntilDone,
      { request: 'q' },
      {
        respond: (r) =>
          r.name === 'round-2' ? fail : r.name === 'round-1' ? round('one') : undefined,
      },
    );
    expectWithinManifest(loopUntilDone, run, { phases, agents: 3 });
    expect(run.result).toMatchObject({
      stopReason: 'round-failed',
      degraded: true,
      findings: [{ title: 'one', round: 1 }],
      rounds: [
        { round: 1, status: 'completed' },
        { round: 2, status: 'failed', reason: 'SIMULATED_FAILURE: upstream timeout' },
      ],
    });
    expect(synthesisEvidence(run)).toMatchObject({ stopReason: 'round-failed' });
  });
});
