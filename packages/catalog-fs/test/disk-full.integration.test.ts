// A full disk, for real: a 512 KiB tmpfs mounted for the test (only where we may mount, i.e. as
// root with CAP_SYS_ADMIN; skipped elsewhere). A save that does not fit fails with WF_CATALOG_IO
// and loses nothing; events that hit ENOSPC are kept and written once space returns, with no
// split or repeated line. Then, without root, every write path failed in turn (injected).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog, openRunStore } from '../src/index.js';
import { type Fault, type FaultyFs, installFaultyFs } from './helpers/faulty-fs.js';
import { makeCapsule, memoryTmp, tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

const ls = (path: string) => (existsSync(path) ? readdirSync(path) : []);

const { dir, cleanup } = tempDir('wf-diskfull-');
const mnt = join(dir, 'small');

function tryMount(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mnt], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

mkdirSync(mnt);
const mounted = tryMount();

afterAll(async () => {
  // On a loaded machine a worker's last close can still be in flight: retry, then detach lazily
  // so a slow teardown never leaves a mount behind or fails the file.
  for (let attempt = 0; mounted && attempt < 20; attempt++) {
    try {
      execFileSync('umount', [mnt], { stdio: 'ignore' });
      break;
    } catch {
      if (attempt === 19) execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  cleanup();
});

const fillers: string[] = [];
// A test that fails while the disk is full must not fail the ones after it.
afterEach(() => {
  for (const filler of fillers.splice(0)) rmSync(filler, { force: true });
});

/** Fills the filesystem, leaving about `leave` bytes free. */
function fill(leave: number): string {
  const filler = join(mnt, `filler-${Math.random().toString(36).slice(2)}`);
  fillers.push(filler);
  const st = execFileSync('df', ['--output=avail', '-B1', mnt]).toString().split('\n')[1]!.trim();
  const avail = Number(st);
  writeFileSync(filler, Buffer.alloc(Math.max(0, avail - leave)));
  return filler;
}

describe.runIf(mounted)('disk full (real tmpfs)', () => {
  it('a save or replace that does not fit fails cleanly and loses nothing', async () => {
    const project = join(mnt, 'workflows');
    const catalog = await openCatalog({ project });
    expect((await catalog.save('keep', makeCapsule('keep', 'v1'))).ok).toBe(true);
    const big = makeCapsule('big');
    big.source = `async function run(wf, args) { return '${'x'.repeat(60_000)}'; }`;
    const bigger = makeCapsule('keep', 'v2');
    bigger.source = `// v2\nasync function run(wf, args) { return '${'y'.repeat(60_000)}'; }`;
    const filler = fill(8 * 1024);
    const saved = await catalog.save('big', big);
    expect(saved).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
    expect(!saved.ok && saved.error.message).toMatch(/disk is full/);
    const replaced = await catalog.save('keep', bigger, { replace: true });
    expect(replaced).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
    expect(readdirSync(project).filter((f) => !f.startsWith('.archive'))).toEqual([
      'keep.workflow.json',
    ]);
    expect(readFileSync(join(project, 'keep.workflow.json'), 'utf8')).toContain('// v1');
    rmSync(filler);
    expect((await catalog.save('keep', bigger, { replace: true })).ok).toBe(true);
    rmSync(project, { recursive: true });
  });

  it('events that hit ENOSPC are retried from the exact byte once space returns', async () => {
    const project = join(mnt, 'runs-project');
    const store = await openRunStore({ project, snapshotIntervalMs: 60_000, leaseMs: 300 });
    await store.begin(startRecord('run-full'));
    for (let seq = 1; seq <= 20; seq++) store.event(event('run-full', seq));
    await store.flush();
    const filler = fill(3000);
    // ~200 bytes each: the write runs out of space part-way through a line.
    for (let seq = 21; seq <= 200; seq++)
      store.event(event('run-full', seq, 'workflow-log', { pad: 'p'.repeat(100) }));
    await store.flush().catch(() => undefined);
    const partial = readFileSync(
      join(project, '.dsh', 'workflow-runs', 'run-full', 'events.jsonl'),
      'utf8',
    );
    expect(partial.length).toBeLessThan(200 * 150);
    // The kernel stopped inside a line: the retry must continue from that exact byte.
    expect(partial.endsWith('\n')).toBe(false);
    await expect(
      store.finish('run-full', finishRecord('completed', { result: 'R' })).then(
        () => 'finished',
        (e: { code?: string }) => e.code,
      ),
    ).resolves.toBe('WF_CATALOG_RUN_IO');
    // Invariant 12: nothing on disk says the run ended, while its end could not be written.
    const runDir = join(project, '.dsh', 'workflow-runs', 'run-full');
    const onDisk = () => JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')).status;
    expect(onDisk()).toBe('running');
    expect(existsSync(join(runDir, 'result.json'))).toBe(false);
    rmSync(filler);
    // finish() rejected while the disk was full; the run stayed live with its lines buffered,
    // and the lease tick finishes it once space returns, without another call.
    let status: unknown;
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const shown = await store.show('run-full');
      status = shown.ok ? shown.run.snapshot?.status : undefined;
    }
    expect(status).toBe('completed');
    const events = await store.events('run-full');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const lines = readFileSync(
      join(project, '.dsh', 'workflow-runs', 'run-full', 'events.jsonl'),
      'utf8',
    ).split('\n');
    expect(lines.filter(Boolean).every((l) => JSON.parse(l) !== undefined)).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8'))).toEqual({ result: 'R' });
    await store.close();
  });

  it('a finish whose result fits and whose run.json does not records no end', async () => {
    const project = join(mnt, 'finish-project');
    const store = await openRunStore({ project, snapshotIntervalMs: 60_000, leaseMs: 60_000 });
    await store.begin(startRecord('run-end'));
    await store.flush();
    const runDir = join(project, '.dsh', 'workflow-runs', 'run-end');
    // result.json takes the last pages; run.json's rewrite then finds none.
    const filler = fill(4096 + 1024);
    const result = 'r'.repeat(4096);
    await expect(
      store.finish('run-end', finishRecord('completed', { result })),
    ).rejects.toMatchObject({
      code: 'WF_CATALOG_RUN_IO',
    });
    expect(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')).status).toBe('running');
    expect(existsSync(join(runDir, 'result.json'))).toBe(false);
    // The store's close persists what is live: still not an end.
    await store.close();
    expect(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')).status).toBe('running');
    rmSync(filler);
    // Space is back: recovery marks it interrupted (its owner, this store, is closed), resumable.
    const fresh = await openRunStore({ project });
    const shown = await fresh.show('run-end');
    expect(shown.ok && shown.run.snapshot?.status).toBe('interrupted');
    expect((await fresh.load('run-end'))?.start.runId).toBe('run-end');
    await fresh.close();
    rmSync(project, { recursive: true });
  });

  it('a begin that does not fit leaves nothing behind', async () => {
    const project = join(mnt, 'begin-project');
    const store = await openRunStore({ project });
    const root = join(project, '.dsh', 'workflow-runs');
    const filler = fill(0);
    const big = { ...startRecord('run-big'), source: 's'.repeat(64 * 1024) };
    await expect(store.begin(big)).rejects.toMatchObject({ code: 'WF_CATALOG_RUN_IO' });
    expect(readdirSync(root).filter((f) => !f.startsWith('.runs-index'))).toEqual([]);
    expect(await store.list()).toEqual([]);
    rmSync(filler);
    await store.begin(big);
    await store.finish('run-big', finishRecord());
    await store.close();
    rmSync(project, { recursive: true });
  });

  it('recovery that cannot write waits and says why; reads go on', async () => {
    const project = join(mnt, 'recover-project');
    const store = await openRunStore({ project });
    await store.begin(startRecord('run-crashed'));
    await store.begin(startRecord('run-done'));
    await store.finish('run-done', finishRecord());
    await store.close(); // run-crashed stays `running`, its owner's store gone: a crash
    const filler = fill(0);
    const reader = await openRunStore({ project, recoverAtOpen: false });
    const page = await reader.listRecent(10, { recover: true });
    expect(page.runs.map((r) => [r.runId, r.snapshot?.status, r.active])).toEqual([
      ['run-done', 'completed', false],
      ['run-crashed', 'running', false],
    ]);
    expect(page.interrupted).toEqual([]);
    expect(page.deferred).toEqual([
      { runId: 'run-crashed', reason: expect.stringContaining('the disk is full') },
    ]);
    expect((await reader.events('run-done')).length).toBe(0);
    expect((await reader.show('run-crashed')).ok).toBe(true);
    expect(await reader.recover()).toMatchObject({ deferred: [{ runId: 'run-crashed' }] });
    rmSync(filler);
    // The next recovery that can write marks it.
    expect(await reader.recover()).toEqual({ interrupted: ['run-crashed'], deferred: [] });
    await reader.close();
    rmSync(project, { recursive: true });
  });

  it('a catalog whose lock cannot be written leaves no lock and stays readable', async () => {
    const project = join(mnt, 'lock-catalog');
    const catalog = await openCatalog({ project });
    expect((await catalog.save('keep-me', makeCapsule('keep-me', 'v1'))).ok).toBe(true);
    // Room for the new version's temp file (one page), none for the lock file after it.
    const filler = fill(4096);
    const replaced = await catalog.save('keep-me', makeCapsule('keep-me', 'v2'), { replace: true });
    expect(replaced).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
    expect(readdirSync(project).filter((f) => f.startsWith('.wf-'))).toEqual([]);
    // Opening repairs under the lock, which cannot be taken now: the catalog opens all the same.
    const again = await openCatalog({ project });
    expect((await again.list()).entries.map((e) => [e.name, e.valid])).toEqual([['keep-me', true]]);
    expect((await again.load('keep-me')).ok).toBe(true);
    rmSync(filler);
    expect((await again.save('keep-me', makeCapsule('keep-me', 'v2'), { replace: true })).ok).toBe(
      true,
    );
    rmSync(project, { recursive: true });
  });
});

// Every write the run store and the catalog make, failed in turn: a scenario that goes through
// each write path (a run from begin to finish with events, journal, an artifact and an alias; a
// second run deleted; the catalog's save, replace, rename, delete and restore) runs once per
// write call, the Nth failing with ENOSPC or EIO (an injected file system, so no root is needed).
// After each: nothing reported done is missing, nothing half-made is visible, and what failed
// lands once the fault is gone.
describe('the Nth write fails (injected ENOSPC, EIO) on every write path', () => {
  let faults: FaultyFs;
  beforeAll(async () => {
    faults = await installFaultyFs();
  });
  afterAll(() => faults.restore());

  const RESULT = { answer: 'R', list: [1, 2, 3] };

  interface Outcome {
    begun: boolean;
    finished: boolean;
    /** run.json's status and whether result.json existed right after a failed finish(). */
    afterFailedFinish?: { status: unknown; result: boolean };
    saved: Map<string, string>; // marker -> name, for saves that returned ok
    deletedB?: boolean;
    /** The catalog operation after which a lock file was left, if any. */
    lockLeft?: string;
    log: string[];
  }

  const attempt = async (what: string, log: string[], work: () => Promise<unknown>) => {
    try {
      const r = (await work()) as { ok?: boolean; error?: { code: string } } | undefined;
      log.push(`${what}: ${r && r.ok === false ? r.error?.code : 'ok'}`);
      return r?.ok !== false;
    } catch (error) {
      log.push(`${what}: threw ${(error as { code?: string }).code}`);
      return false;
    }
  };

  async function scenario(root: string, fault: Fault | undefined): Promise<Outcome> {
    const out: Outcome = { begun: false, finished: false, saved: new Map(), log: [] };
    const project = join(root, 'p');
    const runDir = join(project, '.dsh', 'workflow-runs', 'run-a');
    const store = await openRunStore({ project, snapshotIntervalMs: 5, leaseMs: 60_000 });
    faults.arm(fault);
    out.begun = await attempt('begin', out.log, () => store.begin(startRecord('run-a')));
    if (out.begun) {
      for (let seq = 1; seq <= 12; seq++) store.event(event('run-a', seq));
      for (let seq = 1; seq <= 3; seq++)
        store.journal('run-a', {
          seq,
          settleSeq: seq,
          method: 'runAgent',
          input: { prompt: `p${seq}` },
          outcome: { ok: true, value: { text: `t${seq}` } },
          settledAt: seq,
        });
      store.update('run-a', { phase: 'main' });
      await attempt('artifact', out.log, () => store.artifact('run-a', 'notes', { n: 1 }));
      await attempt('rename', out.log, () => store.rename('run-a', 'nice'));
      await store.flush();
      out.finished = await attempt('finish', out.log, () =>
        store.finish('run-a', finishRecord('completed', { result: RESULT })),
      );
      if (!out.finished) {
        const text = readFileSync(join(runDir, 'run.json'), 'utf8');
        out.afterFailedFinish = {
          status: (JSON.parse(text) as { status: unknown }).status,
          result: existsSync(join(runDir, 'result.json')),
        };
      }
    }
    if (await attempt('begin b', out.log, () => store.begin(startRecord('run-b')))) {
      await attempt('finish b', out.log, () => store.finish('run-b', finishRecord('failed')));
      out.deletedB = await attempt('delete b', out.log, () => store.delete('run-b'));
    }
    const catalogRoot = join(project, '.dsh', 'workflows');
    const catalog = await openCatalog({ project: catalogRoot });
    // No lock survives a failed write: checked after each operation, before the next one (which
    // would break a stale lock after waiting for it) can hide it.
    const op = async (what: string, work: () => Promise<unknown>) => {
      const ok = await attempt(what, out.log, work);
      if (ls(catalogRoot).some((f) => f.startsWith('.wf-lock'))) out.lockLeft = what;
      return ok;
    };
    const save = async (name: string, marker: string, replace = false) => {
      if (
        await op(`save ${name} ${marker}`, () =>
          catalog.save(name, makeCapsule(name, marker), { replace }),
        )
      )
        out.saved.set(marker, name);
    };
    await save('alpha', 'a1');
    await save('alpha', 'a2', true);
    await op('rename alpha', () => catalog.rename('alpha', 'beta'));
    await save('gamma', 'g1');
    await op('delete gamma', () => catalog.delete('gamma'));
    const archived = await catalog.archive({ name: 'gamma' });
    const id = archived.ok ? archived.entries[0]?.id : undefined;
    if (id) await op('restore gamma', () => catalog.restore(id));
    faults.disarm();
    // The fault is gone: a finish that failed lands now, with every line it had buffered.
    if (out.begun && !out.finished)
      out.finished = await attempt('finish again', out.log, () =>
        store.finish('run-a', finishRecord('completed', { result: RESULT })),
      );
    await store.close();
    return out;
  }

  async function check(root: string, out: Outcome, label: string): Promise<void> {
    const project = join(root, 'p');
    const runsRoot = join(project, '.dsh', 'workflow-runs');
    const store = await openRunStore({ project });
    const listed = await store.list();
    // Nothing half-made is visible: no temp directory, no run without its start.
    expect(
      ls(runsRoot).filter((f) => f.startsWith('.wf-tmp-')),
      label,
    ).toEqual([]);
    expect(
      listed.every((r) => r.snapshot !== undefined),
      label,
    ).toBe(true);
    if (out.afterFailedFinish) {
      // A failed finish() recorded no end: run.json was not completed, no result beside it.
      expect(out.afterFailedFinish, label).toEqual({ status: 'running', result: false });
    }
    if (!out.begun) {
      expect(
        listed.map((r) => r.runId),
        label,
      ).not.toContain('run-a');
      expect(existsSync(join(runsRoot, 'run-a')), label).toBe(false);
    } else {
      const shown = await store.show('run-a');
      expect(shown.ok && shown.run.snapshot?.status, label).toBe('completed');
      expect(
        JSON.parse(readFileSync(join(runsRoot, 'run-a', 'result.json'), 'utf8')),
        label,
      ).toEqual({
        result: RESULT,
      });
      const events = await store.events('run-a');
      expect(
        events.map((e) => e.seq),
        label,
      ).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const loaded = await store.load('run-a');
      expect(
        loaded?.journal.map((e) => e.settleSeq),
        label,
      ).toEqual([1, 2, 3]);
    }
    // A deletion reported done is done; one refused (its finish failed: still live) keeps the run.
    if (out.deletedB)
      expect(
        listed.map((r) => r.runId),
        label,
      ).not.toContain('run-b');
    await store.close();
    expect(out.lockLeft, label).toBeUndefined();
    const catalogRoot = join(project, '.dsh', 'workflows');
    const catalog = await openCatalog({ project: catalogRoot });
    // No lock, temp file or intent survives a failed write (repair at open runs first).
    expect(
      ls(catalogRoot).filter((f) => f.startsWith('.wf-')),
      label,
    ).toEqual([]);
    const listing = await catalog.list();
    expect(
      listing.entries.every((e) => e.valid),
      label,
    ).toBe(true);
    const live = listing.entries.map(
      (e) => /\/\/ (\S+)/.exec(readFileSync(e.path, 'utf8').replaceAll('\\n', '\n'))?.[1],
    );
    const archiveDir = join(catalogRoot, '.archive');
    const archived = ls(archiveDir).map(
      (f) =>
        /\/\/ (\S+)/.exec(readFileSync(join(archiveDir, f), 'utf8').replaceAll('\\n', '\n'))?.[1],
    );
    // Every version a save reported done is live or archived.
    for (const marker of out.saved.keys())
      expect([...live, ...archived], `${label}: ${marker}`).toContain(marker);
  }

  it('loses nothing reported done and leaves nothing half-made, whichever write fails', {
    timeout: 300_000,
  }, async () => {
    // On a memory file system where there is one (fsync costs nothing there: 284 scenarios of
    // fsyncs to a real disk would make the sweep slow, not better).
    const { dir: base, cleanup: done } = tempDir('wf-nth-write-', memoryTmp());
    try {
      const clean = join(base, 'clean');
      await scenario(clean, undefined);
      const writes = faults.count();
      await check(clean, { begun: true, finished: true, saved: new Map(), log: [] }, 'no fault');
      expect(writes).toBeGreaterThan(40);
      let failedFinishes = 0;
      let failedBegins = 0;
      for (const errno of ['ENOSPC', 'EIO'] as const) {
        for (let at = 1; at <= writes; at++) {
          const root = join(base, `${errno}-${at}`);
          const out = await scenario(root, { at, errno });
          if (out.afterFailedFinish) failedFinishes++;
          if (!out.begun) failedBegins++;
          await check(root, out, `${errno} at write ${at}: ${out.log.join('; ')}`);
          rmSync(root, { recursive: true, force: true });
        }
      }
      // The sweep did reach the run's start and its end, or it proves little.
      expect(failedBegins).toBeGreaterThan(4);
      expect(failedFinishes).toBeGreaterThan(4);
      process.stdout.write(
        `nth-write faults: ${writes} writes x 2 errnos, ${failedBegins} failed begins, ${failedFinishes} failed finishes\n`,
      );
    } finally {
      done();
    }
  });
});
