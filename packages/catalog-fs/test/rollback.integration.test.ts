// Failure at the publishing syscall of replace / rename / delete (a disk error injected at that
// exact point): the old capsule stays live, the archive holds no stray copy, no temp or intent
// file is left behind, and the caller gets WF_CATALOG_IO naming the operation.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Catalog, openCatalog } from '../src/index.js';
import { setSafeDirHook } from '../src/internal/safe-dir.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';

let cleanup: () => void;
let project: string;
let catalog: Catalog;

beforeEach(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir('wf-rollback-'));
  project = join(dir, 'workflows');
  catalog = await openCatalog({ project });
  await catalog.save('x', makeCapsule('x', 'v1'));
});
afterEach(() => {
  setSafeDirHook(undefined);
  cleanup();
});

function failAt(point: string): void {
  setSafeDirHook((event, name) => {
    if (event === 'step' && name === point)
      throw Object.assign(new Error('injected EIO'), { code: 'EIO' });
  });
}

function assertUntouched(): void {
  expect(readdirSync(project).filter((f) => f !== '.archive')).toEqual(['x.workflow.json']);
  expect(readFileSync(join(project, 'x.workflow.json'), 'utf8')).toContain('// v1');
  expect(readdirSync(join(project, '.archive'))).toEqual([]);
}

it('replace rolls back when publishing fails', async () => {
  failAt('replace-publish');
  const r = await catalog.save('x', makeCapsule('x', 'v2'), { replace: true });
  expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
  expect(!r.ok && r.error.message).toMatch(/replacing .*x\.workflow\.json failed: EIO/);
  assertUntouched();
});

it('rename rolls back when publishing the new name fails', async () => {
  failAt('rename-publish');
  const r = await catalog.rename('x', 'y');
  expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
  assertUntouched();
});

it('delete rolls back when removing fails', async () => {
  failAt('delete-unlink');
  const r = await catalog.delete('x');
  expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_IO' } });
  assertUntouched();
  setSafeDirHook(undefined);
  expect((await catalog.delete('x')).ok).toBe(true);
});
