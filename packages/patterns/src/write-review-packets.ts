// Writes review packets to disk content-addressed and write-once: a packet's file name carries its
// content hash, each file is published by an atomic hard link (never overwritten), and rewriting
// the same range is a no-op. The builder stays pure; this is the only module that touches files.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readFile, realpath, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PATTERNS_ERROR_CODES, PatternsError } from './errors.js';
import type { ReviewFileSummary, ReviewPacket } from './review-packets.js';

export interface WriteReviewPacketsInput {
  readonly rangeId: string;
  readonly packets: readonly ReviewPacket[];
  readonly files?: readonly ReviewFileSummary[];
}

export interface WrittenReviewPackets {
  readonly rangeId: string;
  /** The range directory: `<realpath(root)>/<rangeId>` (every path returned is below it). */
  readonly dir: string;
  /** `range.json`: the packet list in order, for readers that start from the range. */
  readonly index: string;
  readonly packets: readonly {
    readonly id: string;
    readonly path: string;
    /** False when an identical file was already there (the write is idempotent). */
    readonly written: boolean;
  }[];
}

const RANGE_ID = /^rng-[0-9a-f]{16}$/;
const PACKET_ID = /^pkt-[0-9a-f]{16}$/;

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48) || 'packet';

/** Publishes `content` at `path` exactly once: temp file, fsync, then a hard link that never replaces. */
async function writeOnce(path: string, content: string): Promise<boolean> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const info = await lstat(path);
    const existing = info.isFile() ? await readFile(path, 'utf8') : null;
    if (existing !== content) {
      throw new PatternsError(
        PATTERNS_ERROR_CODES.WF_PATTERNS_PACKET_CONFLICT,
        `${path} already exists with different content (or is not a regular file); packets are write-once`,
      );
    }
    return false;
  } finally {
    await unlink(tmp);
  }
}

/**
 * Writes each packet as `<root>/<rangeId>/<NNN>-<partition>-<id>.json` (mode 0600) plus
 * `range.json`. Refuses a range directory that is a symlink or resolves outside `root`.
 */
export async function writeReviewPackets(
  root: string,
  input: WriteReviewPacketsInput,
): Promise<WrittenReviewPackets> {
  if (!RANGE_ID.test(input.rangeId)) {
    throw new PatternsError(
      PATTERNS_ERROR_CODES.WF_PATTERNS_OPTIONS_INVALID,
      `rangeId must look like rng-<16 hex> (got ${JSON.stringify(input.rangeId)})`,
    );
  }
  for (const [i, p] of input.packets.entries()) {
    if (!PACKET_ID.test(p.id) || p.rangeId !== input.rangeId) {
      throw new PatternsError(
        PATTERNS_ERROR_CODES.WF_PATTERNS_OPTIONS_INVALID,
        `packets[${i}] is not a packet of range ${input.rangeId} (id ${JSON.stringify(p.id)})`,
      );
    }
  }
  await mkdir(root, { recursive: true });
  const rootReal = await realpath(root);
  const dir = join(rootReal, input.rangeId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (info.isSymbolicLink() || !info.isDirectory() || (await realpath(dir)) !== dir) {
    throw new PatternsError(
      PATTERNS_ERROR_CODES.WF_PATTERNS_PACKET_CONFLICT,
      `${dir} is not a plain directory below ${rootReal}`,
    );
  }
  const written: { id: string; path: string; written: boolean }[] = [];
  for (const p of input.packets) {
    const name = `${String(p.index).padStart(3, '0')}-${slug(p.partition)}-${p.id}.json`;
    const path = join(dir, name);
    written.push({ id: p.id, path, written: await writeOnce(path, `${JSON.stringify(p)}\n`) });
  }
  const index = join(dir, 'range.json');
  const rangeDoc = {
    rangeId: input.rangeId,
    packets: input.packets.map((p, i) => ({
      id: p.id,
      file: (written[i] as { path: string }).path.slice(dir.length + 1),
      partition: p.partition,
      risk: p.risk,
    })),
    ...(input.files ? { files: input.files } : {}),
  };
  await writeOnce(index, `${JSON.stringify(rangeDoc)}\n`);
  return { rangeId: input.rangeId, dir, index, packets: written };
}
