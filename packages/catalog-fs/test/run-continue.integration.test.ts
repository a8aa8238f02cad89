// Continuing a run (beginOrContinue): a durable backend re-executes a run after its executor was
// lost, on a process whose store already holds it (restarted in place, or sharing the directory).
// The same start continues the recorded run, appending its events after the recorded ones; a
// different start under that id is refused; detach leaves a run unended for another process.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

let cleanup: () => void;
let project: string;
let store: RunStore;

beforeEach(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir('wf-continue-'));
  project = join(dir, 'project');
  store = await openRunStore({ project });
});
afterEach(async () => {
  await store.close();
  cleanup();
});

const runDir = (runId: string) => join(project, '.dsh', 'workflow-runs', runId);
const lines = (runId: string, file: string) =>
  readFileSync(join(runDir(runId), file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const entry = (n: number) => ({
  seq: n,
  settleSeq: n,
  method: 'log',
  input: { n },
  outcome: { ok: true as const, value: null },
  settledAt: n,
});

it('another process continues a run recorded by one that died: events appended, journal anew', async () => {
  const first = await openRunStore({ project });
  expect(await first.beginOrContinue(startRecord('run-c'))).toEqual({ continued: false });
  for (let seq = 1; seq <= 3; seq++) first.event(event('run-c', seq));
  first.journal('run-c', entry(1));
  first.journal('run-c', entry(2));
  await first.flush();
  // The executor is lost without finishing: its store is dropped, the record stays `running`.
  await first.detach('run-c');
  await first.close();

  // Same start, later startedAt (another attempt): continued, not refused.
  expect(await store.beginOrContinue(startRecord('run-c', { startedAt: Date.now() + 5 }))).toEqual({
    continued: true,
  });
  for (let seq = 1; seq <= 2; seq++) store.event(event('run-c', seq));
  store.journal('run-c', entry(1));
  await store.finish('run-c', finishRecord('completed', { result: 7 }));

  expect(lines('run-c', 'events.jsonl').map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  expect(lines('run-c', 'journal.jsonl').map((e) => e.settleSeq)).toEqual([1]);
  const shown = await store.show('run-c');
  expect(shown.ok && shown.run.snapshot).toMatchObject({
    status: 'completed',
    owner: { pid: process.pid },
  });
  expect(shown.ok && shown.run.snapshot?.lastSeq).toBe(5);
});

it('numbers on from the log, not from a stale run.json, past a torn last line', async () => {
  const first = await openRunStore({ project, snapshotIntervalMs: 60_000 });
  await first.beginOrContinue(startRecord('run-t'));
  for (let seq = 1; seq <= 6; seq++) first.event(event('run-t', seq));
  await first.flush();
  await first.detach('run-t');
  await first.close();
  // run.json as a coalesced write left it (lastSeq 2), the log cut mid-line by a SIGKILL.
  const file = join(runDir('run-t'), 'run.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), lastSeq: 2 }));
  appendFileSync(join(runDir('run-t'), 'events.jsonl'), '{"seq":7,"runId":"run-t","ty');
  await store.beginOrContinue(startRecord('run-t'));
  store.event(event('run-t', 1));
  await store.finish('run-t', finishRecord());
  const text = readFileSync(join(runDir('run-t'), 'events.jsonl'), 'utf8').split('\n');
  expect(text.at(-2)).toContain('"seq":7');
  expect(JSON.parse(text.at(-2) as string).seq).toBe(7);
  expect((await store.events('run-t')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
});

it('a record recovery marked interrupted is continued too, and ends as its last attempt ends', async () => {
  await store.beginOrContinue(startRecord('run-i'));
  store.event(event('run-i', 1));
  await store.finish('run-i', finishRecord('interrupted'));
  expect(await store.beginOrContinue(startRecord('run-i'))).toEqual({ continued: true });
  const live = await store.show('run-i');
  expect(live.ok && live.run.snapshot?.status).toBe('running');
  expect(live.ok && live.run.snapshot?.endedAt).toBeUndefined();
  store.event(event('run-i', 1));
  await store.finish('run-i', finishRecord('completed'));
  expect(lines('run-i', 'events.jsonl').map((e) => e.seq)).toEqual([1, 2]);
});

it('an attempt in the same process continues the live run', async () => {
  await store.beginOrContinue(startRecord('run-l'));
  store.event(event('run-l', 1));
  store.event(event('run-l', 2));
  expect(await store.beginOrContinue(startRecord('run-l'))).toEqual({ continued: true });
  store.event(event('run-l', 1));
  await store.finish('run-l', finishRecord());
  expect(lines('run-l', 'events.jsonl').map((e) => e.seq)).toEqual([1, 2, 3]);
});

it('a different run under the same id is refused, on disk and live', async () => {
  await store.beginOrContinue(startRecord('run-x'));
  await expect(store.beginOrContinue(startRecord('run-x', { seed: 43 }))).rejects.toMatchObject({
    code: 'WF_CATALOG_RUN_EXISTS',
  });
  await store.finish('run-x', finishRecord());
  for (const other of [{ seed: 43 }, { args: { request: 'y' } }, { source: 'x' }])
    await expect(store.beginOrContinue(startRecord('run-x', other))).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_EXISTS',
    });
  // begin keeps refusing any second begin
  await expect(store.begin(startRecord('run-x'))).rejects.toMatchObject({
    code: 'WF_CATALOG_RUN_EXISTS',
  });
});
