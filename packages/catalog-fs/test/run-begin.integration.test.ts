// begin() records a run's start: its snapshots (start.json, manifest.json, script.js and a
// capsule), side by side and durable before run.json, written last, makes it a run. Measured on
// the real filesystem with the fsyncs it issues: the snapshot files' fsyncs are in flight
// together and one directory fsync publishes them all, where one file after another cost a round
// of fsyncs each (`wf run` waits for begin() before its workflow starts).
import { fstatSync, readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { tempDir } from './helpers/fixtures.js';
import { startRecord } from './helpers/runs.js';

let dir: string;
let cleanup: () => void;
let store: RunStore;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('wf-begin-'));
  store = await openRunStore({ project: dir });
});
afterAll(async () => {
  await store.close();
  cleanup();
});

/** Every FileHandle#sync in the process, patched on the class FileHandle's prototype. */
async function syncSpy() {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const sync = proto.sync;
  const log: { dir: boolean; start: number; end: number }[] = [];
  let clock = 0;
  proto.sync = async function traced(this: { fd: number }) {
    const entry = { dir: fstatSync(this.fd).isDirectory(), start: clock++, end: -1 };
    log.push(entry);
    try {
      return await sync.call(this);
    } finally {
      entry.end = clock++;
    }
  };
  const restoreSync = () => {
    proto.sync = sync;
  };
  return { log, restore: restoreSync };
}
let restore: (() => void) | undefined;
afterEach(() => restore?.());

it('fsyncs the snapshot files together, publishes them with one directory fsync, then run.json with another', async () => {
  const spy = await syncSpy();
  restore = spy.restore;
  await store.begin({ ...startRecord('run-side-by-side'), capsule: { format: 'dsh.workflow' } });
  spy.restore();
  const runDir = join(store.root, 'run-side-by-side');
  expect(readdirSync(runDir).sort()).toEqual([
    'capsule.workflow.json',
    'events.jsonl',
    'journal.jsonl',
    'manifest.json',
    'run.json',
    'script.js',
    'start.json',
  ]);
  expect(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'))).toMatchObject({
    runId: 'run-side-by-side',
    status: 'running',
  });
  expect(readFileSync(join(runDir, 'script.js'), 'utf8')).toBe(startRecord('x').source);
  // Files: the four snapshots, then run.json's temp file; directories: the run's, twice (the
  // runs index's append may add its own fsyncs after them).
  const files = spy.log.filter((s) => !s.dir);
  const dirs = spy.log.filter((s) => s.dir);
  expect(files.length, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(5);
  expect(dirs.length, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(2);
  // The four snapshot files' fsyncs overlapped (one after another, none would)...
  const snapshotSyncs = files.slice(0, 4);
  const inFlight = (at: number) => snapshotSyncs.filter((s) => s.start <= at && at < s.end).length;
  const most = Math.max(...snapshotSyncs.map((s) => inFlight(s.start)));
  expect(most, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(2);
  // ...one directory fsync followed them, and run.json's file and directory fsyncs came after it.
  const [publish, runJson] = dirs;
  expect(publish?.start).toBeGreaterThan(Math.max(...snapshotSyncs.map((s) => s.end)));
  expect(files[4]?.start).toBeGreaterThan(publish?.end ?? Number.POSITIVE_INFINITY);
  expect(runJson?.start).toBeGreaterThan(files[4]?.end ?? Number.POSITIVE_INFINITY);
});
