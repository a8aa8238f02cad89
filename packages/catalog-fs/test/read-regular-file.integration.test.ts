// readRegularFile reads exactly what is on disk, up to its limit, also when the file grows after
// fstat (its buffer is sized from fstat and grows only then). The safe-dir hook's `file-read`
// event fires after fstat, so appending there is a file growing while it is read.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CatalogFsCode } from '../src/errors.js';
import { CODES } from '../src/internal/run-layout.js';
import {
  entryPath,
  openRootDir,
  readRegularFile,
  type SafeDir,
  setSafeDirHook,
} from '../src/internal/safe-dir.js';
import { tempDir } from './helpers/fixtures.js';

let cleanup: () => void;
let root: SafeDir;
const codes = { ...CODES, tooLarge: CatalogFsCode.TooLarge };
/** Distinct bytes, so a misplaced or missing chunk cannot compare equal. */
const bytes = (n: number, seed = 0) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251));

beforeAll(async () => {
  const t = tempDir('wf-read-file-');
  cleanup = t.cleanup;
  const opened = await openRootDir(t.dir, {
    create: false,
    allowSymlinkedRoot: false,
    codes,
    label: 'test root',
  });
  if (!opened) throw new Error('no test root');
  root = opened;
});
afterEach(() => setSafeDirHook(undefined));
afterAll(async () => {
  await root.close();
  cleanup();
});

/** Appends `extra` to the file the first time it is read (after fstat). */
function growOnRead(name: string, extra: Buffer): void {
  let grown = false;
  setSafeDirHook((event, path) => {
    if (event === 'file-read' && path === join(root.path, name) && !grown) {
      grown = true;
      appendFileSync(path, extra);
    }
  });
}

describe('readRegularFile', () => {
  it.each([0, 1, 4_095, 65_537, 300_000])('reads a file of %i bytes exactly', async (size) => {
    const data = bytes(size);
    writeFileSync(root.at('f.bin'), data);
    const r = await readRegularFile(root, 'f.bin', 1_000_000, codes);
    expect(r?.size).toBe(size);
    expect(r?.data.equals(data)).toBe(true);
  });

  it('reads what a file grew to after fstat, within the limit', async () => {
    for (const [size, extra] of [
      [100, 10],
      [100, 5_000], // several doublings of the buffer
      [0, 70_000],
    ] as const) {
      const first = bytes(size, 1);
      const more = bytes(extra, 2);
      writeFileSync(root.at('g.bin'), first);
      growOnRead('g.bin', more);
      const r = await readRegularFile(root, 'g.bin', 1_000_000, codes);
      expect(r?.data.equals(Buffer.concat([first, more])), `${size} + ${extra}`).toBe(true);
    }
  });

  it('refuses a file that grew over the limit after fstat, naming the limit', async () => {
    writeFileSync(root.at('h.bin'), bytes(900));
    growOnRead('h.bin', bytes(200));
    await expect(readRegularFile(root, 'h.bin', 1_000, codes)).rejects.toMatchObject({
      code: CatalogFsCode.TooLarge,
      message: expect.stringContaining('grew over the limit of 1000 bytes'),
    });
  });

  it('reads a file that grew to exactly the limit', async () => {
    writeFileSync(root.at('k.bin'), bytes(900));
    growOnRead('k.bin', bytes(100, 3));
    const r = await readRegularFile(root, 'k.bin', 1_000, codes);
    expect(r?.size).toBe(1_000);
    expect(r?.data.equals(Buffer.concat([bytes(900), bytes(100, 3)]))).toBe(true);
  });
});

describe('entryPath', () => {
  it('names an entry as path.join does, for the single components the store uses', () => {
    for (const [dir, name] of [
      ['/a/b', 'run.json'],
      ['/', 'alias.json'],
      ['/a/b/', 'c'],
      ['/proc/self/fd/7', 'run-01'],
      [root.path, 'x..y'],
    ] as const)
      expect(entryPath(dir, name)).toBe(join(dir, name));
  });

  it('is the path an error names', async () => {
    writeFileSync(root.at('big.bin'), bytes(20));
    await expect(readRegularFile(root, 'big.bin', 10, codes)).rejects.toMatchObject({
      message: expect.stringContaining(`${join(root.path, 'big.bin')} is 20 bytes`),
    });
  });
});
