// Concurrency on the real filesystem: N create-only savers of one name have exactly one winner;
// concurrent replace-saves never lose a version (each is live or archived). In-process (separate
// catalog instances contend on the lock file) and across processes.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../src/index.js';
import { bundleChild, startChild } from './helpers/bundle.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';

let dir: string;
let cleanup: () => void;
let bundle: string;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('wf-concurrency-'));
  bundle = await bundleChild(join(dir, 'child.mjs'));
});
afterAll(() => cleanup());

/** Every marker found live or in the archive of a catalog directory. */
function versions(project: string): string[] {
  const files = [
    ...readdirSync(project)
      .filter((f) => f.endsWith('.workflow.json'))
      .map((f) => join(project, f)),
    ...readdirSync(join(project, '.archive')).map((f) => join(project, '.archive', f)),
  ];
  return files
    .map((f) => /^\/\/ (\S+)$/m.exec(JSON.parse(readFileSync(f, 'utf8')).source)![1]!)
    .sort();
}

describe('in one process', () => {
  it('20 concurrent create-only saves of one name: exactly one winner', async () => {
    const project = join(dir, 'create-in-process');
    const catalogs = await Promise.all(Array.from({ length: 20 }, () => openCatalog({ project })));
    const results = await Promise.all(
      catalogs.map((c, i) => c.save('race', makeCapsule('race', `s${i}`))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const r of results.filter((x) => !x.ok))
      expect(r).toMatchObject({ error: { code: 'WF_CATALOG_EXISTS' } });
    expect(readdirSync(project)).toEqual(['race.workflow.json']);
  });

  it('concurrent replace-saves never lose a version', async () => {
    const project = join(dir, 'replace-in-process');
    const first = await openCatalog({ project });
    await first.save('hot', makeCapsule('hot', 'initial'));
    const catalogs = await Promise.all(Array.from({ length: 10 }, () => openCatalog({ project })));
    const results = await Promise.all(
      catalogs.flatMap((c, i) =>
        Array.from({ length: 5 }, (_, j) =>
          c.save('hot', makeCapsule('hot', `r${i}-${j}`), { replace: true }),
        ),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const expected = [
      'initial',
      ...Array.from({ length: 50 }, (_, k) => `r${Math.floor(k / 5)}-${k % 5}`),
    ].sort();
    expect(versions(project)).toEqual(expected);
    expect(readdirSync(project).filter((f) => f.startsWith('.wf-'))).toEqual([]);
  });
});

describe('across processes', () => {
  it('20 processes create-only saving one name: exactly one winner', async () => {
    const project = join(dir, 'create-processes');
    const startFile = join(dir, 'go-create');
    const children = Array.from({ length: 20 }, (_, i) => {
      const config = join(dir, `create-${i}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          project,
          startFile,
          name: 'race',
          marker: `p${i}`,
          opsLog: join(dir, 'unused.log'),
        }),
      );
      return startChild(bundle, 'save', config);
    });
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(startFile, '');
    await Promise.all(children.map((c) => c.exited));
    const outcomes = children.map((c) => JSON.parse(c.stdout()) as { ok: boolean; code?: string });
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok).map((o) => o.code)).toEqual(
      Array(19).fill('WF_CATALOG_EXISTS'),
    );
  });

  it('4 processes replace-saving one name 8 times each never lose a version', async () => {
    const project = join(dir, 'replace-processes');
    const first = await openCatalog({ project });
    await first.save('hot', makeCapsule('hot', 'initial'));
    const startFile = join(dir, 'go-replace');
    const children = Array.from({ length: 4 }, (_, i) => {
      const config = join(dir, `replace-${i}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          project,
          startFile,
          name: 'hot',
          marker: `p${i}`,
          count: 8,
          opsLog: join(dir, 'unused.log'),
        }),
      );
      return startChild(bundle, 'replace', config);
    });
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(startFile, '');
    await Promise.all(children.map((c) => c.exited));
    const outcomes = children.flatMap((c) => JSON.parse(c.stdout()) as { ok: boolean }[]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const expected = [
      'initial',
      ...Array.from({ length: 32 }, (_, k) => `p${Math.floor(k / 8)}-${k % 8}`),
    ].sort();
    expect(versions(project)).toEqual(expected);
  });
});
