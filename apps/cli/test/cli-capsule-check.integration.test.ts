// `wf check` on capsules through the real bin: full capsule validation (every issue with its
// path), examples and --args against the input schema, and --smoke runs on simulated agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCapsule, json, type Project, tempProject, wf } from './helpers/wf-cli.js';

let p: Project;

beforeAll(async () => {
  p = tempProject();
  p.file('good.workflow.json', demoCapsule());
  p.file('broken.workflow.json', {
    ...demoCapsule(),
    version: 2,
    surprise: true,
    manifest: { ...demoCapsule().manifest, maxConcurrency: 50 },
  });
  p.file('bad-example.workflow.json', {
    ...demoCapsule(),
    inputs: { description: 'x', examples: [{ question: 42 }] },
  });
  p.file(
    'throws.workflow.json',
    demoCapsule({
      name: 'throws',
      source:
        "async function run(wf, args) {\n  await wf.runAgent({ name: 'a', prompt: 'p', readOnly: true });\n  throw new Error('no findings to merge');\n}\n",
    }),
  );
}, 240_000);

afterAll(() => p?.cleanup());

describe('wf check on capsules', () => {
  it('lists every capsule issue with its path and exits 1', async () => {
    const r = await wf(['check', 'broken.workflow.json'], p);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^broken\.workflow\.json#version {2}WF_CLI_WORKFLOW_INVALID {2}\S/m);
    expect(r.stdout).toMatch(/^broken\.workflow\.json#surprise {2}WF_CLI_WORKFLOW_INVALID/m);
    expect(r.stdout).toMatch(
      /^broken\.workflow\.json#manifest\.maxConcurrency {2}WF_CLI_WORKFLOW_INVALID/m,
    );
    const doc = json(await wf(['check', 'broken.workflow.json', '--json'], p)) as {
      ok: boolean;
      files: { capsuleIssues: { path: string }[] }[];
    };
    expect(doc.ok).toBe(false);
    expect(doc.files[0]?.capsuleIssues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['version', 'surprise', 'manifest.maxConcurrency']),
    );
  });

  it('checks the capsule examples and --args against the input schema', async () => {
    const ex = await wf(['check', 'bad-example.workflow.json'], p);
    expect(ex.code).toBe(1);
    expect(ex.stdout).toMatch(
      /^bad-example\.workflow\.json#inputs\.examples\[0\] {2}WF_CLI_WORKFLOW_INVALID {2}.*question.*string/m,
    );
    const args = await wf(
      ['check', 'good.workflow.json', '--args', '{"question":"ok","extra":1}'],
      p,
    );
    expect(args.code).toBe(1);
    expect(args.stdout).toMatch(
      /^good\.workflow\.json#--args {2}WF_CLI_WORKFLOW_INVALID {2}.*extra/m,
    );
    const ok = await wf(['check', 'good.workflow.json', '--args', '{"question":"ok"}'], p);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('good.workflow.json: ok');
    const garbled = await wf(['check', 'good.workflow.json', '--args', '{nope'], p);
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toMatch(/WF_CLI_ARGS_JSON: --args is not valid JSON/);
  });

  it('--smoke runs clean workflows on instant simulated agents and reports failures', async () => {
    const good = await wf(['check', 'good.workflow.json', '--smoke'], p);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('good.workflow.json: smoke run completed (5 simulated agents)');
    const bad = await wf(['check', 'throws.workflow.json', '--smoke', '--json'], p);
    expect(bad.code).toBe(1);
    const doc = json(bad) as {
      files: { ok: boolean; smoke: { ok: boolean; status: string; problems: string[] } }[];
    };
    expect(doc.files[0]?.smoke).toMatchObject({ ok: false, status: 'failed' });
    expect(doc.files[0]?.smoke.problems.join(' ')).toContain('no findings to merge');
    const human = await wf(['check', 'throws.workflow.json', '--smoke'], p);
    expect(human.stdout).toMatch(
      /^throws\.workflow\.json {2}WF_CLI_SMOKE_FAILED {2}smoke run failed: .*no findings to merge/m,
    );
    // A workflow that fails the static checks is not smoke-run at all.
    const broken = json(await wf(['check', 'broken.workflow.json', '--smoke', '--json'], p)) as {
      files: { smoke?: unknown }[];
    };
    expect(broken.files[0]?.smoke).toBeUndefined();
  });
});
