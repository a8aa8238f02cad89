// wf.readFile and names that start with two dots: `..notes.txt` is a file inside the workspace;
// only a real `..` path segment climbs out. Real files in a temp workspace with a sibling outside.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWorkspaceFile } from '../src/internal/read-file.js';

const base = mkdtempSync(join(tmpdir(), 'wf-readfile-dots-'));
const ws = join(base, 'ws');
mkdirSync(join(ws, 'sub'), { recursive: true });
writeFileSync(join(ws, '..notes.txt'), 'dot-dot notes');
writeFileSync(join(ws, 'sub', '...more'), 'three dots');
writeFileSync(join(base, 'outside.txt'), 'outside');
afterAll(() => rmSync(base, { recursive: true, force: true }));

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'READ',
    (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`,
  );

describe('wf.readFile with dot-dot file names', () => {
  it('reads a workspace file whose name starts with two dots', async () => {
    expect(await readWorkspaceFile(ws, '..notes.txt', 1024)).toBe('dot-dot notes');
    expect(await readWorkspaceFile(ws, './..notes.txt', 1024)).toBe('dot-dot notes');
    expect(await readWorkspaceFile(ws, 'sub/...more', 1024)).toBe('three dots');
  });

  it('still refuses a real .. segment that leaves the workspace', async () => {
    expect(await code(readWorkspaceFile(ws, '../outside.txt', 1024))).toMatch(
      /^WF_ENGINE_READ_DENIED: .*outside the workspace/,
    );
    expect(await code(readWorkspaceFile(ws, '..', 1024))).toMatch(/^WF_ENGINE_READ_DENIED/);
    expect(await code(readWorkspaceFile(ws, 'sub/../../outside.txt', 1024))).toMatch(
      /outside the workspace/,
    );
  });
});
