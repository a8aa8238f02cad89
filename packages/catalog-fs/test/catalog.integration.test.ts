// The catalog on the real filesystem: discovery, precedence, limits, save/replace/rename/delete,
// archive and restore (invariant 8), trusted-local import (invariant 10).
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Catalog, openCatalog } from '../src/index.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';

let dir: string;
let cleanup: () => void;
let project: string;
let personal: string;
let catalog: Catalog;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir());
  project = join(dir, 'project', '.dsh', 'workflows');
  personal = join(dir, 'home', '.dsh', 'workflows');
  catalog = await openCatalog({ project, personal });
});
afterEach(() => cleanup());

describe('save and load', () => {
  it('saves a capsule create-only and loads it back validated', async () => {
    const saved = await catalog.save('review', makeCapsule('review'));
    expect(saved).toMatchObject({
      ok: true,
      entry: { name: 'review', scope: 'project', valid: true },
    });
    const loaded = await catalog.load('review');
    expect(loaded.ok && loaded.capsule?.manifest.name).toBe('review');
    expect(readdirSync(project)).toEqual(['review.workflow.json']);
  });

  it('refuses a second create-only save with a clear "already exists"', async () => {
    await catalog.save('review', makeCapsule('review'));
    const again = await catalog.save('review', makeCapsule('review', 'v2'));
    expect(again).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_EXISTS' } });
    expect(!again.ok && again.error.message).toMatch(/already exists/);
  });

  it('replaces with an archive of the old version', async () => {
    await catalog.save('review', makeCapsule('review', 'v1'));
    const replaced = await catalog.save('review', makeCapsule('review', 'v2'), { replace: true });
    expect(replaced.ok && replaced.archived).toMatch(/^review--\d{8}T\d{9}Z-[0-9a-f]{8}$/);
    const loaded = await catalog.load('review');
    expect(loaded.ok && loaded.capsule?.source).toContain('v2');
    const archived = await catalog.archive('review');
    expect(archived.ok && archived.entries.map((e) => e.valid)).toEqual([true]);
    const file = readFileSync(
      join(project, '.archive', `${replaced.ok && replaced.archived}.workflow.json`),
      'utf8',
    );
    expect(file).toContain('// v1');
  });

  it('rejects invalid names and capsules whose manifest.name differs', async () => {
    for (const bad of ['Review', 'a_b', '../x', '', '-x', 'x'.repeat(65), 'a/b']) {
      const r = await catalog.save(bad, makeCapsule('review'));
      expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_INVALID_NAME' } });
    }
    const mismatch = await catalog.save('other', makeCapsule('review'));
    expect(mismatch).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_INVALID_CAPSULE' } });
    expect(!mismatch.ok && mismatch.error.message).toMatch(
      /manifest.name "review" does not match the file name "other"/,
    );
  });

  it('refuses hostile capsule values with an error naming the problem, never throwing', async () => {
    const circular: Record<string, unknown> = makeCapsule('x');
    circular.self = circular;
    const getter = Object.defineProperty({ ...makeCapsule('x') }, 'format', {
      get() {
        throw new Error('boom');
      },
      enumerable: true,
    });
    const proxy = new Proxy(makeCapsule('x'), {
      ownKeys() {
        throw new Error('trap');
      },
    });
    const wrongType = makeCapsule('x');
    (wrongType.manifest as Record<string, unknown>).phases = 'run';
    const cases: [unknown, RegExp][] = [
      [null, /capsule/],
      ['a string', /capsule/],
      [[], /capsule/],
      [circular, /cycle/],
      [getter, /boom|could not be read|format/],
      [proxy, /trap|could not be read|capsule/],
      [{ ...makeCapsule('x'), extra: 1 }, /extra/],
      [wrongType, /manifest\.phases/],
      [{ ...makeCapsule('x'), source: 10n }, /source/],
    ];
    for (const [value, message] of cases) {
      const r = await catalog.save('x', value);
      expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_INVALID_CAPSULE' } });
      expect(!r.ok && r.error.message).toMatch(message);
    }
    expect((await catalog.list()).entries).toEqual([]);
  });

  it('bounds capsule size and catalog count', async () => {
    const small = await openCatalog({
      project,
      limits: { maxCapsuleBytes: 2048, maxCatalogEntries: 3 },
    });
    const big = makeCapsule('big');
    big.source = `async function run(wf, args) { return '${'x'.repeat(4000)}'; }`;
    expect(await small.save('big', big)).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_TOO_LARGE' },
    });
    for (const n of ['a', 'b', 'c']) expect((await small.save(n, makeCapsule(n))).ok).toBe(true);
    expect(await small.save('d', makeCapsule('d'))).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_FULL' },
    });
    // Replacing an existing name does not grow the catalog, so it is still allowed.
    expect((await small.save('a', makeCapsule('a', 'v2'), { replace: true })).ok).toBe(true);
  });
});

describe('list', () => {
  it('applies precedence: project shadows personal; capsule > .ts > .mjs > .js', async () => {
    mkdirSync(project, { recursive: true });
    mkdirSync(personal, { recursive: true });
    writeFileSync(
      join(personal, 'shared.workflow.json'),
      JSON.stringify(makeCapsule('shared', 'personal')),
    );
    writeFileSync(join(project, 'shared.js'), 'export async function run() {}');
    writeFileSync(join(project, 'mixed.js'), 'export async function run() {}');
    writeFileSync(join(project, 'mixed.mjs'), 'export async function run() {}');
    writeFileSync(join(project, 'mixed.ts'), 'export async function run() {}');
    writeFileSync(join(project, 'both.mjs'), 'export async function run() {}');
    writeFileSync(join(project, 'both.workflow.json'), JSON.stringify(makeCapsule('both')));
    writeFileSync(join(personal, 'solo.mjs'), 'export async function run() {}');
    const { entries, truncated } = await catalog.list();
    expect(truncated).toBe(false);
    expect(entries.map((e) => [e.name, e.scope, e.kind, e.execution, e.valid])).toEqual([
      ['both', 'project', 'capsule', 'capability-generated', true],
      ['mixed', 'project', 'ts', 'trusted-local', true],
      ['shared', 'project', 'js', 'trusted-local', true],
      ['solo', 'personal', 'mjs', 'trusted-local', true],
    ]);
  });

  it('lists bad input with an error naming the problem, and never temp files', async () => {
    mkdirSync(project, { recursive: true });
    const good = JSON.stringify(makeCapsule('truncated'));
    writeFileSync(join(project, 'truncated.workflow.json'), good.slice(0, good.length / 2));
    writeFileSync(join(project, 'oversized.workflow.json'), 'x'.repeat(600 * 1024));
    const wrongType = makeCapsule('wrong-type');
    (wrongType.manifest as Record<string, unknown>).maxAgents = 'two';
    writeFileSync(join(project, 'wrong-type.workflow.json'), JSON.stringify(wrongType));
    writeFileSync(
      join(project, 'unknown-key.workflow.json'),
      JSON.stringify({ ...makeCapsule('unknown-key'), extra: 1 }),
    );
    writeFileSync(join(project, 'empty.workflow.json'), '');
    writeFileSync(join(project, 'Bad_Name.workflow.json'), JSON.stringify(makeCapsule('bad')));
    writeFileSync(join(project, '.wf-tmp-1-abc-def'), 'partial');
    const { entries } = await catalog.list();
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(Object.keys(byName).sort()).toEqual([
      'Bad_Name',
      'empty',
      'oversized',
      'truncated',
      'unknown-key',
      'wrong-type',
    ]);
    expect(byName.truncated).toMatchObject({
      valid: false,
      errorCode: 'WF_CATALOG_INVALID_CAPSULE',
    });
    expect(byName.truncated?.error).toMatch(/not valid JSON.*truncated/);
    expect(byName.oversized).toMatchObject({ valid: false, errorCode: 'WF_CATALOG_TOO_LARGE' });
    expect(byName.oversized?.error).toMatch(/614400 bytes, over the limit of 524288/);
    expect(byName['wrong-type']?.error).toMatch(/manifest\.maxAgents/);
    expect(byName['unknown-key']?.error).toMatch(/extra/);
    expect(byName.empty?.error).toMatch(/empty/);
    expect(byName.Bad_Name).toMatchObject({ valid: false, errorCode: 'WF_CATALOG_INVALID_NAME' });
    // An invalid capsule can never be loaded (and so never run).
    for (const name of ['truncated', 'oversized', 'wrong-type', 'unknown-key']) {
      expect((await catalog.load(name)).ok).toBe(false);
    }
  });

  it('truncates at maxCatalogEntries', async () => {
    mkdirSync(project, { recursive: true });
    for (let i = 0; i < 12; i++)
      writeFileSync(join(project, `w-${String(i).padStart(2, '0')}.mjs`), '');
    const small = await openCatalog({ project, limits: { maxCatalogEntries: 5 } });
    const listing = await small.list();
    expect(listing.truncated).toBe(true);
    expect(listing.entries.map((e) => e.name)).toEqual(['w-00', 'w-01', 'w-02', 'w-03', 'w-04']);
  });

  it('lists a symlinked entry as invalid and never reads through it', async () => {
    mkdirSync(project, { recursive: true });
    const outside = join(dir, 'outside.workflow.json');
    writeFileSync(outside, JSON.stringify(makeCapsule('linked')));
    symlinkSync(outside, join(project, 'linked.workflow.json'));
    const { entries } = await catalog.list();
    expect(entries).toMatchObject([
      { name: 'linked', valid: false, errorCode: 'WF_CATALOG_UNSAFE_PATH' },
    ]);
    expect(await catalog.load('linked')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
  });
});

describe('rename, delete, archive, restore', () => {
  it('renames atomically, keeping the old capsule in the archive', async () => {
    await catalog.save('old-name', makeCapsule('old-name'));
    const renamed = await catalog.rename('old-name', 'new-name');
    expect(renamed).toMatchObject({ ok: true, entry: { name: 'new-name' } });
    expect((await catalog.load('old-name')).ok).toBe(false);
    const loaded = await catalog.load('new-name');
    expect(loaded.ok && loaded.capsule?.manifest.name).toBe('new-name');
    const archived = await catalog.archive();
    expect(archived.ok && archived.entries.map((e) => e.name)).toEqual(['old-name']);
    expect(readdirSync(project).sort()).toEqual(['.archive', 'new-name.workflow.json']);
  });

  it('refuses to rename onto an existing name and changes nothing', async () => {
    await catalog.save('a', makeCapsule('a'));
    await catalog.save('b', makeCapsule('b'));
    expect(await catalog.rename('a', 'b')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_EXISTS' },
    });
    expect(
      readdirSync(project)
        .filter((f) => !f.startsWith('.'))
        .sort(),
    ).toEqual(['a.workflow.json', 'b.workflow.json']);
    const archived = await catalog.archive();
    expect(archived.ok && archived.entries).toEqual([]);
  });

  it('deletes into the archive and restores from it', async () => {
    await catalog.save('gone', makeCapsule('gone'));
    const deleted = await catalog.delete('gone');
    expect(deleted.ok).toBe(true);
    expect((await catalog.load('gone')).ok).toBe(false);
    const id = deleted.ok ? deleted.archived : '';
    const restored = await catalog.restore(id);
    expect(restored).toMatchObject({ ok: true, entry: { name: 'gone' } });
    expect((await catalog.load('gone')).ok).toBe(true);
    const asOther = await catalog.restore(id, { as: 'gone-again' });
    expect(asOther.ok).toBe(true);
    const loaded = await catalog.load('gone-again');
    expect(loaded.ok && loaded.capsule?.manifest.name).toBe('gone-again');
    expect(await catalog.restore('../../etc/passwd')).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_NOT_FOUND' },
    });
  });

  it('personal scope works independently', async () => {
    expect((await catalog.save('mine', makeCapsule('mine'), { scope: 'personal' })).ok).toBe(true);
    const { entries } = await catalog.list();
    expect(entries).toMatchObject([{ name: 'mine', scope: 'personal' }]);
    expect((await catalog.delete('mine', { scope: 'personal' })).ok).toBe(true);
  });
});

describe('importTrustedLocal', () => {
  it('refuses without confirmation and imports with it, seeing edits', async () => {
    mkdirSync(project, { recursive: true });
    const file = join(project, 'local.mjs');
    writeFileSync(
      file,
      'export const manifest = { name: "local" }; export async function run() { return 1; }',
    );
    const entry = { name: 'local', scope: 'project', kind: 'mjs' } as const;
    expect(await catalog.importTrustedLocal(entry)).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_CONFIRMATION_REQUIRED' },
    });
    const first = await catalog.importTrustedLocal(entry, { confirmed: true });
    expect(first.ok && (await first.module.run())).toBe(1);
    expect(first.ok && first.module.manifest).toEqual({ name: 'local' });
    writeFileSync(file, 'export default { meta: { name: "local" }, async run() { return 2; } };');
    const second = await catalog.importTrustedLocal(entry, { confirmed: true });
    expect(second.ok && (await second.module.run())).toBe(2);
  });

  it('refuses a module without run and a symlinked source file', async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'norun.mjs'), 'export const x = 1;');
    expect(
      await catalog.importTrustedLocal(
        { name: 'norun', scope: 'project', kind: 'mjs' },
        { confirmed: true },
      ),
    ).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_IMPORT_FAILED' },
    });
    writeFileSync(join(dir, 'evil.mjs'), 'export async function run() { return "evil"; }');
    symlinkSync(join(dir, 'evil.mjs'), join(project, 'linked.mjs'));
    expect(
      await catalog.importTrustedLocal(
        { name: 'linked', scope: 'project', kind: 'mjs' },
        { confirmed: true },
      ),
    ).toMatchObject({
      ok: false,
      error: { code: 'WF_CATALOG_UNSAFE_PATH' },
    });
  });
});
