// A bad day through the real bin: damaged stores, half-made runs, and (on a small tmpfs, as root)
// a full disk with crashed runs present and a catalog that cannot take its lock. Each case once
// failed: a crash of every listing on one wrong-typed field, "no run" for a listed run, exit 70 for
// a damaged start.json, a resume blaming changed source for an edited journal, every read failing
// on a full disk, a catalog that vanished after a failed save.
import { utimesSync } from 'node:fs';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmallDisk, smallDisk } from './helpers/tmpfs.js';
import {
  collect,
  FIVE_AGENTS,
  json,
  type Project,
  startWf,
  tempProject,
  wf,
} from './helpers/wf-cli.js';

let p: Project;
let done: string;

const runsDir = (project: Project) => join(project.dir, '.dsh', 'workflow-runs');
const runFile = (runId: string, file: string) => join(runsDir(p), runId, file);

/** A copy of the completed run under a new id (its run.json's runId updated). */
function copyRun(runId: string): string {
  cpSync(join(runsDir(p), done), join(runsDir(p), runId), { recursive: true });
  const snap = JSON.parse(readFileSync(runFile(runId, 'run.json'), 'utf8'));
  writeFileSync(runFile(runId, 'run.json'), JSON.stringify({ ...snap, runId }));
  return runId;
}

beforeAll(async () => {
  p = tempProject();
  p.file('five.workflow.js', FIVE_AGENTS);
  const r = await wf(['run', 'five.workflow.js', '--delay-ms', '0', '--json'], p);
  done = json(r).runId as string;
}, 240_000);
afterAll(() => p?.cleanup());

describe('damaged stores', () => {
  it('one wrong-typed field makes that run unreadable, naming file and field; the listing goes on', async () => {
    const bad = copyRun('run-typed');
    const snap = JSON.parse(readFileSync(runFile(bad, 'run.json'), 'utf8'));
    writeFileSync(runFile(bad, 'run.json'), JSON.stringify({ ...snap, workflow: 42 }));
    const listed = await wf(['runs', '--json'], p);
    expect(listed.code).toBe(0);
    const runs = (json(listed) as { runs: { runId: string; status: string; error?: unknown }[] })
      .runs;
    expect(runs.find((r) => r.runId === done)?.status).toBe('completed');
    expect(runs.find((r) => r.runId === bad)).toMatchObject({
      status: 'unreadable',
      error: {
        code: 'WF_CATALOG_RUN_CORRUPT',
        message: `${runFile(bad, 'run.json')}: field workflow must be a string`,
      },
    });
    expect((await wf(['runs'], p)).code).toBe(0);
    // Its event log is intact and still reads.
    expect((await wf(['events', bad], p)).code).toBe(0);
    for (const verb of ['show', 'report']) {
      const r = await wf([verb, bad, '--json'], p);
      expect(r.code, verb).toBe(5);
      expect(json(r), verb).toMatchObject({
        error: {
          code: 'WF_CLI_RUN_CORRUPT',
          message: expect.stringContaining('run.json: field workflow must be a string'),
        },
      });
    }
    expect((await wf(['delete-run', bad, '--json'], p)).code).toBe(5);
    expect((await wf(['delete-run', bad, '--force', '--json'], p)).code).toBe(0);
  });

  it('a missing events.jsonl is named, exit 5 (it was "no run", exit 3)', async () => {
    const bad = copyRun('run-noevents');
    rmSync(runFile(bad, 'events.jsonl'));
    for (const verb of ['show', 'events', 'report']) {
      const r = await wf([verb, bad, '--json'], p);
      expect(r.code, verb).toBe(5);
      expect((json(r) as { error: { message: string } }).error.message, verb).toContain(
        `${runFile(bad, 'events.jsonl')} is missing`,
      );
    }
  });

  it('a damaged start.json refuses the resume with exit 5, naming it (it was exit 70)', async () => {
    const bad = copyRun('run-badstart');
    writeFileSync(runFile(bad, 'start.json'), '{"runId": ');
    const r = await wf(['resume', bad, '--json'], p);
    expect(r.code).toBe(5);
    expect(json(r)).toMatchObject({
      error: {
        code: 'WF_CLI_RUN_CORRUPT',
        message: expect.stringContaining(`${runFile(bad, 'start.json')} cannot be read`),
      },
    });
  });

  it('an edited journal line: the resume names journal.jsonl, not only changed source', async () => {
    const bad = copyRun('run-edited');
    const lines = readFileSync(runFile(bad, 'journal.jsonl'), 'utf8').split('\n');
    const first = JSON.parse(lines[0] as string);
    lines[0] = JSON.stringify({ ...first, input: { ...first.input, prompt: 'edited' } });
    writeFileSync(runFile(bad, 'journal.jsonl'), lines.join('\n'));
    const r = await wf(['resume', bad, '--delay-ms', '0', '--json'], p);
    expect(r.code).toBe(1);
    expect(json(r)).toMatchObject({
      error: {
        code: 'WF_ENGINE_REPLAY_DIVERGED',
        hint: expect.stringContaining(`${runFile(bad, 'journal.jsonl')}: if the source and args`),
      },
    });
    // A line that is not a journal entry at all is refused before anything runs, named.
    writeFileSync(runFile(bad, 'journal.jsonl'), `${JSON.stringify({ ...first, seq: 'one' })}\n`);
    const shape = await wf(['resume', bad, '--json'], p);
    expect(shape.code).toBe(5);
    expect(json(shape)).toMatchObject({
      error: {
        message: expect.stringContaining('journal.jsonl line 1: field seq must be an integer >= 0'),
      },
    });
  });

  it('a half-made run (a start that never completed) is never listed, and recovery removes it', async () => {
    const half = join(runsDir(p), 'run-half');
    mkdirSync(half);
    writeFileSync(join(half, 'start.json'), readFileSync(runFile(done, 'start.json')));
    writeFileSync(join(half, 'events.jsonl'), '');
    const past = Date.now() / 1000 - 3600;
    utimesSync(half, past, past);
    const r = await wf(['runs', '--json', '--all'], p);
    const ids = (json(r) as { runs: { runId: string }[] }).runs.map((x) => x.runId);
    expect(ids).not.toContain('run-half');
    expect(existsSync(half)).toBe(false);
    expect((await wf(['show', 'run-half'], p)).code).toBe(3);
  });
});

describe.runIf(process.platform === 'linux' && process.getuid?.() === 0)('a full disk', () => {
  let disk: SmallDisk;
  let q: Project;
  beforeAll(async () => {
    disk = smallDisk(join(p.dir, '..', 'bad-day-disk'), 2 * 1024 * 1024);
    q = tempProject();
    rmSync(q.dir, { recursive: true });
    Object.assign(q, { dir: join(disk.path, 'project') });
    mkdirSync(q.dir);
    writeFileSync(join(q.dir, 'five.workflow.js'), FIVE_AGENTS);
  });
  afterAll(async () => {
    disk?.release();
    await disk?.unmount();
    q?.cleanup();
  });

  it('runs, show, events and report work with crashed runs present, and say why they wait', async () => {
    const ok = json(await wf(['run', 'five.workflow.js', '--delay-ms', '0', '--json'], q))
      .runId as string;
    // A run killed mid-way: its run.json says running, its owner is gone.
    const child = startWf(['run', 'five.workflow.js', '--delay-ms', '5000'], q);
    const before = new Set([ok]);
    let crashed: string | undefined;
    while (crashed === undefined) {
      await new Promise((r) => setTimeout(r, 20));
      crashed = readdirSync(runsDir(q)).find((n) => n.startsWith('run-') && !before.has(n));
    }
    child.kill('SIGKILL');
    await collect(child);
    disk.fill(0);
    try {
      const listed = await wf(['runs', '--json'], q);
      expect(listed.code, listed.stdout).toBe(0);
      const doc = json(listed) as {
        runs: { runId: string; status: string; active: boolean }[];
        deferred: { runId: string; reason: string }[];
      };
      expect(doc.runs.map((r) => [r.runId, r.status, r.active])).toEqual([
        [crashed, 'running', false],
        [ok, 'completed', false],
      ]);
      expect(doc.deferred).toEqual([
        { runId: crashed, reason: expect.stringContaining('the disk is full') },
      ]);
      const human = await wf(['runs'], q);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/running \(owner gone\)/);
      expect(human.stderr).toContain(`run ${crashed} was left running by a process that is gone`);
      for (const args of [
        ['show', crashed],
        ['show', ok],
        ['events', crashed],
        ['report', ok, '--out', join(p.dir, 'elsewhere.html')],
      ]) {
        const r = await wf([...args, '--json'], q);
        expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(0);
      }
    } finally {
      disk.release();
    }
    // Space is back: the next command that can write records the crash.
    const after = json(await wf(['runs', '--json'], q)) as {
      runs: { runId: string; status: string }[];
    };
    expect(after.runs.find((r) => r.runId === crashed)?.status).toBe('interrupted');
  }, 120_000);

  it('a save that does not fit leaves no lock; the catalog still lists and runs what it holds', async () => {
    const ok = json(await wf(['run', 'five.workflow.js', '--delay-ms', '0', '--json'], q))
      .runId as string;
    expect((await wf(['save', ok, 'keep-me'], q)).code).toBe(0);
    disk.fill(0);
    try {
      const saved = await wf(['save', ok, 'another', '--json'], q);
      expect(saved.code).toBe(6);
      expect(json(saved)).toMatchObject({
        exitCode: 6,
        error: { code: 'WF_CLI_STORAGE_FAILED', message: expect.stringContaining('disk is full') },
      });
      const catalog = join(q.dir, '.dsh', 'workflows');
      expect(readdirSync(catalog).filter((f) => f.startsWith('.wf-'))).toEqual([]);
      const list = json(await wf(['list', '--json'], q)) as { workflows: { name: string }[] };
      expect(list.workflows.map((w) => w.name)).toContain('keep-me');
      // keep-me resolves; it cannot start on a full disk, and says so (it was "no workflow").
      const run = await wf(['run', 'keep-me', '--json'], q);
      expect(run.code).toBe(6);
      expect(json(run)).toMatchObject({
        error: { code: 'WF_CLI_STORAGE_FAILED', message: expect.stringContaining('did not start') },
      });
    } finally {
      disk.release();
    }
    expect((await wf(['run', 'keep-me', '--delay-ms', '0'], q)).code).toBe(0);
  }, 120_000);
});
