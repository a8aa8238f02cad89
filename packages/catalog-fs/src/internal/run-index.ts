// The runs index: one append-only file in the store's base directory with a line per run start
// ({ runId, startedAt }) and per run end ({ runId, ended: true }). Listing the newest runs sorts
// it instead of reading every run.json, and recovery skips runs it knows ended: both cost what
// they touch, not what is stored. A cache, never the truth: lines for deleted runs are ignored,
// and a run missing from it (recorded before it existed, or a lost append) is read once and added.
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { CatalogFsCode } from '../errors.js';
import { withLock } from './lock.js';
import {
  noteRead,
  type RegularFile,
  readRegularFile,
  type SafeDir,
  step,
  writeFileAtomic,
} from './safe-dir.js';
import { CODES, RUN_ID_PATTERN, runIdsOf } from './run-layout.js';

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Starts with a dot: never a run id, so directory scans skip it. */
export const INDEX_FILE = '.runs-index.jsonl';
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export interface IndexedRun {
  readonly startedAt?: number;
  readonly ended: boolean;
}

export interface IndexLine {
  readonly runId: string;
  readonly startedAt?: number;
  readonly ended?: true;
}

/** What one read of the index found: what it says, how many lines say it, where they end. */
interface IndexRead {
  readonly index: Map<string, IndexedRun>;
  readonly lines: number;
  /** Bytes up to and including the last newline: what was parsed. */
  readonly parsed: number;
  readonly ino: number;
}

/** Reads and parses the index; undefined when it is missing, unreadable or too large. */
async function readIndex(base: SafeDir): Promise<IndexRead | undefined> {
  let raw: RegularFile | undefined;
  try {
    raw = await readRegularFile(base, INDEX_FILE, MAX_INDEX_BYTES, CODES);
  } catch {
    return undefined; // a symlink, a FIFO, an oversized file: rebuilt from the run directories
  }
  if (!raw) return undefined;
  const parsed = raw.data.lastIndexOf(0x0a) + 1;
  return { ...parseIndexLines(raw.data.toString('utf8')), parsed, ino: raw.ino };
}

/**
 * Parses the index text. The text after the last newline is a torn append (a prefix of a JSON
 * object line never parses as one) and is ignored; corrupt lines are skipped.
 */
export function parseIndex(text: string): Map<string, IndexedRun> {
  return parseIndexLines(text).index;
}

/** parseIndex, and how many lines (parseable or not) the text holds before its last newline. */
function parseIndexLines(text: string): { index: Map<string, IndexedRun>; lines: number } {
  const out = new Map<string, IndexedRun>();
  const end = text.lastIndexOf('\n');
  if (end < 0) return { index: out, lines: 0 };
  const whole = text.slice(0, end);
  let lines = 1;
  for (let at = whole.indexOf('\n'); at >= 0; at = whole.indexOf('\n', at + 1)) lines++;
  // One JSON.parse for the whole file instead of one per line (the index has a line or two per
  // stored run; this is the part of `wf runs` that grows with them). A newline never occurs inside
  // a JSON.stringify line, so the lines joined by commas form an array; it is used only when it
  // has exactly one value per line, else (a corrupt or empty line) each line is parsed alone.
  let values: unknown[] | undefined;
  try {
    const all: unknown = JSON.parse(`[${whole.replaceAll('\n', ',')}]`);
    if (Array.isArray(all) && all.length === lines) values = all;
  } catch {
    values = undefined;
  }
  if (values === undefined) {
    values = [];
    for (const line of whole.split('\n')) {
      try {
        values.push(JSON.parse(line));
      } catch {
        // a torn line from a crash mid-append, or a hand edit
      }
    }
  }
  for (const v of values) {
    if (typeof v !== 'object' || v === null) continue;
    const { runId, startedAt, ended } = v as Record<string, unknown>;
    if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) continue;
    const known = out.get(runId);
    const start =
      typeof startedAt === 'number' && Number.isFinite(startedAt) ? startedAt : known?.startedAt;
    const isEnded = ended === true || known?.ended === true;
    out.set(runId, start === undefined ? { ended: isEnded } : { startedAt: start, ended: isEnded });
  }
  return { index: out, lines };
}

/** What one pass over the store root saw: one directory listing and one index read. */
export interface StoreScan {
  /** Every entry of the base directory (run directories, the index, temp and trash names). */
  readonly names: readonly string[];
  /** The run ids among them, in name order. */
  readonly runIds: readonly string[];
  /** What the index said, plus what this pass learned and appended (recovery's lines). */
  readonly index: Map<string, IndexedRun>;
}

/** Lists the base directory and reads the index, once each, for recovery and listing to share. */
export async function scanStore(base: SafeDir): Promise<StoreScan> {
  const names = await base.io.readdir(base.self);
  await noteRead('dir-listed', base.path);
  const runIds = runIdsOf(names);
  const read = await readIndex(base);
  if (read) await compactIfLarge(base, read, runIds);
  return { names, runIds, index: read?.index ?? new Map() };
}

/**
 * Lines an index may hold beyond two per live run before it is rewritten. A run adds at most two
 * lines (start, end) and a compacted index holds one per live run, so an index over
 * `2 * live + COMPACT_SLACK` lines holds more than COMPACT_SLACK lines about deleted runs (or
 * repeats), and one within it is never rewritten. A rewrite writes `live` lines, less than half
 * of what the same pass just read, and is not repeated until at least max(live, COMPACT_SLACK)
 * more lines are appended or runs deleted: after any pass, the index is within
 * `2 * live + COMPACT_SLACK` lines.
 */
export const COMPACT_SLACK = 64;

/**
 * Rewrites the index as one line per run that still has a directory, when it has grown well
 * beyond that (see COMPACT_SLACK). Best effort, under the lock file (tried once, never waited
 * for: runs append without it and are never blocked): any failure leaves the old index in place.
 * Lines other processes append while it runs are copied over from the old file after the rename.
 */
async function compactIfLarge(
  base: SafeDir,
  read: IndexRead,
  runIds: readonly string[],
): Promise<void> {
  const live = new Set(runIds);
  let kept = 0;
  for (const runId of read.index.keys()) if (live.has(runId)) kept++;
  if (read.lines <= 2 * kept + COMPACT_SLACK) return;
  try {
    await withLock(base, COMPACT_LOCK, () => compactIndex(base, read, live));
  } catch {
    // busy (another process is compacting), a full disk, a planted link: the index stays as it is
  }
}

const COMPACT_LOCK = {
  timeoutMs: 0,
  staleMs: 60_000,
  codes: { ...CODES, busy: CatalogFsCode.Busy },
} as const;

async function compactIndex(base: SafeDir, read: IndexRead, live: Set<string>): Promise<void> {
  const lines: IndexLine[] = [];
  for (const [runId, run] of read.index) {
    // A run begun after the directory listing but before the index read has its line and not
    // (in `live`) its directory: a run that has not ended is kept if its directory exists now.
    // Deleted runs have ended (deletion refuses others without force), so this costs few lstats.
    if (!live.has(runId)) {
      if (run.ended) continue;
      const st = await fsp.lstat(base.at(runId)).catch(() => undefined);
      if (!st?.isDirectory()) continue;
    }
    lines.push({
      runId,
      ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
      ...(run.ended ? { ended: true } : {}),
    });
  }
  // The file read, held open across the rename: what was appended to it after the read is read
  // back from it and appended to the new index.
  const old = await fsp.open(base.at(INDEX_FILE), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const st = await old.stat();
    if (!st.isFile() || st.ino !== read.ino) return; // replaced since it was read
    await writeFileAtomic(base, INDEX_FILE, indexText(lines), 0o600, CODES, {
      beforeRename: async () => {
        await step('runs-index-compact');
        // Still the file that was read (not replaced by a hand edit or a planted link)?
        const now = await fsp.lstat(base.at(INDEX_FILE));
        if (!now.isFile() || now.ino !== read.ino) throw new Error('the index was replaced');
      },
    });
    // Whole lines appended to the old file after the read (a torn last line is not copied: its
    // writer's remaining bytes, if any, went to the old file).
    const size = (await old.stat()).size;
    if (size <= read.parsed) return;
    const tail = Buffer.alloc(Math.min(size - read.parsed, MAX_INDEX_BYTES));
    const { bytesRead } = await old.read(tail, 0, tail.length, read.parsed);
    const whole = tail.subarray(0, tail.subarray(0, bytesRead).lastIndexOf(0x0a) + 1);
    if (whole.length > 0) await appendText(base, whole);
  } finally {
    await old.close().catch(() => undefined);
  }
}

function indexText(lines: readonly IndexLine[]): string {
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

/**
 * Appends lines in one write (O_APPEND: concurrent writers do not interleave lines). Best effort:
 * a failed append only makes a later listing read that run's run.json.
 */
export async function appendIndex(base: SafeDir, lines: readonly IndexLine[]): Promise<void> {
  if (lines.length === 0) return;
  await appendText(base, Buffer.from(indexText(lines)));
}

async function appendText(base: SafeDir, text: Buffer): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(
      base.at(INDEX_FILE),
      O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK,
      0o600,
    );
    if (!(await handle.stat()).isFile()) return;
    await handle.write(text);
  } catch {
    // the index is a cache: the runs themselves are recorded
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
