// Symlink and path attacks on the catalog (invariant 8): on the root, on intermediate directories,
// on `.archive/`, on entries, and swapped in between the check and the use.
import { execFileSync } from 'node:child_process';
import {
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
import { openCatalog } from '../src/index.js';
import { FD_PATHS, setSafeDirHook } from '../src/internal/safe-dir.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';

let dir: string;
let cleanup: () => void;
let outside: string;

beforeEach(() => {
  ({ dir, cleanup } = tempDir('wf-attack-'));
  outside = join(dir, 'outside');
  mkdirSync(outside);
});
afterEach(() => {
  setSafeDirHook(undefined);
  cleanup();
});

/** Every file under `root`, recursively (to prove nothing landed outside). */
function tree(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
}

describe('symlinked roots', () => {
  it('refuses a symlinked catalog root unless configured', async () => {
    const project = join(dir, 'workflows');
    symlinkSync(outside, project);
    const catalog = await openCatalog({ project });
    const saved = await catalog.save('x', makeCapsule('x'));
    expect(saved).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_UNSAFE_PATH' } });
    expect(!saved.ok && saved.error.message).toMatch(/symbolic link .*allowSymlinkedRoot/);
    const listing = await catalog.list();
    expect(listing.problems).toMatchObject([
      { scope: 'project', error: { code: 'WF_CATALOG_UNSAFE_PATH' } },
    ]);
    expect(tree(outside)).toEqual([]);
    const allowed = await openCatalog({ project, allowSymlinkedRoot: true });
    expect((await allowed.save('x', makeCapsule('x'))).ok).toBe(true);
    expect(tree(outside)).toEqual(['x.workflow.json']);
  });

  it('refuses a symlinked intermediate directory (.dsh -> elsewhere)', async () => {
    const projectDir = join(dir, 'project');
    mkdirSync(projectDir);
    symlinkSync(outside, join(projectDir, '.dsh'));
    const catalog = await openCatalog({ project: join(projectDir, '.dsh', 'workflows') });
    const saved = await catalog.save('x', makeCapsule('x'));
    expect(saved).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_UNSAFE_PATH' } });
    expect(!saved.ok && saved.error.message).toContain(join(projectDir, '.dsh'));
    // Not even the directory is created through the link.
    expect(tree(outside)).toEqual([]);
  });
});

describe('symlinked entries and .archive', () => {
  it('refuses to replace through a symlinked .archive and changes nothing', async () => {
    const project = join(dir, 'workflows');
    const catalog = await openCatalog({ project });
    await catalog.save('x', makeCapsule('x', 'v1'));
    symlinkSync(outside, join(project, '.archive'));
    for (const attempt of [
      () => catalog.save('x', makeCapsule('x', 'v2'), { replace: true }),
      () => catalog.rename('x', 'y'),
      () => catalog.delete('x'),
      () => catalog.archive(),
    ]) {
      expect(await attempt()).toMatchObject({
        ok: false,
        error: { code: 'WF_CATALOG_UNSAFE_PATH' },
      });
    }
    expect(tree(outside)).toEqual([]);
    expect(readFileSync(join(project, 'x.workflow.json'), 'utf8')).toContain('// v1');
    expect(readdirSync(project).sort()).toEqual(['.archive', 'x.workflow.json']);
  });

  it('never writes through a symlink planted at the capsule name', async () => {
    const project = join(dir, 'workflows');
    mkdirSync(project);
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(project, 'x.workflow.json'));
    const catalog = await openCatalog({ project });
    expect(await catalog.save('x', makeCapsule('x'))).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_EXISTS' },
    });
    expect(await catalog.save('x', makeCapsule('x'), { replace: true })).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
    expect(await catalog.delete('x')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
    expect(await catalog.rename('x', 'y')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(readdirSync(project).filter((f) => f.startsWith('.wf-'))).toEqual([]);
  });

  it('does not hang on a FIFO planted as a capsule', async () => {
    const project = join(dir, 'workflows');
    mkdirSync(project);
    execFileSync('mkfifo', [join(project, 'pipe.workflow.json')]);
    const catalog = await openCatalog({ project });
    const { entries } = await catalog.list();
    expect(entries).toMatchObject([
      { name: 'pipe', valid: false, errorCode: 'WF_CATALOG_UNSAFE_PATH' },
    ]);
    expect(await catalog.load('pipe')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
  });

  it('restore ids cannot traverse out of .archive', async () => {
    const project = join(dir, 'workflows');
    const catalog = await openCatalog({ project });
    writeFileSync(
      join(outside, 'x--20260101T000000000Z-deadbeef.workflow.json'),
      JSON.stringify(makeCapsule('x')),
    );
    for (const id of [
      '../../outside/x--20260101T000000000Z-deadbeef',
      '/etc/passwd',
      'x--20260101T000000000Z-deadbeef/..',
    ]) {
      expect((await catalog.restore(id)).ok).toBe(false);
    }
  });
});

describe.runIf(FD_PATHS)('swapped between check and use', () => {
  it('a root swapped for a symlink after it was opened still receives the write (never the link target)', async () => {
    const project = join(dir, 'workflows');
    mkdirSync(project);
    const catalog = await openCatalog({ project });
    let swapped = false;
    setSafeDirHook((_event, path) => {
      if (path === project && !swapped) {
        swapped = true;
        renameSync(project, join(dir, 'moved'));
        symlinkSync(outside, project);
      }
    });
    const saved = await catalog.save('x', makeCapsule('x'));
    expect(swapped).toBe(true);
    expect(saved.ok).toBe(true);
    expect(tree(outside)).toEqual([]);
    expect(readdirSync(join(dir, 'moved'))).toEqual(['x.workflow.json']);
    // The next operation sees the symlink and refuses.
    setSafeDirHook(undefined);
    expect(await catalog.save('y', makeCapsule('y'))).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
  });

  it('.archive swapped for a symlink after its check: the old version lands in the real archive', async () => {
    const project = join(dir, 'workflows');
    const catalog = await openCatalog({ project });
    await catalog.save('x', makeCapsule('x', 'v1'));
    mkdirSync(join(project, '.archive'));
    setSafeDirHook((_event, path) => {
      if (path === join(project, '.archive')) {
        renameSync(path, join(dir, 'real-archive'));
        symlinkSync(outside, path);
      }
    });
    const replaced = await catalog.save('x', makeCapsule('x', 'v2'), { replace: true });
    expect(replaced.ok).toBe(true);
    expect(tree(outside)).toEqual([]);
    const kept = readdirSync(join(dir, 'real-archive'));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dir, 'real-archive', kept[0]!), 'utf8')).toContain('// v1');
  });

  it('an intermediate directory swapped between realpath and open is detected', async () => {
    const parent = join(dir, 'project', '.dsh');
    const project = join(parent, 'workflows');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(outside, 'workflows'));
    const catalog = await openCatalog({ project });
    // Swap the parent while the catalog works: any open after the swap resolves elsewhere,
    // which the /proc check of the opened descriptor refuses.
    let swapped = false;
    setSafeDirHook((_event, path) => {
      if (!swapped && path === project) {
        swapped = true;
        renameSync(parent, join(dir, 'project', '.dsh-real'));
        symlinkSync(outside, parent);
      }
    });
    expect((await catalog.save('x', makeCapsule('x'))).ok).toBe(true);
    setSafeDirHook(undefined);
    expect(await catalog.save('y', makeCapsule('y'))).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
    expect(tree(outside)).toEqual(['workflows']);
    expect(readdirSync(join(dir, 'project', '.dsh-real', 'workflows'))).toEqual([
      'x.workflow.json',
    ]);
  });

  it('a racing attacker flipping .archive to a symlink never gets a file outside', async () => {
    const project = join(dir, 'workflows');
    const catalog = await openCatalog({ project });
    await catalog.save('x', makeCapsule('x', 'v0'));
    mkdirSync(join(project, '.archive'));
    const archive = join(project, '.archive');
    let flips = 0;
    let stop = false;
    const attacker = (async () => {
      while (!stop) {
        try {
          renameSync(archive, join(dir, `real-${flips}`));
          symlinkSync(outside, archive);
          await new Promise((r) => setImmediate(r));
          rmSync(archive);
          mkdirSync(archive);
          flips++;
        } catch {
          // the catalog held the name at that instant; try again
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    const results = [];
    for (let i = 1; i <= 60; i++)
      results.push(await catalog.save('x', makeCapsule('x', `v${i}`), { replace: true }));
    stop = true;
    await attacker;
    expect(flips).toBeGreaterThan(0);
    expect(tree(outside)).toEqual([]);
    for (const r of results)
      if (!r.ok) expect(r.error.code, r.error.message).toBe('WF_CATALOG_UNSAFE_PATH');
    expect(results.some((r) => r.ok)).toBe(true);
  });
});
