// Listing the newest runs costs what it prints: with a few thousand stored runs,
// `listRecent(20)` opens about 20 run directories, and so does opening the store (recovery skips
// runs the index saw end). Counted through the safe-dir seam (every run directory the store opens),
// not timed. Runs recorded before the index existed are read once and added to it.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunStore } from '../src/index.js';
import { setSafeDirHook } from '../src/internal/safe-dir.js';
import { tempDir } from './helpers/fixtures.js';
import { finishRecord, startRecord } from './helpers/runs.js';

const STORED = 2000;
const T0 = 1_800_000_000_000;
let dir: string;
let cleanup: () => void;
let project: string;
const runsRoot = () => join(project, '.dsh', 'workflow-runs');
const idOf = (i: number) => `run-${String(i).padStart(5, '0')}-${(i * 7919) % 10007}`;

/** Listings of the store root, whole and partial reads of the runs index while `body` runs. */
async function rootReads<T>(
  body: () => Promise<T>,
): Promise<{ value: T; listed: number; indexRead: number; indexParts: number; opened: number }> {
  const counts = { listed: 0, indexRead: 0, indexParts: 0, opened: 0 };
  setSafeDirHook((event, path) => {
    if (event === 'dir-listed' && path === runsRoot()) counts.listed++;
    if (event === 'file-read' && path === join(runsRoot(), '.runs-index.jsonl')) counts.indexRead++;
    if (event === 'index-read') counts.indexParts++;
    if (event === 'dir-opened' && basename(path).startsWith('run-')) counts.opened++;
  });
  try {
    return { value: await body(), ...counts };
  } finally {
    setSafeDirHook(undefined);
  }
}

/** Run directories the store opens while `body` runs. */
async function runDirsOpened<T>(body: () => Promise<T>): Promise<{ value: T; opened: number }> {
  let opened = 0;
  setSafeDirHook((event, path) => {
    if (event === 'dir-opened' && basename(path).startsWith('run-')) opened++;
  });
  try {
    return { value: await body(), opened };
  } finally {
    setSafeDirHook(undefined);
  }
}

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('wf-run-index-'));
  project = join(dir, 'project');
  const store = await openRunStore({ project });
  // One run recorded through the store; the others are copies of it with their own id and start
  // time, written the way an earlier wf left them: on disk, absent from the index. Start times
  // are not in id order, so the listing must sort.
  await store.begin(startRecord(idOf(0), { startedAt: T0 }));
  await store.finish(idOf(0), finishRecord('completed'));
  await store.close();
  const template = join(runsRoot(), idOf(0));
  const snapshot = JSON.parse(readFileSync(join(template, 'run.json'), 'utf8'));
  for (let i = 1; i < STORED; i++) {
    const target = join(runsRoot(), idOf(i));
    cpSync(template, target, { recursive: true });
    const startedAt = T0 + ((i * 37) % STORED) * 1000;
    writeFileSync(
      join(target, 'run.json'),
      JSON.stringify({ ...snapshot, runId: idOf(i), startedAt, endedAt: startedAt + 5 }),
    );
  }
}, 120_000);
afterAll(() => cleanup?.());

describe('the runs index', () => {
  it('lists the newest runs in the same order as a full listing', async () => {
    const store = await openRunStore({ project, recoverAtOpen: false });
    const all = await store.list();
    expect(all).toHaveLength(STORED);
    // The first listing after an upgrade reads every run the index does not know, once.
    const first = await runDirsOpened(() => store.listRecent(20));
    expect(first.opened).toBeGreaterThanOrEqual(STORED - 1);
    expect(first.value.total).toBe(STORED);
    expect(first.value.runs.map((r) => r.runId)).toEqual(all.slice(0, 20).map((r) => r.runId));
    expect(first.value.runs[0]?.snapshot?.status).toBe('completed');
    await store.close();
  });

  it('afterwards reads only the runs it prints, and opening the store reads none', async () => {
    const open = await runDirsOpened(() => openRunStore({ project }));
    expect(open.opened).toBeLessThanOrEqual(2);
    const store = open.value;
    const recent = await runDirsOpened(() => store.listRecent(20));
    expect(recent.opened).toBeLessThanOrEqual(20);
    expect(recent.value.total).toBe(STORED);
    const newest = recent.value.runs.map((r) => r.snapshot?.startedAt);
    expect(newest).toEqual([...newest].sort((a, b) => Number(b) - Number(a)));
    expect(newest[0]).toBe(T0 + (STORED - 1) * 1000);
    await store.close();
  });

  it('recovering and listing in one pass reads parts of the index and lists nothing', async () => {
    // As `wf runs` does: no recovery at open, then recovery inside the listing's own pass. The
    // index was rewritten with a header by the passes above, so the store root is not listed.
    const pass = await rootReads(async () => {
      const store = await openRunStore({ project, recoverAtOpen: false });
      const recent = await store.listRecent(20, { recover: true });
      await store.close();
      return recent;
    });
    expect(pass).toMatchObject({ listed: 0, indexRead: 0 });
    expect(pass.indexParts).toBeGreaterThanOrEqual(1);
    expect(pass.indexParts).toBeLessThanOrEqual(2);
    expect(pass.opened).toBeLessThanOrEqual(20);
    expect(pass.value.total).toBe(STORED);
    expect(pass.value.interrupted).toEqual([]);
    expect(pass.value.runs[0]?.snapshot?.startedAt).toBe(T0 + (STORED - 1) * 1000);
    // recover() alone (at open) reads the same parts of the index and lists nothing either (it
    // listed the root once, and twice before that).
    const open = await rootReads(() => openRunStore({ project }));
    expect(open).toMatchObject({ listed: 0, indexRead: 0 });
    expect(open.indexParts).toBeGreaterThanOrEqual(1);
    expect(open.indexParts).toBeLessThanOrEqual(2);
    await open.value.close();
  });

  it('a new run enters the index when it begins; a deleted run leaves the listing', async () => {
    const store = await openRunStore({ project });
    const id = 'run-newest';
    await store.begin(startRecord(id, { startedAt: T0 + STORED * 1000 }));
    await store.finish(id, finishRecord('completed'));
    const before = await runDirsOpened(() => store.listRecent(5));
    expect(before.opened).toBeLessThanOrEqual(5);
    expect(before.value.runs[0]?.runId).toBe(id);
    expect(before.value.total).toBe(STORED + 1);
    const deleted = await store.delete(id);
    expect(deleted.ok).toBe(true);
    const after = await store.listRecent(5);
    expect(after.runs.map((r) => r.runId)).not.toContain(id);
    expect(after.total).toBe(STORED);
    await store.close();
  });
});
