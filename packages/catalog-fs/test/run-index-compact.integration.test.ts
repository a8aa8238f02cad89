// The runs index stays bounded by the live runs: a listing or recovery pass that finds it over
// 2 x live + 64 lines rewrites it as one line per live run (temp + fsync + rename), once, and never
// when it is already compact. Lines appended while it is rewritten are kept; failures leave the old
// index and the listing works. Rewrites are counted through the safe-dir seam's step.
import {
  appendFileSync,
  chmodSync,
  cpSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openRunStore } from '../src/index.js';
import { parseIndex } from '../src/internal/run-index.js';
import { processToken, setSafeDirHook } from '../src/internal/safe-dir.js';
import { tempDir } from './helpers/fixtures.js';
import { finishRecord, startRecord } from './helpers/runs.js';

// Lets one test predict the compaction's temp name (randomBytes returns a fixed value when on).
const fixed = vi.hoisted(() => ({ on: false }));
vi.mock('../src/internal/crypto.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/internal/crypto.js')>();
  return {
    ...real,
    randomBytes: (size: number) => (fixed.on ? Buffer.alloc(size, 0xab) : real.randomBytes(size)),
  };
});

const T0 = 1_800_000_000_000;
const idOf = (i: number) => `run-${String(i).padStart(5, '0')}`;
const cleanups: (() => void)[] = [];
afterEach(() => {
  setSafeDirHook(undefined);
  fixed.on = false;
  for (const c of cleanups.splice(0)) c();
});

interface Fixture {
  readonly project: string;
  readonly root: string;
  readonly indexPath: string;
}

/**
 * A store with `count` completed runs: one recorded through the store, the others copies of it
 * with their own id and start time and a start and an end line each in the index.
 */
async function seed(count: number): Promise<Fixture> {
  const { dir, cleanup } = tempDir('wf-run-compact-');
  cleanups.push(cleanup);
  const project = join(dir, 'project');
  const root = join(project, '.dsh', 'workflow-runs');
  const indexPath = join(root, '.runs-index.jsonl');
  const store = await openRunStore({ project });
  await store.begin(startRecord(idOf(0), { startedAt: T0 }));
  await store.finish(idOf(0), finishRecord('completed'));
  await store.close();
  const template = join(root, idOf(0));
  const snapshot = JSON.parse(readFileSync(join(template, 'run.json'), 'utf8'));
  let lines = '';
  for (let i = 1; i < count; i++) {
    const target = join(root, idOf(i));
    cpSync(template, target, { recursive: true });
    const startedAt = T0 + i * 1000;
    writeFileSync(
      join(target, 'run.json'),
      JSON.stringify({ ...snapshot, runId: idOf(i), startedAt, endedAt: startedAt + 5 }),
    );
    lines += `${JSON.stringify({ runId: idOf(i), startedAt })}\n`;
    lines += `${JSON.stringify({ runId: idOf(i), ended: true })}\n`;
  }
  appendFileSync(indexPath, lines);
  return { project, root, indexPath };
}

/** Removes run directories as deletion does (the index keeps their lines). */
function removeRuns(f: Fixture, from: number, to: number): void {
  for (let i = from; i < to; i++) rmSync(join(f.root, idOf(i)), { recursive: true, force: true });
}

const lineCount = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;

/** Index rewrites (the step just before the rename) while `body` runs. */
async function rewrites<T>(
  body: () => Promise<T>,
  atRewrite?: () => void,
): Promise<{ value: T; rewrites: number }> {
  let count = 0;
  setSafeDirHook((event, path) => {
    if (event === 'step' && path === 'runs-index-compact') {
      count++;
      atRewrite?.();
    }
  });
  try {
    return { value: await body(), rewrites: count };
  } finally {
    setSafeDirHook(undefined);
  }
}

async function recent(project: string, options: { readonly recover?: boolean } = {}) {
  const store = await openRunStore({ project, recoverAtOpen: false });
  try {
    return await store.listRecent(20, options);
  } finally {
    await store.close();
  }
}

/** Recovery at open (from the index while it vouches for the store, else the full pass). */
async function openWithRecovery(project: string): Promise<void> {
  await (await openRunStore({ project })).close();
}

/** A pass that lists the store directory: a page past 100 runs always takes it. */
async function fullPass(project: string): Promise<void> {
  const store = await openRunStore({ project, recoverAtOpen: false });
  try {
    await store.listRecent(1000, { recover: true });
  } finally {
    await store.close();
  }
}

async function fullListing(project: string) {
  const store = await openRunStore({ project, recoverAtOpen: false });
  try {
    return await store.list();
  } finally {
    await store.close();
  }
}

describe('runs index compaction', () => {
  it('after retention deletes most runs, rewrites the index to the live runs only', async () => {
    const f = await seed(300);
    const store = await openRunStore({ project: f.project, recoverAtOpen: false });
    const pruned = await store.prune({ keep: 10 });
    await store.close();
    expect(pruned.pruned).toHaveLength(290);
    // A start and an end line per run, and a deletion line per pruned run.
    expect(lineCount(f.indexPath)).toBe(600 + 290);
    const truth = await fullListing(f.project);
    expect(truth).toHaveLength(10);

    const pass = await rewrites(() => recent(f.project, { recover: true }));
    expect(pass.rewrites).toBe(1);
    expect(pass.value.interrupted).toEqual([]);
    expect(pass.value.total).toBe(10);
    expect(pass.value.runs).toEqual(truth);
    // A header and one line per live run, with what the old lines said about it.
    const text = readFileSync(f.indexPath, 'utf8');
    expect(lineCount(f.indexPath)).toBe(11);
    const index = parseIndex(text);
    expect([...index.keys()].sort()).toEqual(truth.map((r) => r.runId).sort());
    for (const run of truth) {
      expect(index.get(run.runId)).toEqual({ startedAt: run.snapshot?.startedAt, ended: true });
    }
    expect(statSync(f.indexPath).mode & 0o777).toBe(0o600);
    expect(readdirSync(f.root).filter((n) => n.startsWith('.wf-'))).toEqual([]);
    // The listing from the compact index is the same.
    expect((await recent(f.project)).runs).toEqual(truth);
  });

  it('does not rewrite an index that is already compact, up to 2 x live + 64 lines', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    expect((await rewrites(() => recent(f.project))).rewrites).toBe(1);
    const before = statSync(f.indexPath);
    // Listings, recovery at open and recovery in the listing's pass leave it alone.
    const again = await rewrites(async () => {
      await recent(f.project);
      await recent(f.project, { recover: true });
      await openWithRecovery(f.project);
      await fullPass(f.project);
    });
    expect(again.rewrites).toBe(0);
    const after = statSync(f.indexPath);
    expect([after.ino, after.mtimeMs, after.size]).toEqual([
      before.ino,
      before.mtimeMs,
      before.size,
    ]);
    // 10 live runs: 84 lines (the header is one) is within the bound, 85 is over it. The bound
    // holds for full passes (a listing the index cannot serve alone, or past 100 runs).
    const repeat = `${JSON.stringify({ runId: idOf(0), ended: true })}\n`;
    appendFileSync(f.indexPath, repeat.repeat(84 - 11));
    expect(lineCount(f.indexPath)).toBe(84);
    expect((await rewrites(() => fullPass(f.project))).rewrites).toBe(0);
    expect(statSync(f.indexPath).ino).toBe(before.ino);
    appendFileSync(f.indexPath, repeat);
    expect((await rewrites(() => fullPass(f.project))).rewrites).toBe(1);
    expect(lineCount(f.indexPath)).toBe(11);
  });

  it('keeps the lines another process appends while it rewrites', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    // Between the read and the rename, another process begins a run and ends one (O_APPEND to
    // the old file, as run-recorder does).
    const late = 'run-late';
    const pass = await rewrites(
      () => recent(f.project),
      () => {
        cpSync(join(f.root, idOf(0)), join(f.root, late), { recursive: true });
        appendFileSync(
          f.indexPath,
          `${JSON.stringify({ runId: late, startedAt: T0 + 500_000 })}\n${JSON.stringify({ runId: late, ended: true })}\n`,
        );
      },
    );
    expect(pass.rewrites).toBe(1);
    expect(lineCount(f.indexPath)).toBe(13); // the header, 10 runs, and the two late lines
    const index = parseIndex(readFileSync(f.indexPath, 'utf8'));
    expect(index.get(late)).toEqual({ startedAt: T0 + 500_000, ended: true });
    expect(index.size).toBe(11);
  });

  it('a line lost anyway (the cache argument) costs a read, never a wrong listing or recovery', async () => {
    const f = await seed(12);
    // The index lost run 3's end line and run 5's start line: run 3 looks running, 5 unknown.
    const lines = readFileSync(f.indexPath, 'utf8')
      .split('\n')
      .filter(
        (l) =>
          l !== JSON.stringify({ runId: idOf(3), ended: true }) &&
          !(l.includes(`"${idOf(5)}"`) && l.includes('startedAt')),
      );
    writeFileSync(f.indexPath, lines.join('\n'));
    const store = await openRunStore({ project: f.project, recoverAtOpen: false });
    const pass = await store.listRecent(20, { recover: true });
    await store.close();
    expect(pass.interrupted).toEqual([]);
    expect(pass.runs).toEqual(await fullListing(f.project));
    expect(pass.runs.find((r) => r.runId === idOf(3))?.snapshot?.status).toBe('completed');
    const index = parseIndex(readFileSync(f.indexPath, 'utf8'));
    expect(index.get(idOf(3))).toEqual({ startedAt: T0 + 3000, ended: true });
    expect(index.get(idOf(5))).toEqual({ startedAt: T0 + 5000, ended: true });
  });

  it('a failed rewrite (full disk) leaves the old index and the listing works', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    const before = readFileSync(f.indexPath);
    const ino = statSync(f.indexPath).ino;
    const pass = await rewrites(
      () => recent(f.project),
      () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      },
    );
    expect(pass.rewrites).toBe(1);
    expect(pass.value.runs).toEqual(await fullListing(f.project));
    expect(statSync(f.indexPath).ino).toBe(ino);
    expect(readFileSync(f.indexPath)).toEqual(before);
    expect(readdirSync(f.root).filter((n) => n.startsWith('.wf-'))).toEqual([]);
  });

  it('a symlink planted at the temp name is not followed; the old index stays', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    const before = readFileSync(f.indexPath);
    const outside = join(f.project, 'outside.txt');
    writeFileSync(outside, 'not the index\n');
    fixed.on = true;
    symlinkSync(
      outside,
      join(f.root, `.wf-tmp-${process.pid}-${processToken()}-${'ab'.repeat(6)}`),
    );
    const pass = await rewrites(() => recent(f.project));
    fixed.on = false;
    expect(pass.rewrites).toBe(0); // writing the temp file failed before the rename step
    expect(pass.value.runs).toEqual(await fullListing(f.project));
    expect(readFileSync(outside, 'utf8')).toBe('not the index\n');
    expect(readFileSync(f.indexPath)).toEqual(before);
  });

  it('an index that is a symlink is neither read nor rewritten', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    const elsewhere = join(f.project, 'elsewhere.jsonl');
    cpSync(f.indexPath, elsewhere);
    rmSync(f.indexPath);
    symlinkSync(elsewhere, f.indexPath);
    const before = readFileSync(elsewhere);
    const pass = await rewrites(() => recent(f.project));
    expect(pass.rewrites).toBe(0);
    expect(pass.value.runs).toEqual(await fullListing(f.project));
    expect(readFileSync(elsewhere)).toEqual(before);
  });

  it('skips the rewrite while another process holds the lock, without waiting', async () => {
    const f = await seed(100);
    removeRuns(f, 10, 100);
    const lock = join(f.root, '.wf-lock');
    writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, token: 'other', host: hostname(), at: Date.now() }),
    );
    const pass = await rewrites(() => recent(f.project));
    expect(pass.rewrites).toBe(0);
    expect(pass.value.runs).toEqual(await fullListing(f.project));
    expect(lineCount(f.indexPath)).toBe(200);
    rmSync(lock);
    expect((await rewrites(() => recent(f.project))).rewrites).toBe(1);
  });

  it.skipIf(process.getuid?.() === 0)(
    'an unwritable store directory leaves the old index and the listing works',
    async () => {
      const f = await seed(100);
      removeRuns(f, 10, 100);
      const before = readFileSync(f.indexPath);
      chmodSync(f.root, 0o500);
      try {
        const pass = await rewrites(() => recent(f.project));
        expect(pass.rewrites).toBe(0);
        expect(pass.value.runs).toEqual(await fullListing(f.project));
        expect(readFileSync(f.indexPath)).toEqual(before);
      } finally {
        chmodSync(f.root, 0o755);
      }
    },
  );
});
