// The two built-ins end to end through the real engine and QuickJS sandbox: parallel-investigation,
// and scoped-review on packets built from a real git diff (inline and read back with wf.readFile).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { AgentRequest } from '@wf/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildReviewPackets,
  parallelInvestigation,
  type ReviewPacket,
  scopedReview,
  writeReviewPackets,
} from '../src/index.js';
import { createGitRepo, type GitRepo } from './helpers/git-repo.js';
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

describe('parallel-investigation', () => {
  const phases = ['investigate', 'synthesize'];

  it('investigates the three default angles in parallel with structured findings', async () => {
    const run = await runPattern(
      parallelInvestigation,
      { question: 'How is maxConcurrency enforced?' },
      {
        delayMs: 40,
        respond: (r) =>
          r.name.startsWith('investigator-')
            ? {
                structured: {
                  finding: `finding of ${r.name}`,
                  evidence: [`src/${r.name}.ts:12`],
                  confidence: 'medium',
                },
              }
            : undefined,
      },
    );
    expectWithinManifest(parallelInvestigation, run, { phases, agents: 4 });
    expectParallel(run, 3);
    // The engine folds scopeSummary into the prompt as "Scope: ...".
    expect(named(run, /^investigator-/).map((r) => /^Scope: (.*)$/m.exec(r.prompt)?.[1])).toEqual([
      'structure: entry points, module boundaries and control flow',
      'edge cases: error handling and failure modes',
      'tests: validation and coverage',
    ]);
    expect(keys(run.result)).toEqual(['degraded', 'failures', 'findings', 'synthesis']);
    expect(run.result.degraded).toBe(false);
    expect(run.result.findings).toEqual([
      {
        angle: 'structure: entry points, module boundaries and control flow',
        status: 'completed',
        text: 'finding of investigator-1',
        evidence: ['src/investigator-1.ts:12'],
        confidence: 'medium',
        taskId: 'task-1',
      },
      expect.objectContaining({ status: 'completed', text: 'finding of investigator-2' }),
      expect.objectContaining({ status: 'completed', text: 'finding of investigator-3' }),
    ]);
    expect(String(run.result.synthesis)).toMatch(/^synthesis: simulated synthesis result/);
  });

  it('keeps to maxAgents and maxConcurrency from args and reports skipped angles', async () => {
    const targets = Array.from({ length: 9 }, (_, i) => `angle ${i + 1}`);
    const run = await runPattern(
      parallelInvestigation,
      {
        question: 'q',
        targets,
        maxAgents: 4,
        maxConcurrency: 2,
        rubric: 'One paragraph, plain words.',
      },
      { delayMs: 40 },
    );
    expectWithinManifest(parallelInvestigation, run, { phases, agents: 4 });
    expectParallel(run, 2);
    const findings = run.result.findings as { angle: string; status: string; text: string }[];
    expect(findings.map((f) => f.status)).toEqual([
      ...Array(3).fill('completed'),
      ...Array(6).fill('skipped'),
    ]);
    expect(findings[3]).toEqual({
      angle: 'angle 4',
      status: 'skipped',
      text: 'not investigated: over the cap of 4 agents',
    });
    expect(run.requests.find((r) => r.kind === 'synthesis')?.prompt).toContain(
      'One paragraph, plain words.',
    );
    expect(synthesisEvidence(run)).toMatchObject({ skippedAngles: targets.slice(3) });
  });

  it('degrades when an angle fails, naming it and why', async () => {
    const run = await runPattern(
      parallelInvestigation,
      { question: 'q' },
      {
        respond: (r) => (r.name === 'investigator-2' ? fail : undefined),
      },
    );
    expectWithinManifest(parallelInvestigation, run, { phases, agents: 4 });
    expect(run.result.degraded).toBe(true);
    expect((run.result.findings as unknown[])[1]).toEqual({
      angle: 'edge cases: error handling and failure modes',
      status: 'failed',
      text: '',
      reason: 'SIMULATED_FAILURE: upstream timeout',
    });
    expect(synthesisEvidence(run)).toMatchObject({
      failedAngles: ['edge cases: error handling and failure modes'],
    });
  });

  it('answers without a synthesis when every angle failed', async () => {
    const run = await runPattern(parallelInvestigation, { question: 'q' }, { respond: () => fail });
    expectWithinManifest(parallelInvestigation, run, { phases, agents: 3 });
    expect(run.result.synthesis).toBe(
      'No investigator returned a finding (3 failed); the question is unanswered.',
    );
  });
});

describe('scoped-review', () => {
  const phases = ['primary-review', 'verification', 'audit', 'final-synthesis'];
  let repo: GitRepo;
  let packets: readonly ReviewPacket[];
  let rangeId: string;
  let auth: ReviewPacket;
  let cache: ReviewPacket;
  let docs: ReviewPacket;

  beforeAll(() => {
    repo = createGitRepo();
    const body = (tag: string) =>
      Array.from({ length: 20 }, (_, i) => `const ${tag}${i} = ${i};`).join('\n') + '\n';
    repo.write('src/auth/session.ts', body('s'));
    repo.write('src/cache.ts', body('c'));
    repo.write('docs/guide.md', '# Guide\n\nOld text.\n');
    repo.commitAll('init');
    repo.write(
      'src/auth/session.ts',
      body('s').replace('const s2 = 2;', 'const s2 = token == input;'),
    );
    repo.write('src/cache.ts', body('c').replace('const c9 = 9;', 'const c9 = new Map();'));
    repo.write('docs/guide.md', '# Guide\n\nNew txet.\n');
    repo.git('add', '-A');
    const built = buildReviewPackets(repo.git('diff', '--cached'), { maxFilesPerPacket: 1 });
    if (!built.ok) throw new Error(built.error.message);
    packets = built.packets;
    rangeId = built.rangeId;
    const of = (path: string) => packets.find((p) => p.files[0]?.path === path) as ReviewPacket;
    auth = of('src/auth/session.ts');
    cache = of('src/cache.ts');
    docs = of('docs/guide.md');
  });
  afterAll(() => repo.cleanup());

  const finding = (
    file: string,
    line: number,
    severity: string,
    title: string,
    detail = `${title}.`,
  ) => ({
    file,
    line,
    severity,
    category: 'correctness',
    title,
    detail,
    suggestion: `fix ${title}`,
  });
  /** Finding ids by title, read from the verifier's prompt ("F-... | file:line | severity | title"). */
  const idsIn = (prompt: string) =>
    new Map(
      [...prompt.matchAll(/^(F-[0-9a-f]{16}) \| [^|]+ \| [a-z]+ \| (.+)$/gm)].map((m) => [
        m[2] as string,
        m[1] as string,
      ]),
    );

  const reviewers = (r: AgentRequest) => {
    if (r.name === `review-primary-${auth.id}`) {
      return {
        structured: {
          findings: [
            finding('src/auth/session.ts', 3, 'medium', 'Token compared with =='),
            finding('src/elsewhere.ts', 1, 'high', 'Outside the packet'),
          ],
          summary: 'one issue',
        },
      };
    }
    if (r.name === `review-deep-${auth.id}`) {
      return {
        structured: {
          findings: [
            finding(
              'src/auth/session.ts',
              3,
              'critical',
              'token compared with ==!',
              'Timing attack on the token.',
            ),
          ],
          summary: 'timing attack',
        },
      };
    }
    if (r.name === `review-primary-${cache.id}`) {
      return {
        structured: {
          findings: [
            finding('src/cache.ts', 10, 'high', 'Unbounded cache growth'),
            finding('src/cache.ts', 10, 'low', 'Naming of c9'),
          ],
          summary: 'two issues',
        },
      };
    }
    if (r.name === `review-primary-${docs.id}`) {
      return {
        structured: {
          findings: [finding('docs/guide.md', 3, 'info', 'Typo txet')],
          summary: 'typo',
        },
      };
    }
    return undefined;
  };

  const verifier = (r: AgentRequest) => {
    const ids = idsIn(r.prompt);
    return {
      structured: {
        dispositions: [
          {
            id: ids.get('token compared with ==!'),
            disposition: 'confirmed',
            reason: 'not remotely reachable',
            severity: 'high',
          },
          {
            id: ids.get('Unbounded cache growth'),
            disposition: 'refuted',
            reason: 'bounded by the LRU in put()',
          },
          {
            id: ids.get('Unbounded cache growth'),
            disposition: 'confirmed',
            reason: 'second opinion',
          },
          { id: ids.get('Naming of c9'), disposition: 'unresolved', reason: '', severity: 'info' },
          { id: 'F-0000000000000000', disposition: 'confirmed', reason: 'made up' },
        ],
      },
    };
  };

  it('merges, verifies with exactly one disposition each, writes the audit and synthesizes', async () => {
    const run = await runPattern(
      scopedReview,
      {
        packets,
        request: 'Harden session handling',
        requirements: ['no timing leaks'],
        testEvidence: 'all green',
      },
      { delayMs: 40, respond: (r) => (r.name === 'verifier-1' ? verifier(r) : reviewers(r)) },
    );
    // 3 primaries + 1 deep (the auth packet is high-risk) + 1 verifier + the synthesis.
    expectWithinManifest(scopedReview, run, { phases, agents: 6 });
    expectParallel(run, 4);
    const deep = named(run, /^review-deep-/);
    expect(deep.map((r) => [r.name, r.modelHint])).toEqual([[`review-deep-${auth.id}`, 'deep']]);
    const primary = named(run, new RegExp(`^review-primary-${auth.id}$`))[0] as AgentRequest;
    expect(primary.evidenceRefs).toEqual([`diff:${auth.id}`, 'file:src/auth/session.ts']);
    expect(primary.prompt).toContain(auth.diff);
    expect(primary.prompt).toContain('- no timing leaks');
    expect(primary.prompt).toContain('Test evidence supplied with the change:\nall green');

    const findings = run.result.findings as Record<string, unknown>[];
    expect(findings.map((f) => [f.title, f.severity, f.disposition])).toEqual([
      // Merged with the primary's report; the deep reviewer's critical (and its wording) won, then
      // the verifier regraded it with a reason. Sorted by final severity, then file and line.
      ['token compared with ==!', 'high', 'confirmed'],
      ['Unbounded cache growth', 'high', 'refuted'],
      ['Naming of c9', 'low', 'unresolved'],
      ['Typo txet', 'info', 'unresolved'],
    ]);
    const token = findings[0] as Record<string, unknown>;
    expect(token).toMatchObject({
      id: expect.stringMatching(/^F-[0-9a-f]{16}$/),
      file: 'src/auth/session.ts',
      line: 3,
      originalSeverity: 'critical',
      detail: 'Timing attack on the token.',
      dispositionReason: 'not remotely reachable',
      packetIds: [auth.id],
      reports: [
        { packetId: auth.id, role: 'primary', severity: 'medium', taskId: expect.any(String) },
        { packetId: auth.id, role: 'deep', severity: 'critical', taskId: expect.any(String) },
      ],
    });
    expect(findings[3]).toMatchObject({ dispositionReason: 'the verifier gave no disposition' });
    expect(findings[2]).not.toHaveProperty('originalSeverity');

    expect(run.result).toMatchObject({
      verdict: 'changes-requested',
      unqualifiedApprovalAllowed: false,
      counts: {
        total: 4,
        confirmed: 1,
        refuted: 1,
        unresolved: 2,
        bySeverity: { critical: 0, high: 1, medium: 0, low: 1, info: 0 },
      },
      coverage: { packets: 3, reviewed: 3, unreviewed: [], missingDeepReview: [], complete: true },
      audit: { name: 'scoped-review-audit' },
      degraded: false,
      failures: [],
    });
    expect(keys(run.result)).toEqual([
      'audit',
      'counts',
      'coverage',
      'degraded',
      'failures',
      'findings',
      'summary',
      'unqualifiedApprovalAllowed',
      'verdict',
    ]);

    const audit = run.recorded.artifacts.get('scoped-review-audit') as Record<string, unknown>;
    expect(run.events.filter((e) => e.type === 'artifact-written')).toHaveLength(1);
    expect(audit).toMatchObject({ rangeIds: [rangeId], verdict: 'changes-requested', findings });
    expect(audit.outOfScope).toEqual([
      expect.objectContaining({
        file: 'src/elsewhere.ts',
        title: 'Outside the packet',
        packetId: auth.id,
      }),
    ]);
    // Anomalies in the verifier's list first, then findings whose regrade came without a reason.
    expect((audit.verifierAnomalies as { kind: string }[]).map((a) => a.kind)).toEqual([
      'duplicate',
      'unknown-id',
      'severity-change-without-reason',
    ]);
    expect((audit.packets as { reviewers: unknown[] }[]).map((p) => p.reviewers.length)).toEqual(
      packets.map((p) => (p.id === auth.id ? 2 : 1)),
    );
    const evidence = synthesisEvidence(run) as { findings: { id: string }[]; refuted: number };
    expect(evidence.findings.map((f) => f.id)).toEqual([
      token.id,
      (findings[2] as { id: string }).id,
    ]);
    expect(evidence.refuted).toBe(1);
  });

  it('gives the same finding ids on every run', async () => {
    const respond = (r: AgentRequest) => (r.name === 'verifier-1' ? verifier(r) : reviewers(r));
    const a = await runPattern(scopedReview, { packets }, { respond });
    const b = await runPattern(scopedReview, { packets: [...packets].reverse() }, { respond });
    const ids = (run: typeof a) =>
      (run.result.findings as { id: string }[]).map((f) => f.id).sort();
    expect(ids(b)).toEqual(ids(a));
  });

  it('degrades on failed reviewers, verifier and synthesis, and never approves', async () => {
    const run = await runPattern(
      scopedReview,
      { packets },
      {
        respond: (r) =>
          r.name === `review-deep-${auth.id}` ||
          r.name === `review-primary-${cache.id}` ||
          r.name === 'verifier-1' ||
          r.kind === 'synthesis'
            ? fail
            : reviewers(r),
      },
    );
    expectWithinManifest(scopedReview, run, { phases, agents: 6 });
    expect(run.result).toMatchObject({
      verdict: 'inconclusive',
      unqualifiedApprovalAllowed: false,
      degraded: true,
      coverage: {
        reviewed: 2,
        unreviewed: [cache.id],
        missingDeepReview: [auth.id],
        complete: false,
      },
      counts: { total: 2, confirmed: 0, unresolved: 2 },
    });
    for (const f of run.result.findings as { dispositionReason: string }[]) {
      expect(f.dispositionReason).toBe('the verifier failed: SIMULATED_FAILURE: upstream timeout');
    }
    expect((run.result.failures as { name: string }[]).map((f) => f.name).sort()).toEqual(
      [
        'final-synthesis',
        `review-deep-${auth.id}`,
        `review-primary-${cache.id}`,
        'verifier-1',
      ].sort(),
    );
    expect(String(run.result.summary)).toMatch(
      /^Verdict: inconclusive \(the final synthesis failed; this summary is generated from the audit\)\.\n- \[medium, unresolved\] src\/auth\/session\.ts:3 Token compared with ==/,
    );
    expect(String(run.result.summary)).toContain(
      'Coverage gaps: 1 packet(s) unreviewed, 1 high-risk packet(s) without a deep review.',
    );
  });

  it('approves a clean change without qualification and runs no verifier', async () => {
    const run = await runPattern(
      scopedReview,
      { packets },
      {
        respond: (r) =>
          r.name.startsWith('review-')
            ? { structured: { findings: [], summary: 'fine' } }
            : undefined,
      },
    );
    expectWithinManifest(scopedReview, run, { phases, agents: 5 });
    expect(run.result).toMatchObject({
      verdict: 'approve',
      unqualifiedApprovalAllowed: true,
      degraded: false,
    });
    expect(named(run, /^verifier-/)).toEqual([]);
  });

  it('plans reviewers under maxReviewers, high-risk primaries first, and reports the rest', async () => {
    const run = await runPattern(
      scopedReview,
      { packets, maxReviewers: 2 },
      {
        respond: (r) =>
          r.name.startsWith('review-')
            ? { structured: { findings: [], summary: 'fine' } }
            : undefined,
      },
    );
    expectWithinManifest(scopedReview, run, { phases, agents: 3 });
    const reviewed = named(run, /^review-/).map((r) => r.name);
    expect(reviewed[0]).toBe(`review-primary-${auth.id}`);
    expect(run.result).toMatchObject({
      verdict: 'inconclusive',
      unqualifiedApprovalAllowed: false,
      degraded: true,
      coverage: { reviewed: 2, missingDeepReview: [auth.id], complete: false },
    });
    expect((run.result.coverage as { notPlanned: string[] }).notPlanned).toHaveLength(2);
  });

  it('verifies at most 90 findings in three parallel batches; the rest stay unresolved', async () => {
    const [one] = packets.filter((p) => p.id === cache.id);
    const many = Array.from({ length: 95 }, (_, i) =>
      finding('src/cache.ts', i + 1, i < 90 ? 'high' : 'low', `issue number ${i + 1}`),
    );
    const run = await runPattern(
      scopedReview,
      { packets: [one] },
      {
        delayMs: 40,
        respond: (r) => {
          if (r.name.startsWith('review-'))
            return { structured: { findings: many, summary: 'many' } };
          if (r.name.startsWith('verifier-')) {
            return {
              structured: {
                dispositions: [...idsIn(r.prompt).values()].map((id) => ({
                  id,
                  disposition: 'confirmed',
                  reason: 'seen',
                })),
              },
            };
          }
          return undefined;
        },
      },
    );
    expectWithinManifest(scopedReview, run, { phases, agents: 5 });
    expect(named(run, /^verifier-/)).toHaveLength(3);
    expectParallel(run, 3);
    const findings = run.result.findings as {
      severity: string;
      disposition: string;
      dispositionReason: string;
    }[];
    expect(findings.filter((f) => f.disposition === 'confirmed')).toHaveLength(90);
    const rest = findings.filter((f) => f.disposition !== 'confirmed');
    expect(rest.map((f) => [f.severity, f.disposition])).toEqual(
      Array(5).fill(['low', 'unresolved']),
    );
    expect(rest[0]?.dispositionReason).toBe('not verified: over the cap of 90 verified findings');
  });

  it('reads packets written by writeReviewPackets through wf.readFile, with the same result', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'wf-patterns-ws-'));
    try {
      // Where the plugin writes them; `.dsh/` is protected, so the run is given this subtree.
      const root = join(workspace, '.dsh', 'review-packets');
      const written = await writeReviewPackets(root, { rangeId, packets });
      const packetFiles = written.packets.map((p) => relative(workspace, p.path));
      const respond = (r: AgentRequest) => (r.name === 'verifier-1' ? verifier(r) : reviewers(r));
      const fromFiles = await runPattern(
        scopedReview,
        { packetFiles },
        { respond, workspace, readFileAllow: [root] },
      );
      expectWithinManifest(scopedReview, fromFiles, { phases, agents: 6 });
      const inline = await runPattern(scopedReview, { packets }, { respond });
      const strip = (fs: unknown) =>
        (fs as Record<string, unknown>[]).map(({ reports, verifiedBy, ...rest }) => rest);
      expect(strip(fromFiles.result.findings)).toEqual(strip(inline.result.findings));
      expect(fromFiles.result.verdict).toBe('changes-requested');
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  it('refuses a run without packets, and packets of the wrong shape, naming what is wrong', async () => {
    const empty = await runPattern(scopedReview, {});
    expect(empty.done.status).toBe('failed');
    expect(empty.done.error?.message).toContain(
      'scoped-review: give the change as args.packets or args.packetFiles',
    );
    expect(empty.stats.started).toBe(0);
    const bad = await runPattern(scopedReview, { packets: [{ id: 'pkt-1', diff: 3, files: [] }] });
    expect(bad.done.status).toBe('failed');
    expect(bad.done.error?.message).toMatch(/packets\[0\]\.diff/);
    expect(bad.stats.started).toBe(0);
  });
});
