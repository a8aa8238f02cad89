// Cost guards through the real `wf` bin: the cost-guard flags (--token-budget, --child-wall-ms) with
// the 80% warning line in the live view, and a capsule's environment requirement (git-repo)
// checked on the real project directory, with and without `git init`.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCapsule, json, type Project, tempProject, wf } from './helpers/wf-cli.js';

let p: Project;

beforeAll(async () => {
  p = tempProject();
  p.file('angles.workflow.json', demoCapsule());
  p.file('needs-repo.workflow.json', {
    ...demoCapsule({ name: 'needs-repo' }),
    requires: { environment: ['git-repo'] },
  });
}, 240_000);

afterAll(() => p?.cleanup());

const ARGS = ['--args', '{"question":"why?"}', '--delay-ms', '0'];

describe('wf run cost guards', () => {
  it('--token-budget: the live view prints one warning line at 80% of the budget', async () => {
    const free = json(await wf(['run', './angles.workflow.json', ...ARGS, '--json'], p));
    const total = (free.cost as { tokenUsage: { totalTokens: number } }).tokenUsage.totalTokens;
    expect(total).toBeGreaterThan(0);
    const budget = Math.ceil(total * 1.1);
    const r = await wf(
      ['run', './angles.workflow.json', ...ARGS, '--token-budget', String(budget)],
      p,
    );
    expect(r.code).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning: token budget'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`of the run's token budget of ${budget} tokens spent`);
    // without the flag the CLI sets no budget (simulated agents spend nothing)
    const plain = await wf(['run', './angles.workflow.json', ...ARGS], p);
    expect(plain.stderr).not.toContain('warning:');
  });

  it('--child-wall-ms stops a slow child; bad values are usage errors', async () => {
    const r = await wf(
      [
        'run',
        './angles.workflow.json',
        '--args',
        '{"question":"slow?","angles":["one"]}',
        '--delay-ms',
        '5000',
        '--child-wall-ms',
        '200',
        '--json',
      ],
      p,
    );
    const doc = json(r) as { status: string; error?: { message: string } };
    // the one angle was stopped by the limit (parallel -> null); so was the synthesis child, and
    // wf.synthesize fails the run naming the per-child limit
    expect(doc.status).toBe('failed');
    expect(doc.error?.message).toContain('per-child wall limit of 200 ms');
    const bad = await wf(['run', './angles.workflow.json', ...ARGS, '--wall-ms', 'soon'], p);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--wall-ms must be an integer');
  });
});

describe('wf run requires', () => {
  it('environment git-repo: refused outside a repository, runs after `git init`', async () => {
    const refused = await wf(['run', './needs-repo.workflow.json', ...ARGS, '--json'], p);
    expect(refused.code).not.toBe(0);
    expect(JSON.stringify(json(refused))).toContain('WF_ENGINE_REQUIRES_GIT_REPO');
    execFileSync('git', ['init', '-q', p.dir]);
    const ok = await wf(['run', './needs-repo.workflow.json', ...ARGS, '--json'], p);
    expect(ok.code).toBe(0);
    expect(json(ok).status).toBe('completed');
  });
});
