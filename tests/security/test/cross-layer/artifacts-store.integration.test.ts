// wf.artifact name tricks and hostile event data through the engine into the real on-disk run
// store (@wf/catalog-fs): path separators, `..`, absolute paths, NUL, very long and look-alike
// names, duplicates. Every file lands below the run's directory with a safe name; duplicates are
// refused write-once; what the events say stays below the store root (invariant 8).
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { openRunStore, type RunStore } from '@wf/catalog-fs';
import type { RunRecorder } from '@wf/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attack, both, closeSandbox, hostLeaks } from './harness.js';

let base: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'wf-xl-store-'));
});
afterAll(async () => {
  await closeSandbox();
  rmSync(base, { recursive: true, force: true });
});

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.push(p);
    if (e.isDirectory()) out.push(...walk(p));
  }
  return out;
}

const NAMES = [
  '../../escape',
  '/etc/cron.d/evil',
  'a/b',
  'a\\b',
  'a-b',
  '..',
  '.',
  '.hidden',
  'CON',
  'nul\u0000byte',
  'é-unicode-✓',
  'n'.repeat(200),
  `${'../'.repeat(60)}x`,
];

describe.each(both)('artifacts in the on-disk run store ($label)', ({ checker }) => {
  it('hostile names stay below the run directory, distinct, write-once', async () => {
    const project = mkdtempSync(join(base, 'project-'));
    const store: RunStore = await openRunStore({ project, fsync: 'never' });
    const r = await attack(
      `const out = {};
       for (const n of ${JSON.stringify(NAMES)}) {
         try { const a = await wf.artifact(n, { n }); out[n] = a.ref; } catch (e) { out[n] = 'refused:' + e.code; }
       }
       try { await wf.artifact('a/b', 'second'); out.dup = 'written twice'; } catch (e) { out.dup = e.code; }
       return out;`,
      { checker, recorder: store as unknown as RunRecorder },
    );
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const out = r.done.result as Record<string, string>;
    expect(out.dup).toMatch(/EXISTS/);
    const refs = NAMES.map((n) => out[n]);
    // Every name was written (or refused as a whole), none under the same file.
    const written = refs.filter((x): x is string => !!x && !x.startsWith('refused:'));
    expect(new Set(written).size).toBe(written.length);
    const files = walk(store.root);
    for (const f of files) {
      const rel = relative(store.root, f);
      expect(rel.startsWith('..'), rel).toBe(false);
      expect(lstatSync(f).isSymbolicLink(), rel).toBe(false);
    }
    const artifactFiles = files.filter((f) => f.includes(`${sep}artifacts${sep}`));
    expect(artifactFiles).toHaveLength(written.length);
    for (const f of artifactFiles) {
      const name = f.slice(f.lastIndexOf(sep) + 1);
      expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.json$/);
      const stored = JSON.parse(readFileSync(f, 'utf8')) as { n: string };
      expect(NAMES).toContain(stored.n);
    }
    // Nothing outside the store was created next to the project.
    expect(readdirSync(project).sort()).toEqual(['.dsh']);
    for (const ref of written) expect(hostLeaks(ref)).toEqual([]);
  });
});
