// Damaged stores: records are checked field by field when read (the bridge's record schemas), so
// one bad field makes that one run unreadable, naming the file and the field, and never crashes a
// listing; a start that never completed is no run; files a run needs name themselves when missing.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { HALF_MADE_GRACE_MS } from '../src/internal/run-recovery.js';
import { tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

let dir: string;
let cleanup: () => void;
let project: string;
let store: RunStore;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('wf-damage-'));
  project = join(dir, 'project');
  mkdirSync(project);
  store = await openRunStore({ project });
});
afterEach(async () => {
  await store.close();
  cleanup();
});

const runDir = (runId: string) => join(project, '.dsh', 'workflow-runs', runId);
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const deadPid = () =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);

/** A finished run with events and a journal entry. */
async function finished(runId: string): Promise<void> {
  await store.begin(startRecord(runId));
  for (let seq = 1; seq <= 3; seq++) store.event(event(runId, seq));
  store.journal(runId, {
    seq: 1,
    settleSeq: 1,
    method: 'runAgent',
    input: { prompt: 'p' },
    outcome: { ok: true, value: { text: 't' } },
    settledAt: 1,
  });
  await store.finish(runId, finishRecord('completed', { result: 'ok' }));
}

/** Rewrites one field of a run's run.json. */
function plant(runId: string, patch: (json: Record<string, unknown>) => void): void {
  const path = join(runDir(runId), 'run.json');
  const json = readJson(path) as Record<string, unknown>;
  patch(json);
  writeFileSync(path, JSON.stringify(json));
}

/** A patch setting one (dotted) field of run.json. */
const set =
  (path: string, value: unknown) =>
  (json: Record<string, unknown>): void => {
    const keys = path.split('.');
    let at = json;
    for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
    at[keys.at(-1) as string] = value;
  };

describe('run.json checked field by field', () => {
  const cases: [string, (json: Record<string, unknown>) => void, string][] = [
    ['a number for the workflow', set('workflow', 42), 'field workflow must be a string'],
    ['an unknown status', set('status', 'exploded'), 'field status must be one of'],
    [
      'a string token count',
      set('cost.tokenUsage.totalTokens', 'x'),
      'field cost.tokenUsage.totalTokens must be a finite number',
    ],
    ['an error without a message', set('error', { code: 'C' }), 'field error.message'],
    ['an array', set('resumedFrom', [1]), 'field resumedFrom must be an object'],
    [
      'an artifact without a ref',
      set('artifacts', [{ name: 'a', bytes: 1 }]),
      'field artifacts[0].ref',
    ],
  ];
  for (const [what, patch, message] of cases) {
    it(`${what}: that run is unreadable, naming run.json and the field; the others list`, async () => {
      await finished('run-good');
      await finished('run-bad');
      plant('run-bad', patch);
      const fresh = await openRunStore({ project });
      for (const listed of [
        await fresh.list(),
        (await fresh.listRecent(10, { recover: true })).runs,
      ]) {
        const bad = listed.find((r) => r.runId === 'run-bad');
        expect(bad?.snapshot).toBeUndefined();
        expect(bad?.error?.code).toBe('WF_CATALOG_RUN_CORRUPT');
        expect(bad?.error?.message).toContain(`${runDir('run-bad')}/run.json: ${message}`);
        expect(listed.find((r) => r.runId === 'run-good')?.snapshot?.status).toBe('completed');
      }
      const shown = await fresh.show('run-bad');
      expect(shown).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_RUN_CORRUPT' } });
      await fresh.close();
    });
  }

  it('an unreadable run is deleted only with force, and the refusal says why', async () => {
    await finished('run-bad');
    plant('run-bad', set('workflow', 42));
    expect(await store.delete('run-bad')).toMatchObject({
      ok: false,
      error: {
        code: 'WF_CATALOG_RUN_CORRUPT',
        message: expect.stringContaining('run.json: field workflow must be a string'),
      },
    });
    expect(await store.delete('run-bad', { force: true })).toEqual({
      ok: true,
      deleted: 'run-bad',
    });
  });

  it('run.json that is not an object is unreadable, not a crash', async () => {
    await finished('run-bad');
    writeFileSync(join(runDir('run-bad'), 'run.json'), '[1, 2]');
    const listed = await store.list();
    expect(listed[0]?.error?.message).toContain('run.json is not a JSON object');
  });
});

describe('the files a run needs, when they are missing or damaged', () => {
  it('a missing events.jsonl is named (the run is listed, so it is not "no run")', async () => {
    await finished('run-1');
    rmSync(join(runDir('run-1'), 'events.jsonl'));
    await expect(store.events('run-1')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_CORRUPT',
      message: expect.stringContaining(`${runDir('run-1')}/events.jsonl is missing`),
    });
    await expect(store.events('run-none')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_NOT_FOUND',
    });
  });

  it('event lines of the wrong shape are skipped like corrupt ones', async () => {
    await finished('run-1');
    const log = join(runDir('run-1'), 'events.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const second = JSON.parse(lines[1] as string);
    lines[1] = JSON.stringify({ ...second, type: 5 });
    writeFileSync(log, `${lines.join('\n')}\n`);
    const fresh = await openRunStore({ project });
    expect((await fresh.events('run-1')).map((e) => e.seq)).toEqual([1, 3]);
    await fresh.close();
  });

  it('a damaged start.json refuses the resume, naming the file (and the field)', async () => {
    await finished('run-1');
    const start = join(runDir('run-1'), 'start.json');
    const good = readFileSync(start, 'utf8');
    writeFileSync(start, '{"runId": "run-1", ');
    await expect(store.load('run-1')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_CORRUPT',
      message: expect.stringContaining(`${runDir('run-1')}/start.json cannot be read`),
    });
    writeFileSync(start, JSON.stringify({ ...JSON.parse(good), seed: 'one' }));
    await expect(store.load('run-1')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_CORRUPT',
      message: `${runDir('run-1')}/start.json: field seed must be a finite number`,
    });
  });

  it('a journal line that is not a journal entry refuses the resume, naming file, line and field', async () => {
    await finished('run-1');
    const journal = join(runDir('run-1'), 'journal.jsonl');
    const entry = readFileSync(journal, 'utf8').trim();
    const second = { ...JSON.parse(entry), seq: 2, settleSeq: 2, outcome: { ok: true } };
    writeFileSync(journal, `${entry}\n${JSON.stringify({ ...second, settledAt: 'later' })}\n`);
    await expect(store.load('run-1')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_CORRUPT',
      message: `${runDir('run-1')}/journal.jsonl line 2: field settledAt must be a finite number`,
    });
    writeFileSync(journal, `${entry}\nnot json\n`);
    await expect(store.load('run-1')).rejects.toMatchObject({
      message: expect.stringContaining('journal.jsonl line 2 cannot be read'),
    });
    // A torn last line (a crash mid-write) is no entry yet, and a repeated line is kept once.
    writeFileSync(journal, `${entry}\n${entry}\n${JSON.stringify(second)}\n{"seq":3,"sett`);
    expect((await store.load('run-1'))?.journal.map((e) => e.settleSeq)).toEqual([1, 2]);
  });
});

describe('half-made runs are not runs', () => {
  /** A run directory as an earlier version's begin() left it when killed: no run.json. */
  function halfMade(runId: string, extra: Record<string, string> = {}): void {
    mkdirSync(runDir(runId), { recursive: true });
    writeFileSync(join(runDir(runId), 'start.json'), JSON.stringify(startRecord(runId)));
    writeFileSync(join(runDir(runId), 'events.jsonl'), '');
    for (const [name, text] of Object.entries(extra))
      writeFileSync(join(runDir(runId), name), text);
  }
  const age = (runId: string) => {
    const past = (Date.now() - HALF_MADE_GRACE_MS - 5_000) / 1000;
    utimesSync(runDir(runId), past, past);
  };

  it('are never listed; show names what it is; recovery removes an old one', async () => {
    await finished('run-good');
    halfMade('run-half');
    halfMade('run-fresh');
    age('run-half');
    const fresh = await openRunStore({ project, recoverAtOpen: false });
    expect((await fresh.list()).map((r) => r.runId)).toEqual(['run-good']);
    const page = await fresh.listRecent(10);
    expect(page.runs.map((r) => r.runId)).toEqual(['run-good']);
    expect(page.total).toBe(1);
    const shown = await fresh.show('run-half');
    expect(shown).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_RUN_NOT_FOUND' } });
    expect(!shown.ok && shown.error.message).toContain('a start that never completed');
    // Recovery removes the old one; a recent one may still be an earlier version's begin().
    await fresh.recover();
    expect(existsSync(runDir('run-half'))).toBe(false);
    expect(existsSync(runDir('run-fresh'))).toBe(true);
    expect((await fresh.listRecent(10, { recover: true })).runs.map((r) => r.runId)).toEqual([
      'run-good',
    ]);
    await fresh.close();
  });

  it("a directory of the user's own in the store is no run: never listed, never removed", async () => {
    await finished('run-good');
    mkdirSync(runDir('notes'));
    writeFileSync(join(runDir('notes'), 'todo.txt'), 'mine');
    mkdirSync(runDir('empty'));
    age('notes');
    age('empty');
    for (let pass = 0; pass < 3; pass++) {
      const fresh = await openRunStore({ project });
      expect((await fresh.list()).map((r) => r.runId)).toEqual(['run-good']);
      expect(await fresh.listRecent(10, { recover: true })).toMatchObject({
        runs: [{ runId: 'run-good' }],
        total: 1,
      });
      await fresh.close();
    }
    expect(readFileSync(join(runDir('notes'), 'todo.txt'), 'utf8')).toBe('mine');
    expect(existsSync(runDir('empty'))).toBe(true);
  });

  it('a run without run.json that recorded something is damaged, not half-made: listed, named', async () => {
    halfMade('run-damaged', { 'events.jsonl': `${JSON.stringify(event('run-damaged', 1))}\n` });
    age('run-damaged');
    const fresh = await openRunStore({ project });
    const [listed] = await fresh.list();
    expect(listed?.runId).toBe('run-damaged');
    expect(listed?.error).toMatchObject({
      code: 'WF_CATALOG_RUN_CORRUPT',
      message: `${runDir('run-damaged')}/run.json is missing`,
    });
    expect(existsSync(runDir('run-damaged'))).toBe(true);
    await fresh.close();
  });

  it('the temp directory of a begin() killed part-way is removed by recovery', async () => {
    const root = join(project, '.dsh', 'workflow-runs');
    await finished('run-good');
    const temp = join(root, `.wf-tmp-${deadPid()}-0123456789ab-feedfacefeed`);
    mkdirSync(temp);
    writeFileSync(join(temp, 'start.json'), '{}');
    const fresh = await openRunStore({ project });
    expect(readdirSync(root).filter((f) => f.startsWith('.wf-tmp-'))).toEqual([]);
    expect((await fresh.list()).map((r) => r.runId)).toEqual(['run-good']);
    await fresh.close();
  });

  it('a begin() that fails leaves nothing behind, and the id stays free', async () => {
    const root = join(project, '.dsh', 'workflow-runs');
    mkdirSync(root, { recursive: true });
    // A manifest that cannot be serialised fails begin() after its directory was made.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(store.begin({ ...startRecord('run-x'), manifest: cyclic })).rejects.toThrow();
    expect(readdirSync(root).filter((f) => f !== '.runs-index.jsonl')).toEqual([]);
    await store.begin(startRecord('run-x'));
    await store.finish('run-x', finishRecord());
    expect((await store.show('run-x')).ok).toBe(true);
  });
});
