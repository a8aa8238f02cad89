// `wf run` and `wf resume` through the real bin: results, --json shapes, exit codes, bad input with
// clear messages, and Ctrl-C recorded as `stopped` then resumed from the journal.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  demoCapsule,
  json,
  type Project,
  startWf,
  tempProject,
  waitForOutput,
  wf,
} from './helpers/wf-cli.js';

let p: Project;
let capsule: string;

beforeAll(async () => {
  p = tempProject();
  capsule = p.file('angles.workflow.json', demoCapsule());
}, 240_000);

afterAll(() => p?.cleanup());

const runsDir = () => join(p.dir, '.dsh', 'workflow-runs');
const recordedRuns = () =>
  existsSync(runsDir()) ? readdirSync(runsDir()).filter((n) => n.startsWith('run-')) : [];

describe('wf run', () => {
  it('runs a capsule on simulated agents, says no model is called, prints the result and run id', async () => {
    const r = await wf(
      ['run', './angles.workflow.json', '--args', '{"question":"why?"}', '--delay-ms', '0'],
      p,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('simulated agents: no model is called');
    // Not a TTY: plain progress lines on stderr.
    expect(r.stderr).toMatch(/agent task-1 scope started \(phase angles\)/);
    expect(r.stderr).toMatch(/workflow completed/);
    expect(r.stdout).toMatch(/^Result:\nsynthesis: simulated synthesis result/m);
    const id = /run (run-[\w-]+) completed/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    expect(recordedRuns()).toContain(id);
    expect(r.stdout).toContain(`wf report ${id}`);
  });

  it('--json prints one document: status, result, cost, simulated, the run directory', async () => {
    const r = await wf(
      [
        'run',
        capsule,
        '--args',
        '{"question":"json?","angles":["a","b","c"]}',
        '--delay-ms',
        '0',
        '--json',
      ],
      p,
    );
    expect(r.code).toBe(0);
    const doc = json(r);
    expect(doc).toMatchObject({
      ok: true,
      workflow: 'angles-demo',
      status: 'completed',
      agents: 'simulated',
      modelCalled: false,
      exitCode: 0,
      result: { angles: 3 },
      cost: { agentsStarted: 4, agentsCompleted: 4 },
    });
    expect(String((doc.result as { synthesis: string }).synthesis)).toContain('synthesis');
    expect(doc.runDir).toBe(join(p.dir, '.dsh', 'workflow-runs', String(doc.runId)));
    // --json suppresses the progress; stderr stays quiet.
    expect(r.stderr).toBe('');
  });

  it('uses the capsule example when no --args is given, and says so', async () => {
    const r = await wf(['run', capsule, '--delay-ms', '0'], p);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "no --args given: using the first example from angles-demo's capsule",
    );
  });

  it('is deterministic for a seed', async () => {
    const a = json(await wf(['run', capsule, '--seed', '7', '--delay-ms', '0', '--json'], p));
    const b = json(await wf(['run', capsule, '--seed', '7', '--delay-ms', '0', '--json'], p));
    expect(a.result).toEqual(b.result);
    expect(a.runId).not.toBe(b.runId);
  });

  it('runs a bare .js source with the default manifest', async () => {
    p.file(
      'tiny.workflow.js',
      "async function run(wf, args) {\n  const r = await wf.runAgent({ name: 'solo', prompt: 'say hi', readOnly: true });\n  return { text: r ? r.finalText : 'none' };\n}\n",
    );
    const r = await wf(['run', 'tiny.workflow.js', '--delay-ms', '0', '--json'], p);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({ ok: true, workflow: 'tiny', status: 'completed' });
  });

  it('exits 1 when the workflow fails, with the engine error', async () => {
    p.file(
      'boom.workflow.json',
      demoCapsule({
        name: 'boom',
        source:
          "async function run(wf, args) {\n  throw new Error('the angle list was empty');\n}\n",
      }),
    );
    const r = await wf(['run', './boom.workflow.json', '--delay-ms', '0'], p);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: WF_\w+: .*the angle list was empty/);
    expect(r.stdout).toMatch(/run run-[\w-]+ failed/);
    const j = json(await wf(['run', './boom.workflow.json', '--delay-ms', '0', '--json'], p));
    expect(j).toMatchObject({ ok: false, status: 'failed', exitCode: 1 });
  });

  it('a guest error names its line:column and shows the source line with a caret', async () => {
    p.file(
      'typo.workflow.js',
      'async function run(wf, args) {\n  const r = await wf.runAgent({ name: "a", prompt: "p" });\n  return r.finalText.bar.baz;\n}\n',
    );
    const r = await wf(['run', './typo.workflow.js', '--delay-ms', '0'], p);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "error: WF_SANDBOX_GUEST_ERROR: line 3:25: TypeError: cannot read property 'baz' of undefined",
    );
    expect(r.stderr).toContain(
      ['> 3 |   return r.finalText.bar.baz;', '    |                         ^', '  4 | }'].join(
        '\n',
      ),
    );
  });

  it('exits 2 for source that breaks the contract, records no run; nothing escapes', async () => {
    p.file(
      'hostile.workflow.js',
      "async function run(wf, args) {\n  return require('fs').readFileSync('/etc/passwd', 'utf8');\n}\n",
    );
    const before = recordedRuns().length;
    const r = await wf(['run', './hostile.workflow.js', '--json'], p);
    expect(r.code).toBe(2);
    const doc = json(r);
    expect(doc).toMatchObject({
      ok: false,
      exitCode: 2,
      error: { code: 'WF_CLI_WORKFLOW_INVALID' },
    });
    expect(JSON.stringify(doc.error)).toMatch(/require/);
    expect(JSON.stringify(doc)).not.toContain('root:x:0');
    expect(recordedRuns().length).toBe(before);
  });

  it('a file that cannot be a workflow exits 2 and records no run: empty, not UTF-8, a syntax error, no run(), a FIFO, a device', async () => {
    p.file('empty.workflow.js', '');
    p.file('syntax.workflow.js', 'async function run(wf, args) { return ; ; ) }\n');
    p.file('norun.workflow.js', 'const x = 1;\n');
    writeFileSync(join(p.dir, 'latin1.workflow.js'), Buffer.from([0x2f, 0x2f, 0xe9, 0x0a]));
    writeFileSync(
      join(p.dir, 'args-latin1.json'),
      Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]),
    );
    execFileSync('mkfifo', [join(p.dir, 'pipe.workflow.js')]);
    const before = recordedRuns().length;
    for (const [file, message] of [
      [
        'empty.workflow.js',
        /cannot run: it breaks the workflow source contract: .*WF_SOURCE_SHAPE/,
      ],
      ['syntax.workflow.js', /cannot run: .*WF_SOURCE_SYNTAX/],
      ['norun.workflow.js', /cannot run: .*WF_SOURCE_SHAPE/],
      ['latin1.workflow.js', /latin1\.workflow\.js is not valid UTF-8 text/],
      ['pipe.workflow.js', /pipe\.workflow\.js is a FIFO \(named pipe\), not a file/],
      ['/dev/zero', /\/dev\/zero is a character device, not a file/],
      ['.dsh', /\.\/\.dsh is a directory, not a file/],
    ] as const) {
      const target = file.startsWith('/') ? file : `./${file}`;
      const r = await wf(['run', target, '--json'], p);
      expect(r.code, file).toBe(2);
      const doc = json(r) as { error: { code: string; message: string } };
      expect(doc.error.code, file).toBe('WF_CLI_WORKFLOW_INVALID');
      expect(doc.error.message, file).toMatch(message);
    }
    const args = await wf(
      ['run', 'angles.workflow.json', '--args-file', 'args-latin1.json', '--json'],
      p,
    );
    expect(args.code).toBe(2);
    expect(json(args)).toMatchObject({
      error: {
        code: 'WF_CLI_ARGS_JSON',
        message: '--args-file args-latin1.json is not valid UTF-8 text',
      },
    });
    expect(recordedRuns().length).toBe(before);
  });
});

describe('wf run: bad input gets a clear message and exit code', () => {
  const cases: { name: string; args: string[]; code: number; error: string; message: RegExp }[] = [
    {
      name: 'an unknown workflow',
      args: ['run', 'no-such-flow'],
      code: 3,
      error: 'WF_CLI_WORKFLOW_NOT_FOUND',
      message: /no workflow named "no-such-flow"/,
    },
    {
      name: 'a missing file',
      args: ['run', './missing.workflow.json'],
      code: 3,
      error: 'WF_CLI_WORKFLOW_NOT_FOUND',
      message: /no workflow file at \.\/missing\.workflow\.json/,
    },
    {
      name: 'invalid JSON args',
      args: ['run', 'angles.workflow.json', '--args', '{question: 1}'],
      code: 2,
      error: 'WF_CLI_ARGS_JSON',
      message: /--args is not valid JSON: .*position 1/,
    },
    {
      name: 'args failing the input schema',
      args: ['run', 'angles.workflow.json', '--args', '{"question": 5, "extra": true}'],
      code: 2,
      error: 'WF_CLI_ARGS_INVALID',
      message: /args for angles-demo do not match its input schema: .*question: .*string/,
    },
    {
      name: 'a missing args file',
      args: ['run', 'angles.workflow.json', '--args-file', 'nope.json'],
      code: 2,
      error: 'WF_CLI_ARGS_JSON',
      message: /--args-file nope\.json: cannot read it \(no such file\)/,
    },
    {
      name: '--args with --args-file',
      args: ['run', 'angles.workflow.json', '--args', '{}', '--args-file', 'x.json'],
      code: 2,
      error: 'WF_CLI_USAGE',
      message: /give --args or --args-file, not both/,
    },
    {
      name: 'a model provider',
      args: ['run', 'angles.workflow.json', '--agents', 'dsh'],
      code: 2,
      error: 'WF_CLI_AGENTS_UNSUPPORTED',
      message: /simulated agents only/,
    },
    {
      name: 'a bad seed',
      args: ['run', 'angles.workflow.json', '--seed', 'abc'],
      code: 2,
      error: 'WF_CLI_USAGE',
      message: /--seed must be an integer/,
    },
    {
      name: 'a trusted-local module by path',
      args: ['run', './mod.mjs'],
      code: 2,
      error: 'WF_CLI_TRUST_REQUIRED',
      message: /trusted-local module/,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: exit ${c.code}, ${c.error}`, async () => {
      p.file('mod.mjs', 'export async function run() {}\n');
      const before = recordedRuns().length;
      const human = await wf(c.args, p);
      expect(human.code).toBe(c.code);
      expect(human.stderr).toContain(`wf run: ${c.error}: `);
      expect(human.stderr).toMatch(c.message);
      expect(human.stderr).toMatch(/\n {2}hint: \S/);
      const machine = await wf([...c.args, '--json'], p);
      expect(machine.code).toBe(c.code);
      expect(json(machine)).toMatchObject({
        ok: false,
        exitCode: c.code,
        error: { code: c.error },
      });
      // Preflight refused it: nothing was recorded.
      expect(recordedRuns().length).toBe(before);
    });
  }

  it('an invalid capsule names every problem with its path', async () => {
    const broken = {
      ...demoCapsule(),
      version: 2,
      extra: 1,
      manifest: { ...demoCapsule().manifest, maxConcurrency: 99 },
    };
    p.file('broken.workflow.json', broken);
    const r = await wf(['run', './broken.workflow.json', '--json'], p);
    expect(r.code).toBe(2);
    const doc = json(r) as {
      error: { code: string; message: string; details: { path: string }[] };
    };
    expect(doc.error.code).toBe('WF_CLI_WORKFLOW_INVALID');
    const paths = doc.error.details.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['version', 'extra', 'manifest.maxConcurrency']));
    p.file('garbled.workflow.json', '{"format": "dsh.workflow", ');
    const g = await wf(['run', './garbled.workflow.json'], p);
    expect(g.code).toBe(2);
    expect(g.stderr).toMatch(/garbled\.workflow\.json is not valid JSON/);
  });

  it('an unknown flag is a usage error (exit 2), also under --json', async () => {
    const r = await wf(['run', 'angles.workflow.json', '--frobnicate'], p);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--frobnicate'/);
    const j = await wf(['run', 'angles.workflow.json', '--frobnicate', '--json'], p);
    expect(j.code).toBe(2);
    expect(json(j)).toMatchObject({ ok: false, error: { code: 'WF_CLI_USAGE' } });
  });
});

describe('trusted-local catalog modules', () => {
  it('are refused without --trust-local (and not imported), and run once confirmed', async () => {
    const catalog = join(p.dir, '.dsh', 'workflows');
    mkdirSync(catalog, { recursive: true });
    const marker = join(p.dir, 'imported.marker');
    writeFileSync(
      join(catalog, 'local-flow.mjs'),
      `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(marker)}, 'imported');
export const manifest = { name: 'local-flow', description: 'a trusted-local module', phases: ['main'], readOnly: true, maxAgents: 2, maxConcurrency: 1, patterns: ['classify-and-act'] };
export async function run(wf, args) {
  const r = await wf.runAgent({ name: 'local', prompt: 'work locally', readOnly: true });
  return { text: r ? r.finalText : null };
}
`,
    );
    const listed = json(await wf(['list', '--json'], p)) as {
      workflows: { name: string; trust: string }[];
    };
    expect(listed.workflows.find((w) => w.name === 'local-flow')?.trust).toBe('trusted-local');
    const refused = await wf(['run', 'local-flow'], p);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('WF_CLI_TRUST_REQUIRED');
    expect(refused.stderr).toContain('--trust-local');
    // Invariant 10: listing and refusing never imported it.
    expect(existsSync(marker)).toBe(false);
    const ran = await wf(['run', 'local-flow', '--trust-local', '--delay-ms', '0', '--json'], p);
    expect(ran.code).toBe(0);
    expect(json(ran)).toMatchObject({
      status: 'completed',
      workflow: 'local-flow',
      cost: { agentsStarted: 1 },
    });
    expect(existsSync(marker)).toBe(true);
  });
});

describe('Ctrl-C and resume', () => {
  it('SIGINT mid-run stops the children, records the run stopped, exits 130; resume finishes it', {
    timeout: 90_000,
  }, async () => {
    const child = startWf(
      ['run', capsule, '--args', '{"question":"slow"}', '--delay-ms', '8000', '--seed', '3'],
      p,
    );
    const done = collect(child, 60_000);
    // Interrupt once every angle child is running.
    await waitForOutput(
      child,
      'stderr',
      (t) => (t.match(/agent task-\d \w+ started/g) ?? []).length >= 4,
    );
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Ctrl-C: stopping run');
    expect(r.stderr).toMatch(/agent task-1 scope stopped/);
    const id = /run (run-[\w-]+) stopped/.exec(r.stdout)?.[1] as string;
    expect(id).toBeDefined();

    const shown = json(await wf(['show', id, '--json'], p)) as {
      run: { status: string; active: boolean; error: { code: string; message: string } };
      agents: { outcome: string }[];
    };
    expect(shown.run.status).toBe('stopped');
    expect(shown.run.active).toBe(false);
    expect(shown.run.error.message).toContain('SIGINT');
    expect(shown.agents.length).toBeGreaterThanOrEqual(4);
    expect(shown.agents.every((a) => a.outcome !== 'running')).toBe(true);

    const resumed = await wf(['resume', id, '--delay-ms', '0', '--json'], p);
    expect(resumed.code).toBe(0);
    const doc = json(resumed) as {
      status: string;
      resumedFromRunId: string;
      result: { angles: number };
    };
    expect(doc).toMatchObject({ status: 'completed', resumedFromRunId: id, result: { angles: 4 } });
  });

  it('resume refuses unknown runs (3) and explains', async () => {
    const r = await wf(['resume', 'run-does-not-exist'], p);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('WF_CLI_RUN_NOT_FOUND');
  });
});
