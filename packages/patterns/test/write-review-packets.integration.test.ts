// Writing packets to a real directory: content-addressed names, mode 0600, write-once and
// idempotent, tampering and symlinked range directories refused.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildReviewPackets, PatternsError, writeReviewPackets } from '../src/index.js';

const diff = ['src/a.ts', 'docs/b.md']
  .map((p) =>
    [`diff --git a/${p} b/${p}`, `--- a/${p}`, `+++ b/${p}`, '@@ -1 +1 @@', '-x', '+y', ''].join(
      '\n',
    ),
  )
  .join('');

describe('writeReviewPackets', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'wf-patterns-write-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const built = () => {
    const r = buildReviewPackets(diff);
    if (!r.ok) throw new Error(r.error.message);
    return r;
  };

  it('writes each packet under its content hash, 0600, plus a range index', async () => {
    const r = built();
    const out = await writeReviewPackets(root, r);
    expect(out.dir).toBe(join(root, r.rangeId));
    expect(readdirSync(out.dir).sort()).toEqual(
      [
        `000-src-source-${r.packets[0]?.id}.json`,
        `001-docs-docs-${r.packets[1]?.id}.json`,
        'range.json',
      ].sort(),
    );
    for (const w of out.packets) {
      expect(w.written).toBe(true);
      expect(lstatSync(w.path).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(w.path, 'utf8')).id).toBe(w.id);
    }
    const index = JSON.parse(readFileSync(out.index, 'utf8'));
    expect(index.packets.map((p: { id: string }) => p.id)).toEqual(r.packets.map((p) => p.id));
    expect(index.files).toHaveLength(2);
  });

  it('is idempotent for the same range and leaves no temp files', async () => {
    const r = built();
    await writeReviewPackets(root, r);
    const again = await writeReviewPackets(root, r);
    expect(again.packets.map((p) => p.written)).toEqual([false, false]);
    expect(readdirSync(again.dir).some((n) => n.endsWith('.tmp'))).toBe(false);
  });

  it('refuses to overwrite a tampered packet file', async () => {
    const r = built();
    const out = await writeReviewPackets(root, r);
    writeFileSync(out.packets[0]?.path as string, '{"tampered":true}\n');
    const error = await writeReviewPackets(root, r).catch((e: unknown) => e);
    expect(PatternsError.is(error)).toBe(true);
    expect((error as PatternsError).code).toBe('WF_PATTERNS_PACKET_CONFLICT');
    expect((error as Error).message).toContain('already exists with different content');
    expect(readFileSync(out.packets[0]?.path as string, 'utf8')).toBe('{"tampered":true}\n');
  });

  it('refuses a range directory that is a symlink', async () => {
    const r = built();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(root, 'packets'));
    symlinkSync(elsewhere, join(root, 'packets', r.rangeId));
    const error = await writeReviewPackets(join(root, 'packets'), r).catch((e: unknown) => e);
    expect((error as PatternsError).code).toBe('WF_PATTERNS_PACKET_CONFLICT');
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses ids that are not content-addressed packet ids', async () => {
    const r = built();
    const forged = {
      ...r,
      packets: [{ ...(r.packets[0] as (typeof r.packets)[0]), id: '../../x' }],
    };
    const error = await writeReviewPackets(root, forged).catch((e: unknown) => e);
    expect((error as PatternsError).code).toBe('WF_PATTERNS_OPTIONS_INVALID');
    await expect(writeReviewPackets(root, { ...r, rangeId: '../up' })).rejects.toThrow(
      /rangeId must look like/,
    );
  });
});
