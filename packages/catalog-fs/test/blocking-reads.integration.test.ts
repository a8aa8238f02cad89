// `openRunStore({ blockingReads: true })` (what `wf runs` and `wf show` open): the same reads with
// synchronous calls. It must read exactly what the default store reads, refuse the same symlinks
// and planted files, make no thread-pool file call on its read path, and its descriptors must be
// as safe to close twice as fs/promises' handles.
import { createHook } from 'node:async_hooks';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { BLOCKING_IO } from '../src/internal/io.js';
import { tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

let cleanup: () => void;
let dir: string;
let project: string;
const runsRoot = () => join(project, '.dsh', 'workflow-runs');
const runDir = (runId: string) => join(runsRoot(), runId);

beforeEach(() => {
  const made = tempDir('wf-blocking-reads-');
  cleanup = made.cleanup;
  dir = made.dir;
  project = join(dir, 'project');
  mkdirSync(project);
});
afterEach(() => cleanup?.());

/** Three finished runs with events and an artifact, and one left running by a dead owner. */
async function recordRuns(): Promise<void> {
  const store = await openRunStore({ project });
  for (const [i, status] of (['completed', 'failed', 'completed'] as const).entries()) {
    const runId = `run-${i}`;
    await store.begin(startRecord(runId, { startedAt: 1_700_000_000_000 + i * 1000 }));
    for (let seq = 1; seq <= 5; seq++) store.event(event(runId, seq));
    await store.artifact(runId, 'out', { i });
    await store.finish(runId, finishRecord(status));
  }
  await store.begin(startRecord('run-stale', { startedAt: 1_700_000_010_000 }));
  store.event(event('run-stale', 1));
  await store.close();
  const snapshot = join(runDir('run-stale'), 'run.json');
  const snap = JSON.parse(readFileSync(snapshot, 'utf8'));
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  snap.owner = { ...snap.owner, pid: Number(dead.stdout.toString()), token: 'gone' };
  writeFileSync(snapshot, JSON.stringify(snap));
}

/** Everything the read verbs ask a store, in one value. */
async function readAll(store: RunStore) {
  const recent = await store.listRecent(10, { recover: true });
  const shown = [];
  for (const runId of ['run-0', 'run-1', 'run-2', 'run-stale', 'run-missing'])
    shown.push(await store.show(runId));
  return { recent, shown, events: await store.events('run-1'), list: await store.list() };
}

/** Async resources Node creates for thread-pool file calls, counted while `work` runs. */
async function poolFileCalls(work: () => Promise<unknown>): Promise<number> {
  let calls = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'FSREQPROMISE' || type === 'FSREQCALLBACK' || type === 'FILEHANDLE') calls++;
    },
  });
  hook.enable();
  try {
    await work();
  } finally {
    hook.disable();
  }
  return calls;
}

describe('a store with blockingReads', () => {
  it('reads, lists and recovers exactly what the default store does', async () => {
    await recordRuns();
    const copy = join(dir, 'copy');
    // Recovery marks the stale run: both stores must start from the same files.
    spawnSync('cp', ['-a', project, copy]);
    const blocking = await openRunStore({ project, recoverAtOpen: false, blockingReads: true });
    const plain = await openRunStore({ project: copy, recoverAtOpen: false });
    try {
      const a = await readAll(blocking);
      const b = await readAll(plain);
      expect(a.recent.interrupted).toEqual(['run-stale']);
      expect(a.recent.runs.map((r) => r.runId)).toEqual(['run-stale', 'run-2', 'run-1', 'run-0']);
      expect(a.events.length).toBe(5);
      // The copy's paths differ only in the project directory's name, and recovery stamps the
      // stale run with the time it ran.
      const same = (value: unknown, from = copy) =>
        JSON.parse(
          JSON.stringify(value)
            .replaceAll(from, copy)
            .replace(/"updatedAt":\d+/g, '"updatedAt":0'),
        );
      expect(same(a, project)).toEqual(same(b));
    } finally {
      await blocking.close();
      await plain.close();
    }
  });

  it('makes no thread-pool file call on its read path (the default store makes many)', async () => {
    await recordRuns();
    // Recovered first, so the reads below are reads only.
    await (await openRunStore({ project })).close();
    const blocking = await openRunStore({ project, recoverAtOpen: false, blockingReads: true });
    const plain = await openRunStore({ project, recoverAtOpen: false });
    try {
      expect(await poolFileCalls(() => readAll(blocking))).toBe(0);
      expect(await poolFileCalls(() => readAll(plain))).toBeGreaterThan(20);
    } finally {
      await blocking.close();
      await plain.close();
    }
  });

  it('refuses a symlinked root, run directory and run.json, and a FIFO planted as run.json', async () => {
    await recordRuns();
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    const linkedRoot = join(dir, 'linked-runs');
    symlinkSync(runsRoot(), linkedRoot);
    await expect(
      openRunStore({ project, root: linkedRoot, blockingReads: true }),
    ).rejects.toMatchObject({ code: 'WF_CATALOG_RUN_UNSAFE_PATH' });

    renameSync(runDir('run-0'), join(outside, 'run-0'));
    symlinkSync(join(outside, 'run-0'), runDir('run-0'));
    writeFileSync(join(outside, 'run.json'), '{"format":"wf.run"}');
    rmSync(join(runDir('run-1'), 'run.json'));
    symlinkSync(join(outside, 'run.json'), join(runDir('run-1'), 'run.json'));
    rmSync(join(runDir('run-2'), 'run.json'));
    expect(spawnSync('mkfifo', [join(runDir('run-2'), 'run.json')]).status).toBe(0);

    const store = await openRunStore({ project, recoverAtOpen: false, blockingReads: true });
    try {
      for (const runId of ['run-0', 'run-1', 'run-2'])
        expect(await store.show(runId), runId).toMatchObject({
          ok: false,
          error: { code: 'WF_CATALOG_RUN_UNSAFE_PATH' },
        });
      await expect(store.events('run-0')).rejects.toMatchObject({
        code: 'WF_CATALOG_RUN_UNSAFE_PATH',
      });
    } finally {
      await store.close();
    }
    expect(existsSync(join(outside, 'run-0', 'run.json'))).toBe(true);
  });
});

describe('BLOCKING_IO handles', () => {
  it('forget their descriptor when closed: a second close or a late read never reaches its next owner', async () => {
    const a = join(dir, 'a.txt');
    const b = join(dir, 'b.txt');
    writeFileSync(a, 'aaaa');
    writeFileSync(b, 'bbbb');
    const first = await BLOCKING_IO.open(a, 0);
    const fd = first.fd;
    await first.close();
    // The lowest free number goes to the next open: b now has a's old descriptor.
    const next = openSync(b, 'r');
    try {
      expect(next).toBe(fd);
      await first.close();
      await expect(first.read(Buffer.alloc(4), 0, 4, 0)).rejects.toMatchObject({ code: 'EBADF' });
      await expect(first.stat()).rejects.toMatchObject({ code: 'EBADF' });
      expect(readFileSync(next, 'utf8')).toBe('bbbb');
    } finally {
      closeSync(next);
    }
  });

  it('reject with the code fs/promises gives', async () => {
    await expect(BLOCKING_IO.open(join(dir, 'absent'), 0)).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(BLOCKING_IO.readdir(join(dir, 'absent'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
