// Which file a pool worker starts: the one-file bundle when it is there and at least as new as the
// package's last build, else the ES modules. A stale bundle would run code older than dist/.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { workerEntry } from '../src/internal/worker-entry.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A package folder: dist/internal/ with the given files, mtimes in seconds. */
function layout(files: Record<string, number>): string {
  root = mkdtempSync(join(tmpdir(), 'wf-worker-entry-'));
  mkdirSync(join(root, 'dist', 'internal'), { recursive: true });
  for (const [name, mtime] of Object.entries(files)) {
    writeFileSync(join(root, name), '');
    utimesSync(join(root, name), mtime, mtime);
  }
  return pathToFileURL(join(root, 'dist', 'internal', 'pool-worker.js')).href;
}

const picked = (here: string) => workerEntry(here).pathname.split('/').pop();

describe('workerEntry', () => {
  it('starts the bundle when it is newer than the last build', () => {
    const here = layout({ 'tsconfig.tsbuildinfo': 1_000, 'dist/internal/worker.cjs': 1_001 });
    expect(picked(here)).toBe('worker.cjs');
  });

  it('starts the bundle of a published package (no buildinfo)', () => {
    expect(picked(layout({ 'dist/internal/worker.cjs': 1_000 }))).toBe('worker.cjs');
  });

  it('starts the modules when the bundle predates the last build', () => {
    const here = layout({ 'tsconfig.tsbuildinfo': 1_002, 'dist/internal/worker.cjs': 1_001 });
    expect(picked(here)).toBe('worker.js');
  });

  it('starts the modules when there is no bundle (src/, or a build that did not bundle)', () => {
    expect(picked(layout({ 'tsconfig.tsbuildinfo': 1_000 }))).toBe('worker.js');
  });
});
