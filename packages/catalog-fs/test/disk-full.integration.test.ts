// A full disk, for real: a 512 KiB tmpfs mounted for the test (only where we may mount, i.e. as
// root with CAP_SYS_ADMIN; skipped elsewhere). A save that does not fit fails with WF_CATALOG_IO
// and loses nothing; events that hit ENOSPC are kept and written once space returns, with no
// split or repeated line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCatalog, openRunStore } from '../src/index.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';
import { event, finishRecord, startRecord } from './helpers/runs.js';

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

/** Fills the filesystem, leaving about `leave` bytes free. */
function fill(leave: number): string {
  const filler = join(mnt, `filler-${Math.random().toString(36).slice(2)}`);
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
      store.finish('run-full', finishRecord()).then(
        () => 'finished',
        (e: { code?: string }) => e.code,
      ),
    ).resolves.toBe('WF_CATALOG_RUN_IO');
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
    await store.close();
  });
});
