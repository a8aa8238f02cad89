// Recovery inside the listing's pass (`listRecent(n, { recover: true })` on a store opened with
// `recoverAtOpen: false`, as `wf runs` does) is exactly as correct as recovery at open: stale runs
// are marked whether the index knows them, has them started only, or is missing; a run another live
// process owns is left alone; trash is removed. And the index parser keeps its per-line rules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../src/index.js';
import { parseIndex } from '../src/internal/run-index.js';
import { setSafeDirHook } from '../src/internal/safe-dir.js';
import { tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

let cleanup: () => void;
let project: string;
const runsRoot = () => join(project, '.dsh', 'workflow-runs');
const indexFile = () => join(runsRoot(), '.runs-index.jsonl');
const runJson = (runId: string) => join(runsRoot(), runId, 'run.json');
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const deadPid = () => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
};

beforeEach(() => {
  const made = tempDir('wf-run-one-pass-');
  cleanup = made.cleanup;
  project = join(made.dir, 'project');
});
afterEach(() => cleanup?.());

/** Records a run left `running` (its store closed without finishing it). */
async function openRun(runId: string, startedAt: number): Promise<void> {
  const store = await openRunStore({ project, recoverAtOpen: false });
  await store.begin(startRecord(runId, { startedAt }));
  store.event(event(runId, 1));
  await store.close();
}

/** The run's owner is gone: a dead pid on this host. */
function ownerDied(runId: string): void {
  const snap = readJson(runJson(runId));
  snap.owner = { ...snap.owner, pid: deadPid(), token: 'gone' };
  writeFileSync(runJson(runId), JSON.stringify(snap));
}

async function crashedRun(runId: string, startedAt: number): Promise<void> {
  await openRun(runId, startedAt);
  ownerDied(runId);
}

async function endedRun(runId: string, startedAt: number): Promise<void> {
  const store = await openRunStore({ project, recoverAtOpen: false });
  await store.begin(startRecord(runId, { startedAt }));
  await store.finish(runId, finishRecord('completed'));
  await store.close();
}

/** Keeps only the index lines `keep` accepts (a stale index, or one from before some runs). */
function filterIndex(keep: (line: { runId: string; ended?: boolean }) => boolean): void {
  const lines = readFileSync(indexFile(), 'utf8').split('\n').filter(Boolean);
  writeFileSync(
    indexFile(),
    lines
      .filter((l) => keep(JSON.parse(l)))
      .map((l) => `${l}\n`)
      .join(''),
  );
}

/** The one-pass listing `wf runs` does, counting the run directories it opens. */
async function listInOnePass(limit = 20) {
  let opened = 0;
  setSafeDirHook((e, path) => {
    if (e === 'dir-opened' && basename(path).startsWith('run-')) opened++;
  });
  try {
    const store = await openRunStore({ project, recoverAtOpen: false });
    const recent = await store.listRecent(limit, { recover: true });
    await store.close();
    return { ...recent, opened };
  } finally {
    setSafeDirHook(undefined);
  }
}

const T = 1_800_000_000_000;

describe('recovery in the listing pass', () => {
  it('marks a stale run the index knows as started, and one it never saw, then lists them', async () => {
    await endedRun('run-a-ended', T);
    await crashedRun('run-b-started', T + 1000);
    await crashedRun('run-c-unknown', T + 2000);
    // run-c was recorded before the index existed (or its append was lost).
    filterIndex((l) => l.runId !== 'run-c-unknown');

    const first = await listInOnePass();
    expect([...(first.interrupted ?? [])].sort()).toEqual(['run-b-started', 'run-c-unknown']);
    expect(first.total).toBe(3);
    expect(first.runs.map((r) => [r.runId, r.snapshot?.status, r.active])).toEqual([
      ['run-c-unknown', 'interrupted', false],
      ['run-b-started', 'interrupted', false],
      ['run-a-ended', 'completed', false],
    ]);
    expect(readJson(runJson('run-c-unknown'))).toMatchObject({
      status: 'interrupted',
      interruptedFrom: 'running',
      error: { code: 'WF_CATALOG_RUN_INTERRUPTED' },
    });
    // Recovery recorded what it learned: the next pass opens only the runs it prints.
    const second = await listInOnePass(1);
    expect(second.interrupted).toEqual([]);
    expect(second.opened).toBe(1);
    expect(second.runs[0]?.runId).toBe('run-c-unknown');
  });

  it('recovers and lists every run when the index is missing', async () => {
    await endedRun('run-a', T);
    await crashedRun('run-b', T + 1000);
    rmSync(indexFile());
    const listed = await listInOnePass();
    expect(listed.interrupted).toEqual(['run-b']);
    expect(listed.runs.map((r) => [r.runId, r.snapshot?.status])).toEqual([
      ['run-b', 'interrupted'],
      ['run-a', 'completed'],
    ]);
    expect(existsSync(indexFile())).toBe(true);
  });

  it('leaves a run owned by another live process alone, and removes trash', async () => {
    await crashedRun('run-o', T);
    const snap = readJson(runJson('run-o'));
    // Owned by a live process with a fresh lease (our parent stands in for another wf).
    snap.owner = {
      ...snap.owner,
      pid: process.ppid,
      token: 'other',
      leaseUntil: Date.now() + 60_000,
    };
    writeFileSync(runJson('run-o'), JSON.stringify(snap));
    filterIndex(() => false);
    mkdirSync(join(runsRoot(), '.trash-run-x-0000'));
    const listed = await listInOnePass();
    expect(listed.interrupted).toEqual([]);
    expect(listed.runs.map((r) => [r.runId, r.snapshot?.status, r.active])).toEqual([
      ['run-o', 'running', true],
    ]);
    expect(existsSync(join(runsRoot(), '.trash-run-x-0000'))).toBe(false);
    // Once its owner is gone, the next pass marks it: the index never recorded it as ended.
    snap.owner = { ...snap.owner, pid: deadPid(), token: 'gone' };
    writeFileSync(runJson('run-o'), JSON.stringify(snap));
    expect((await listInOnePass()).interrupted).toEqual(['run-o']);
  });
});

describe('picking the newest runs', () => {
  it('gives the first n of the full listing for every n, ties in name order', async () => {
    // Start times with ties, recorded out of name order.
    const starts = [3, 1, 3, 2, 5, 3, 1, 5, 0, 4];
    for (const [i, k] of starts.entries()) await endedRun(`run-${'jbhdaicegf'[i]}`, T + k * 1000);
    const store = await openRunStore({ project, recoverAtOpen: false });
    const full = (await store.list()).map((r) => r.runId);
    for (const n of [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 2.5, Number.POSITIVE_INFINITY]) {
      const recent = await store.listRecent(n, { recover: true });
      expect(recent.runs.map((r) => r.runId)).toEqual(full.slice(0, n));
      expect(recent.total).toBe(starts.length);
    }
    await store.close();
  });
});

describe('the index parser', () => {
  const line = (v: object) => `${JSON.stringify(v)}\n`;
  it('reads whole lines, skips corrupt, blank and multi-value lines, and ignores a torn tail', () => {
    const text = [
      line({ runId: 'run-a', startedAt: 1 }),
      '{"runId":"run-b","startedAt":2\n', // corrupt
      '\n', // blank
      '{"runId":"run-c","startedAt":3},{"runId":"run-c","ended":true}\n', // two values
      line({ runId: 'run-a', ended: true }),
      line({ runId: '../escape', startedAt: 4 }),
      line({ runId: 'run-d', startedAt: 'soon' }),
      '{"runId":"run-e","startedAt":5', // torn: no newline
    ].join('');
    expect(Object.fromEntries(parseIndex(text))).toEqual({
      'run-a': { startedAt: 1, ended: true },
      'run-d': { ended: false },
    });
  });

  it('a line holding two values is skipped even when the whole file parses as one array', () => {
    const text = `${line({ runId: 'run-a', startedAt: 1 })}{"runId":"run-c","ended":true},{"runId":"run-d","startedAt":4}\n`;
    expect(Object.fromEntries(parseIndex(text))).toEqual({
      'run-a': { startedAt: 1, ended: false },
    });
  });

  it('the fast path gives the same map as line by line', () => {
    const lines = [
      line({ runId: 'run-a', startedAt: 1 }),
      line({ runId: 'run-b', startedAt: 2, ended: true }),
      line({ runId: 'run-a', ended: true }),
      line({ runId: 'run-c', startedAt: 3 }),
    ];
    expect(Object.fromEntries(parseIndex(lines.join('')))).toEqual({
      'run-a': { startedAt: 1, ended: true },
      'run-b': { startedAt: 2, ended: true },
      'run-c': { startedAt: 3, ended: false },
    });
    expect(parseIndex('').size).toBe(0);
  });
});
