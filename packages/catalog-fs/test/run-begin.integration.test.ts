// begin() records a run's start: its snapshots (start.json, manifest.json, script.js and a
// capsule) and run.json, side by side in a private temp directory, published whole by one rename.
// Measured on the real filesystem with the fsyncs it issues: the files' fsyncs are in flight
// together, one fsync of the temp directory follows them and one of the store directory the
// rename, and the run's directory does not exist until it is complete (`wf run` waits for
// begin() before its workflow starts).
import { existsSync, fstatSync, readdirSync, readFileSync } from 'node:fs';
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
async function syncSpy(published: () => boolean) {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const sync = proto.sync;
  const log: { dir: boolean; start: number; end: number; published: boolean }[] = [];
  let clock = 0;
  proto.sync = async function traced(this: { fd: number }) {
    const dir = fstatSync(this.fd).isDirectory();
    const entry = { dir, start: clock++, end: -1, published: published() };
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

it('fsyncs the files together, then the temp directory, and publishes the run whole with one rename', async () => {
  const runDir = join(store.root, 'run-side-by-side');
  const spy = await syncSpy(() => existsSync(runDir));
  restore = spy.restore;
  await store.begin({ ...startRecord('run-side-by-side'), capsule: { format: 'dsh.workflow' } });
  spy.restore();
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
  // No temp directory is left beside the run.
  expect(readdirSync(store.root).filter((f) => f.startsWith('.wf-tmp-'))).toEqual([]);
  // Files: the four snapshots and run.json; directories: the temp one, then the store's (the
  // runs index's append may add its own fsyncs after them).
  const files = spy.log.filter((s) => !s.dir);
  const dirs = spy.log.filter((s) => s.dir);
  expect(files.length, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(5);
  expect(dirs.length, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(2);
  // The five files' fsyncs overlapped (one after another, none would)...
  const fileSyncs = files.slice(0, 5);
  const inFlight = (at: number) => fileSyncs.filter((s) => s.start <= at && at < s.end).length;
  const most = Math.max(...fileSyncs.map((s) => inFlight(s.start)));
  expect(most, JSON.stringify(spy.log)).toBeGreaterThanOrEqual(2);
  // ...the temp directory's fsync followed them all, before the run was published, and the store
  // directory's fsync came after the rename.
  const [temp, publish] = dirs;
  expect(temp?.start).toBeGreaterThan(Math.max(...fileSyncs.map((s) => s.end)));
  expect(fileSyncs.some((s) => s.published) || temp?.published).toBe(false);
  expect(publish?.start).toBeGreaterThan(temp?.end ?? Number.POSITIVE_INFINITY);
  expect(publish?.published).toBe(true);
});
