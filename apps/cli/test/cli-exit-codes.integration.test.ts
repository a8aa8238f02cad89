// The one table of exit codes, run: every WF_CLI_* code (CLI_EXIT_CODES, which docs/cli.md's table
// is generated from) gets a command line that produces it through the real bin, and must exit
// with the code the table gives it and name it under --json. The disk-full codes need a small
// tmpfs (root, as in CI); WF_CLI_INTERNAL (a bug) is produced in-process.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliContext, runVerb } from '../src/cli/context.js';
import { CLI_EXIT_CODES, type CliErrorCode, EXIT } from '../src/cli/errors.js';
import {
  collect,
  demoCapsule,
  json,
  type Project,
  startWf,
  tempProject,
  type WfResult,
  wf,
} from './helpers/wf-cli.js';
import { type SmallDisk, smallDisk } from './helpers/tmpfs.js';

let p: Project;
let done: string; // a completed run
let disk: SmallDisk;
let full: Project;

const runsDir = (project: Project) => join(project.dir, '.dsh', 'workflow-runs');
const runJson = (runId: string) => join(runsDir(p), runId, 'run.json');

/** A copy of the completed run under another id, its run.json patched. */
function copyRun(runId: string, patch: (json: Record<string, unknown>) => void): string {
  cpSync(join(runsDir(p), done), join(runsDir(p), runId), { recursive: true });
  const snap = JSON.parse(readFileSync(runJson(runId), 'utf8')) as Record<string, unknown>;
  const patched = { ...snap, runId };
  patch(patched);
  writeFileSync(runJson(runId), JSON.stringify(patched));
  return runId;
}

beforeAll(async () => {
  p = tempProject();
  p.file('angles.workflow.json', demoCapsule());
  p.file('boom.workflow.js', "async function run(wf, args) {\n  throw new Error('boom');\n}\n");
  p.file('bad.workflow.js', "import fs from 'node:fs';\nasync function run(wf) { return 1; }\n");
  p.file('local.mjs', 'export async function run() { return 1; }\n');
  p.file('big.workflow.js', "async function run(wf, args) {\n  return 'x'.repeat(200000);\n}\n");
  execFileSync('mkfifo', [join(p.dir, 'fifo.js')]);
  const first = await wf(['run', './angles.workflow.json', '--delay-ms', '0', '--json'], p);
  done = json(first).runId as string;
  // A run that looks live: owned by this (living) test process, its lease fresh.
  copyRun('run-live', (j) => {
    j.status = 'running';
    j.owner = { pid: process.pid, token: 't', host: hostname(), leaseUntil: Date.now() + 600_000 };
  });
  copyRun('run-damaged', (j) => {
    j.workflow = 42;
  });
  copyRun('run-nostart', () => undefined);
  rmSync(join(runsDir(p), 'run-nostart', 'start.json'));
  copyRun('run-real', () => undefined);
  const start = join(runsDir(p), 'run-real', 'start.json');
  const record = JSON.parse(readFileSync(start, 'utf8')) as Record<string, unknown>;
  writeFileSync(start, JSON.stringify({ ...record, provider: 'dsh:spawn', simulated: false }));
  disk = smallDisk(join(p.dir, '..', 'small'), 1024 * 1024);
  if (disk.mounted) {
    full = tempProject();
    // The project on the small disk, the catalog home beside it as usual.
    rmSync(full.dir, { recursive: true });
    cpSync(p.dir, join(disk.path, 'project'), {
      recursive: true,
      filter: (src) => !src.includes('.dsh') && !src.endsWith('fifo.js'),
    });
    Object.assign(full, { dir: join(disk.path, 'project') });
  }
}, 240_000);

afterAll(async () => {
  await disk?.unmount();
  full?.cleanup();
  p?.cleanup();
});

interface Case {
  readonly code: CliErrorCode | 'workflow failed';
  readonly args: readonly string[];
  /** Runs on the small disk, with about this many bytes free. */
  readonly free?: number;
}

const CASES: readonly Case[] = [
  { code: 'workflow failed', args: ['run', './boom.workflow.js', '--delay-ms', '0'] },
  { code: 'WF_CLI_CHECK_FAILED', args: ['check', 'bad.workflow.js'] },
  { code: 'WF_CLI_SMOKE_FAILED', args: ['check', '--smoke', 'boom.workflow.js'] },
  { code: 'WF_CLI_USAGE', args: ['show'] },
  { code: 'WF_CLI_ARGS_JSON', args: ['run', 'fan-out-and-synthesize', '--args', '{'] },
  {
    code: 'WF_CLI_ARGS_INVALID',
    args: ['run', './angles.workflow.json', '--args', '{"nope":1}'],
  },
  { code: 'WF_CLI_WORKFLOW_INVALID', args: ['run', './fifo.js'] },
  { code: 'WF_CLI_AGENTS_UNSUPPORTED', args: ['run', 'fan-out-and-synthesize', '--agents', 'dsh'] },
  { code: 'WF_CLI_TRUST_REQUIRED', args: ['run', './local.mjs'] },
  { code: 'WF_CLI_WORKFLOW_NOT_FOUND', args: ['run', 'no-such-workflow'] },
  { code: 'WF_CLI_RUN_NOT_FOUND', args: ['show', 'run-no-such'] },
  { code: 'WF_CLI_RUN_ACTIVE', args: ['delete-run', 'run-live'] },
  { code: 'WF_CLI_NAME_TAKEN', args: ['save', 'run-damaged', 'fan-out-and-synthesize'] },
  { code: 'WF_CLI_NOT_RESUMABLE', args: ['resume', 'run-nostart'] },
  { code: 'WF_CLI_RESUME_PROVIDER_MISMATCH', args: ['resume', 'run-real'] },
  { code: 'WF_CLI_RUN_CORRUPT', args: ['show', 'run-damaged'] },
  {
    // Port 1 on loopback: nothing listens, so the server is unreachable at once.
    code: 'WF_CLI_ENGINE_UNAVAILABLE',
    args: [
      'run',
      'fan-out-and-synthesize',
      '--engine',
      'restate',
      '--restate',
      'http://127.0.0.1:1',
    ],
  },
  { code: 'WF_CLI_STORAGE_FAILED', args: ['run', 'fan-out-and-synthesize'], free: 0 },
  {
    code: 'WF_CLI_RUN_UNRECORDED',
    args: ['run', './big.workflow.js', '--delay-ms', '0'],
    free: 64 * 1024,
  },
];

function expectCase(c: Case, r: WfResult): void {
  const label = `${c.args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  const exit = c.code === 'workflow failed' ? EXIT.failed : CLI_EXIT_CODES[c.code];
  expect(r.code, label).toBe(exit);
  const doc = json(r) as { exitCode?: number; error?: { code?: string } };
  expect(doc.exitCode, label).toBe(exit);
  if (c.code !== 'workflow failed') expect(doc.error?.code, label).toBe(c.code);
}

describe('every documented exit code, produced', () => {
  it('each CLI code (but the bug code, in-process below) has a case', () => {
    const covered = new Set<string>(CASES.map((c) => c.code));
    for (const code of Object.keys(CLI_EXIT_CODES))
      if (code !== 'WF_CLI_INTERNAL' && code !== 'WF_CLI_INTERRUPTED')
        expect(covered.has(code), code).toBe(true);
  });

  it('exits as the table says, naming the code under --json', async () => {
    const cases = CASES.filter((c) => c.free === undefined);
    const before = new Set(readdirSync(runsDir(p)));
    // Two at a time: each is its own process.
    for (let i = 0; i < cases.length; i += 2) {
      const pair = cases.slice(i, i + 2);
      const results = await Promise.all(pair.map((c) => wf([...c.args, '--json'], p)));
      for (const [j, c] of pair.entries()) expectCase(c, results[j] as WfResult);
    }
    // Nothing refused (input, a conflict, a damaged record) recorded a run: the one new run is
    // the workflow that failed.
    const added = readdirSync(runsDir(p)).filter((n) => !before.has(n));
    expect(added).toHaveLength(1);
  }, 120_000);

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'exits 6 when the disk is full, as the table says',
    async () => {
      expect(disk.mounted).toBe(true);
      for (const c of CASES.filter((x) => x.free !== undefined)) {
        disk.fill(c.free as number);
        try {
          expectCase(c, await wf([...c.args, '--json'], full));
        } finally {
          disk.release();
        }
      }
    },
    120_000,
  );

  it('130: Ctrl-C stops the run, recorded stopped', async () => {
    const child = startWf(['run', './angles.workflow.json', '--delay-ms', '3000', '--json'], p);
    const before = new Set(readdirSync(runsDir(p)));
    while (!readdirSync(runsDir(p)).some((n) => !before.has(n) && n.startsWith('run-')))
      await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    const r = await collect(child);
    expect(r.code).toBe(EXIT.interrupted);
    expect(json(r)).toMatchObject({
      exitCode: EXIT.interrupted,
      error: { code: 'WF_CLI_INTERRUPTED' },
    });
  }, 60_000);

  it('70: anything but a CliError is a bug, WF_CLI_INTERNAL', async () => {
    const out: string[] = [];
    const ctx: CliContext = {
      verb: 'test',
      cwd: p.dir,
      env: {},
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: () => true },
      json: true,
    };
    const code = await runVerb(ctx, async () => {
      throw new TypeError('x is not a function');
    });
    process.exitCode = 0;
    expect(code).toBe(EXIT.internal);
    expect(JSON.parse(out.join(''))).toMatchObject({
      exitCode: EXIT.internal,
      error: { code: 'WF_CLI_INTERNAL' },
    });
  });
});
