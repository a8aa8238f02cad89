// The run store on the real filesystem: the RunRecorder surface, the on-disk format, torn lines,
// coalescing, write-once artifacts, ownership and recovery, deletion rules, retention, partitions.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { setSafeDirHook } from '../src/internal/safe-dir.js';
import { tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

let dir: string;
let cleanup: () => void;
let project: string;
let store: RunStore;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('wf-runs-'));
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
const deadPid = () => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
};

describe('recording a run', () => {
  it('writes the documented layout and reads it back', async () => {
    await store.begin({ ...startRecord('run-1'), capsule: { format: 'dsh.workflow' } });
    for (let seq = 1; seq <= 10; seq++) store.event(event('run-1', seq));
    store.journal('run-1', {
      seq: 1,
      settleSeq: 1,
      method: 'log',
      input: { m: 1 },
      outcome: { ok: true, value: null },
      settledAt: 5,
    });
    store.update('run-1', { phase: 'investigate', activeAgents: 2, runId: 'hijack', owner: 'x' });
    const art = await store.artifact('run-1', 'audit report/../../x', { findings: [1, 2] });
    expect(art.ref).toMatch(/^artifacts\/audit-report-x-[0-9a-f]{16}\.json$/);
    await store.finish('run-1', finishRecord('completed', { result: { text: 'y'.repeat(5000) } }));

    expect(readdirSync(runDir('run-1')).sort()).toEqual([
      'artifacts',
      'capsule.workflow.json',
      'events.jsonl',
      'journal.jsonl',
      'manifest.json',
      'result.json',
      'run.json',
      'script.js',
      'start.json',
    ]);
    const snap = readJson(join(runDir('run-1'), 'run.json'));
    expect(snap).toMatchObject({
      format: 'wf.run',
      version: 1,
      runId: 'run-1',
      workflow: 'review',
      status: 'completed',
      execution: 'capability-generated',
      eventCount: 10,
      lastSeq: 10,
      phase: 'investigate',
      activeAgents: 2,
      artifacts: [{ name: 'audit report/../../x', ref: art.ref }],
      cost: { agentsStarted: 1 },
    });
    expect(snap.resultSummary.length).toBeLessThan(2100);
    expect(snap.resultSummary).toMatch(/more characters\)$/);
    expect(readJson(join(runDir('run-1'), art.ref))).toEqual({ findings: [1, 2] });
    const lines = readFileSync(join(runDir('run-1'), 'events.jsonl'), 'utf8').split('\n');
    expect(lines).toHaveLength(11);
    expect(JSON.parse(lines[0]!)).toMatchObject({ seq: 1, runId: 'run-1', type: 'workflow-log' });
    expect((await store.events('run-1', { after: 7 })).map((e) => e.seq)).toEqual([8, 9, 10]);
    const loaded = await store.load('run-1');
    expect(loaded?.start).toMatchObject({ runId: 'run-1', seed: 42, args: { request: 'x' } });
    expect(loaded?.journal).toHaveLength(1);
    expect(await store.load('run-missing')).toBeUndefined();
  });

  it('refuses a second begin for one run id and bad ids', async () => {
    await store.begin(startRecord('run-2'));
    await expect(store.begin(startRecord('run-2'))).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_EXISTS',
    });
    for (const bad of ['../x', '', '.hidden', 'a/b', 'x'.repeat(200)]) {
      await expect(store.begin(startRecord(bad))).rejects.toMatchObject({
        code: 'WF_CATALOG_RUN_INVALID_ID',
      });
    }
  });

  it('keeps journal entries that settle out of issue order, for resume', async () => {
    await store.begin(startRecord('run-j'));
    const entry = (seq: number, settleSeq: number) => ({
      seq,
      settleSeq,
      method: 'runAgent',
      input: { name: `t${seq}` },
      outcome: { ok: true as const, value: seq },
      settledAt: 1000 + settleSeq,
    });
    store.journal('run-j', entry(2, 1));
    store.journal('run-j', entry(1, 2));
    store.journal('run-j', entry(3, 3));
    await store.finish('run-j', finishRecord());
    const loaded = await store.load('run-j');
    expect(loaded?.journal.map((e) => [e.seq, e.settleSeq])).toEqual([
      [2, 1],
      [1, 2],
      [3, 3],
    ]);
  });

  it('artifacts are write-once', async () => {
    await store.begin(startRecord('run-3'));
    await store.artifact('run-3', 'a', 1);
    await expect(store.artifact('run-3', 'a', 2)).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_ARTIFACT_EXISTS',
    });
    // Two names that sanitize alike still get their own files.
    const x = await store.artifact('run-3', 'a b', 1);
    const y = await store.artifact('run-3', 'a/b', 1);
    expect(x.ref).not.toBe(y.ref);
    // A second store in another process would not have the in-memory set: the file refuses.
    await store.finish('run-3', finishRecord());
  });

  it('coalesces run.json instead of rewriting it on every event', async () => {
    const slow = await openRunStore({ project, snapshotIntervalMs: 60_000, root: 'slow-runs' });
    await slow.begin(startRecord('run-c'));
    for (let seq = 1; seq <= 1000; seq++) slow.event(event('run-c', seq));
    expect(await slow.events('run-c')).toHaveLength(1000);
    const before = readJson(join(project, 'slow-runs', 'run-c', 'run.json'));
    expect(before.eventCount).toBe(0);
    await slow.flush();
    expect(readJson(join(project, 'slow-runs', 'run-c', 'run.json')).eventCount).toBe(1000);
    await slow.close();
  });

  it('tails: events(after) returns only newer events, reading only appended bytes', async () => {
    await store.begin(startRecord('run-tail'));
    for (let seq = 1; seq <= 5; seq++) store.event(event('run-tail', seq));
    expect((await store.events('run-tail')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    for (let seq = 6; seq <= 8; seq++) store.event(event('run-tail', seq));
    expect((await store.events('run-tail', { after: 5 })).map((e) => e.seq)).toEqual([6, 7, 8]);
    expect((await store.events('run-tail', { after: 8 })).map((e) => e.seq)).toEqual([]);
    // Going back re-reads from the start.
    expect((await store.events('run-tail', { after: 2, limit: 2 })).map((e) => e.seq)).toEqual([
      3, 4,
    ]);
    await store.finish('run-tail', finishRecord());
    // A record replaced under the same id is read afresh, not from the old offset.
    expect(await store.delete('run-tail')).toMatchObject({ ok: true });
    await store.begin(startRecord('run-tail'));
    store.event(event('run-tail', 1));
    expect((await store.events('run-tail', { after: 0 })).map((e) => e.seq)).toEqual([1]);
    await store.finish('run-tail', finishRecord());
  });

  it('ignores a torn last line and corrupt lines, never failing', async () => {
    await store.begin(startRecord('run-t'));
    for (let seq = 1; seq <= 5; seq++) store.event(event('run-t', seq));
    await store.finish('run-t', finishRecord());
    const file = join(runDir('run-t'), 'events.jsonl');
    appendFileSync(file, '{"seq":6,"runId":"run-t","type":"workfl');
    expect((await store.events('run-t')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    const text = readFileSync(file, 'utf8').split('\n');
    text[2] = '{garbage';
    writeFileSync(file, text.join('\n'));
    expect((await store.events('run-t')).map((e) => e.seq)).toEqual([1, 2, 4, 5]);
  });

  it('keeps an oversized or unserializable event as a truncated envelope', async () => {
    const small = await openRunStore({ project, root: 'small', maxLineBytes: 1000 });
    await small.begin(startRecord('run-big'));
    small.event(event('run-big', 1, 'workflow-log', { blob: 'z'.repeat(5000) }));
    small.event(event('run-big', 2, 'workflow-log', { n: 10n as unknown as number }));
    const events = await small.events('run-big');
    expect(events.map((e) => [e.seq, e.data.truncated])).toEqual([
      [1, true],
      [2, true],
    ]);
    await small.close();
  });
});

describe('appending lines (once per entry, synchronous appends)', () => {
  const entry = (seq: number, value: unknown) => ({
    seq,
    settleSeq: seq,
    method: 'log',
    input: { m: seq },
    outcome: { ok: true as const, value },
    settledAt: seq,
  });
  const lines = (runId: string, file: string) =>
    readFileSync(join(runDir(runId), file), 'utf8').split('\n');

  it("stores the engine's own journal text when it is one line, and serialises anything else", async () => {
    await store.begin(startRecord('run-text'));
    const first = entry(1, 'a');
    store.journal('run-text', first, JSON.stringify(first));
    // The store takes the text it is given (the engine already serialised the entry)...
    store.journal('run-text', entry(2, 'b'), '{"given":true}');
    // ...but never a text that would break the one-line-per-entry framing, nor a non-string.
    store.journal('run-text', entry(3, 'c'), '{"a":1}\n{"forged":true}');
    store.journal('run-text', entry(4, 'd'), 42 as never);
    store.journal('run-text', entry(5, 'e'));
    await store.finish('run-text', finishRecord());
    expect(lines('run-text', 'journal.jsonl')).toEqual([
      JSON.stringify(first),
      '{"given":true}',
      JSON.stringify(entry(3, 'c')),
      JSON.stringify(entry(4, 'd')),
      JSON.stringify(entry(5, 'e')),
      '',
    ]);
  });

  it('routes interleaved lines of two live runs to their own files, and none to a finished run', async () => {
    await store.begin(startRecord('run-a'));
    await store.begin(startRecord('run-b'));
    for (let seq = 1; seq <= 6; seq++) {
      store.event(event('run-a', seq));
      store.event(event('run-b', seq));
      store.journal('run-b', entry(seq, `b${seq}`));
    }
    await store.finish('run-a', finishRecord());
    // After finish the run is no longer live: a straggler is dropped, not appended.
    store.event(event('run-a', 7));
    store.event(event('run-b', 7));
    await store.finish('run-b', finishRecord());
    const seqs = (runId: string) =>
      lines(runId, 'events.jsonl')
        .filter((l) => l !== '')
        .map((l) => [JSON.parse(l).runId, JSON.parse(l).seq]);
    expect(seqs('run-a')).toEqual([1, 2, 3, 4, 5, 6].map((n) => ['run-a', n]));
    expect(seqs('run-b')).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ['run-b', n]));
    expect(lines('run-a', 'journal.jsonl')).toEqual(['']);
    expect(lines('run-b', 'journal.jsonl')).toHaveLength(7);
  });
});

describe('ownership, recovery and deletion', () => {
  it('never deletes an active run, even with force', async () => {
    await store.begin(startRecord('run-a'));
    expect(await store.delete('run-a', { force: true })).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_ACTIVE' },
    });
    // A second store in the same process sees it as active too, and does not recover it.
    const other = await openRunStore({ project });
    expect((await other.show('run-a')).ok && (await other.show('run-a'))).toMatchObject({
      run: { active: true },
    });
    expect(await other.delete('run-a', { force: true })).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_ACTIVE' },
    });
    expect(existsSync(runDir('run-a'))).toBe(true);
    await store.finish('run-a', finishRecord());
    expect(await other.delete('run-a')).toMatchObject({ ok: true });
    expect(existsSync(runDir('run-a'))).toBe(false);
  });

  it('treats a run owned by another live process with a fresh lease as active', async () => {
    await store.begin(startRecord('run-o'));
    await store.close();
    const file = join(runDir('run-o'), 'run.json');
    const snap = readJson(file);
    snap.owner = {
      pid: process.ppid,
      token: 'other',
      host: snap.owner.host,
      leaseUntil: Date.now() + 60_000,
    };
    writeFileSync(file, JSON.stringify(snap));
    const reopened = await openRunStore({ project });
    expect((await reopened.recover()).interrupted).toEqual([]);
    expect(await reopened.delete('run-o', { force: true })).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_ACTIVE' },
    });
    // The same owner with an expired lease is stale.
    snap.owner.leaseUntil = Date.now() - 1;
    writeFileSync(file, JSON.stringify(snap));
    expect((await reopened.recover()).interrupted).toEqual(['run-o']);
  });

  it('recover() marks runs whose owner died interrupted; force is for stale records only', async () => {
    await store.begin(startRecord('run-d'));
    store.event(event('run-d', 1));
    await store.close();
    const file = join(runDir('run-d'), 'run.json');
    const snap = readJson(file);
    snap.owner.pid = deadPid();
    snap.owner.token = 'gone';
    snap.status = 'paused';
    writeFileSync(file, JSON.stringify(snap));
    // Without recovery, a stale non-terminal record needs force.
    const raw = await openRunStore({ project, recoverAtOpen: false });
    expect(await raw.delete('run-d')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_NOT_TERMINAL' },
    });
    const reopened = await openRunStore({ project });
    const shown = await reopened.show('run-d');
    expect(shown.ok && shown.run.snapshot).toMatchObject({
      status: 'interrupted',
      interruptedFrom: 'paused',
      error: { code: 'WF_CATALOG_RUN_INTERRUPTED' },
    });
    expect(await reopened.delete('run-d')).toMatchObject({ ok: true });
  });

  it('force deletes a stale non-terminal record', async () => {
    await store.begin(startRecord('run-s'));
    await store.close();
    const raw = await openRunStore({ project, recoverAtOpen: false });
    expect(await raw.delete('run-s', { force: true })).toMatchObject({ ok: true });
    expect(existsSync(runDir('run-s'))).toBe(false);
  });

  it('prunes terminal runs only, honouring keep, olderThan and dryRun', async () => {
    for (let i = 0; i < 5; i++) {
      await store.begin(startRecord(`run-p${i}`));
      await store.finish(
        `run-p${i}`,
        finishRecord('completed', { endedAt: Date.now() - (10 - i) * 60_000 }),
      );
    }
    await store.begin(startRecord('run-live'));
    const dry = await store.prune({ keep: 2, dryRun: true });
    expect([...dry.pruned].sort()).toEqual(['run-p0', 'run-p1', 'run-p2']);
    expect(existsSync(runDir('run-p0'))).toBe(true);
    const old = await store.prune({ keep: 0, olderThan: 8.5 * 60_000 });
    expect([...old.pruned].sort()).toEqual(['run-p0', 'run-p1']);
    const rest = await store.prune({ keep: 1 });
    expect([...rest.pruned].sort()).toEqual(['run-p2', 'run-p3']);
    expect((await store.list()).map((s) => s.runId).sort()).toEqual(['run-live', 'run-p4']);
  });

  it('renames with a display alias and resolves by id or alias', async () => {
    await store.begin(startRecord('run-r'));
    await store.finish('run-r', finishRecord());
    expect(await store.rename('run-r', 'Friday review')).toMatchObject({ ok: true });
    expect(await store.resolve('Friday review')).toMatchObject({ ok: true, runId: 'run-r' });
    expect(await store.resolve('run-r')).toMatchObject({ ok: true, runId: 'run-r' });
    expect(await store.resolve('nope')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_NOT_FOUND' },
    });
    expect((await store.list())[0]).toMatchObject({ runId: 'run-r', displayName: 'Friday review' });
    expect(await store.rename('run-r', 'bad\nname')).toMatchObject({ ok: false });
  });

  it('resolving a target that is no run id reads only the runs that have an alias', async () => {
    for (let i = 0; i < 30; i++) {
      await store.begin(startRecord(`run-${i}`));
      await store.finish(`run-${i}`, finishRecord());
    }
    await store.rename('run-3', 'twin');
    await store.rename('run-17', 'twin');
    await store.rename('run-20', 'solo');
    const reads: string[] = [];
    setSafeDirHook((event, path) => {
      if (event === 'file-read') reads.push(path.slice(path.lastIndexOf('/') + 1));
    });
    try {
      expect(await store.resolve('solo')).toMatchObject({ ok: true, runId: 'run-20' });
      const twin = await store.resolve('twin');
      expect(twin.ok).toBe(false);
      if (!twin.ok) expect(twin.error.message).toBe('"twin" names 2 runs: run-17, run-3');
      expect(await store.resolve('run-99')).toMatchObject({
        ok: false,
        error: { code: 'WF_CATALOG_RUN_NOT_FOUND', message: 'no run or alias "run-99"' },
      });
    } finally {
      setSafeDirHook(undefined);
    }
    // Three aliases read per search, and no run.json (a mistyped id used to read all 30).
    expect(reads.filter((f) => f === 'run.json')).toEqual([]);
    expect(reads.filter((f) => f === 'alias.json')).toHaveLength(9);
  });

  it('an alias behind a symlinked run directory or a symlinked alias.json is never read', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    for (const id of ['run-moved', 'run-linked-alias']) {
      await store.begin(startRecord(id));
      await store.finish(id, finishRecord());
    }
    // A run directory replaced by a link to one outside the store, its alias.json with it.
    await store.rename('run-moved', 'outside-name');
    renameSync(runDir('run-moved'), join(outside, 'run-moved'));
    symlinkSync(join(outside, 'run-moved'), runDir('run-moved'));
    // An alias.json that is a link to a file outside.
    writeFileSync(join(outside, 'alias.json'), JSON.stringify({ displayName: 'linked-name' }));
    symlinkSync(join(outside, 'alias.json'), join(runDir('run-linked-alias'), 'alias.json'));
    const reads: string[] = [];
    setSafeDirHook((event, path) => {
      if (event === 'file-read') reads.push(path);
    });
    try {
      for (const name of ['outside-name', 'linked-name']) {
        expect(await store.resolve(name)).toMatchObject({
          ok: false,
          error: { code: 'WF_CATALOG_RUN_NOT_FOUND' },
        });
      }
    } finally {
      setSafeDirHook(undefined);
    }
    expect(reads).toEqual([]);
  });

  it('lists an unreadable run.json with an error instead of failing', async () => {
    await store.begin(startRecord('run-x'));
    await store.finish('run-x', finishRecord());
    writeFileSync(join(runDir('run-x'), 'run.json'), '{"format":"wf.run"');
    const [summary] = await store.list();
    expect(summary).toMatchObject({ runId: 'run-x', error: { code: 'WF_CATALOG_RUN_CORRUPT' } });
  });
});

describe('partitions and path safety', () => {
  it('partitions an absolute root by project, with a marker', async () => {
    const shared = join(dir, 'shared-runs');
    const other = join(dir, 'other');
    mkdirSync(other);
    const a = await openRunStore({ project, root: shared });
    const b = await openRunStore({ project: other, root: shared });
    expect(a.root).not.toBe(b.root);
    expect(readJson(join(a.root, '.project.json'))).toEqual({ canonicalProjectDirectory: project });
    await a.begin(startRecord('run-1'));
    await a.finish('run-1', finishRecord());
    expect(await b.list()).toEqual([]);
    writeFileSync(
      join(a.root, '.project.json'),
      JSON.stringify({ canonicalProjectDirectory: other }),
    );
    await expect(openRunStore({ project, root: shared })).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_PARTITION_MISMATCH',
    });
  });

  it('refuses a symlinked root, run directory and artifacts directory', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    const linkedRoot = join(dir, 'linked-runs');
    symlinkSync(outside, linkedRoot);
    await expect(openRunStore({ project, root: linkedRoot })).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_UNSAFE_PATH',
    });

    await store.begin(startRecord('run-l'));
    await store.artifact('run-l', 'first', 1);
    rmSync(join(runDir('run-l'), 'artifacts'), { recursive: true });
    symlinkSync(outside, join(runDir('run-l'), 'artifacts'));
    await expect(store.artifact('run-l', 'second', 2)).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_UNSAFE_PATH',
    });
    expect(readdirSync(outside)).toEqual([]);
    await store.finish('run-l', finishRecord());

    renameSync(runDir('run-l'), join(outside, 'run-l'));
    symlinkSync(join(outside, 'run-l'), runDir('run-l'));
    expect(await store.show('run-l')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_RUN_UNSAFE_PATH' },
    });
    await expect(store.events('run-l')).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_UNSAFE_PATH',
    });
    expect(await store.delete('run-l', { force: true })).toMatchObject({ ok: false });
    expect(existsSync(join(outside, 'run-l', 'run.json'))).toBe(true);
  });
});
