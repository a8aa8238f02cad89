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

  it('reads the lines the writers write as JSON.parse would', () => {
    const lines = [
      line({ runId: 'run-a', startedAt: 1 }),
      line({ runId: 'run-b', startedAt: 1_796_395_023_561, ended: true }),
      line({ runId: 'run-a', ended: true }),
      line({ runId: 'run-c', startedAt: 0 }),
      line({ runId: 'run-d' }),
      line({ runId: 'run-e', startedAt: 999_999_999_999_999 }), // 15 digits: the longest read directly
    ];
    expect(Object.fromEntries(parseIndex(lines.join('')))).toEqual({
      'run-a': { startedAt: 1, ended: true },
      'run-b': { startedAt: 1_796_395_023_561, ended: true },
      'run-c': { startedAt: 0, ended: false },
      'run-d': { ended: false },
      'run-e': { startedAt: 999_999_999_999_999, ended: false },
    });
    expect(parseIndex('').size).toBe(0);
  });

  // The reference: each line through JSON.parse, merged as the parser documents.
  const reference = (text: string) => {
    const out = new Map<string, { startedAt?: number; ended: boolean }>();
    for (const l of text.split('\n').slice(0, -1)) {
      let v: unknown;
      try {
        v = JSON.parse(l);
      } catch {
        continue;
      }
      if (typeof v !== 'object' || v === null) continue;
      const { runId, startedAt, ended } = v as Record<string, unknown>;
      if (typeof runId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(runId)) continue;
      const known = out.get(runId);
      const start =
        typeof startedAt === 'number' && Number.isFinite(startedAt) ? startedAt : known?.startedAt;
      const isEnded = ended === true || known?.ended === true;
      out.set(
        runId,
        start === undefined ? { ended: isEnded } : { startedAt: start, ended: isEnded },
      );
    }
    return Object.fromEntries(out);
  };

  it('reads any other line as JSON.parse does: the forms near the written ones', () => {
    const near = [
      '{"runId":"run-a","startedAt":01}', // a leading zero is not JSON
      '{"runId":"run-a","startedAt":-5}',
      '{"runId":"run-a","startedAt":1.5}',
      '{"runId":"run-a","startedAt":1e3}',
      '{"runId":"run-a","startedAt":1234567890123456}', // 16 digits
      '{"runId":"run-a","startedAt":12345678901234567890}',
      '{"runId":"run-a","startedAt":}',
      '{"runId":"run-a","startedAt":5}}',
      '{"runId":"run-a","startedAt":5 }',
      '{"runId":"run-a","ended":true,"startedAt":5}',
      '{"runId":"run-a","startedAt":5,"ended":false}',
      '{"runId":"run-a","ended":true}x',
      '{"runId":"run-a","ended":true',
      '{"runId":"run-a"}\r',
      '{"runId":"run-a" }',
      '{"runId":"r\\u0075n-b","startedAt":7}', // an escape: JSON reads run-b
      '{"runId":"run-\\"q","startedAt":7}',
      '{"runId":"","startedAt":7}',
      '{"runId":"run-a","startedAt":"7"}',
      '{"runId":"run-a","startedAt":7,"ended":true,"x":1}',
      '{"runId":"run-a","ended":true,"ended":true}',
      ' {"runId":"run-a","startedAt":7}',
      '{"runId":"run-a","ended":1}', // only true ends a run
      '{"runId":"run-a","ended":"true"}',
      '{"runId":"run-a","startedAt":null}',
      '{"runId":"../run-a","startedAt":7}',
    ];
    for (const l of near) {
      const text = `${l}\n`;
      expect(Object.fromEntries(parseIndex(text)), l).toEqual(reference(text));
    }
  });

  it('agrees with JSON.parse on thousands of mutated lines', () => {
    // A fixed-seed generator: written lines, then each cut, extended or with one character changed.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor((seed / 2_147_483_648) * n); // the high bits: an LCG's low bits cycle
    };
    const written = () =>
      JSON.stringify({
        runId: `run-${rand(5)}`,
        ...(rand(3) > 0
          ? { startedAt: rand(2) ? rand(1000) : 1_796_395_000_000 + rand(100_000) }
          : {}),
        ...(rand(2) ? { ended: true } : {}),
      });
    const alphabet = '{}":,0123456789-.eEtruefalsn runIdstartedAtended\\';
    const mutate = (l: string) => {
      const at = rand(l.length + 1);
      const c = alphabet[rand(alphabet.length)] ?? '';
      switch (rand(4)) {
        case 0:
          return l;
        case 1:
          return l.slice(0, at) + c + l.slice(at);
        case 2:
          return l.slice(0, at) + l.slice(at + 1);
        default:
          return l.slice(0, at) + c + l.slice(at + 1);
      }
    };
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(mutate(written()));
    for (let i = 0; i < lines.length; i += 50) {
      const text = `${lines.slice(i, i + 50).join('\n')}\n`;
      expect(Object.fromEntries(parseIndex(text))).toEqual(reference(text));
    }
  });
});
