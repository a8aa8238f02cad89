// The runs index: one append-only file in the store's base directory with a line per run start
// ({ runId, startedAt }), run end ({ runId, ended: true }) and deletion ({ runId, deleted: true }).
// Listing the newest runs sorts it instead of reading every run.json, and recovery skips runs it
// knows ended: both cost what they touch, not what is stored. A cache, never the truth: lines for
// deleted runs are ignored, and a run missing from it (recorded before it existed, or a lost
// append) is read once and added. A full pass rewrites it as a header and a sorted body
// (run-index-format.ts), which lets a page skip the directory listing (run-index-recent.ts).
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
import {
  type BodyEntry,
  foldTail,
  headerLine,
  type IndexHeader,
  newestFirst,
  parseHeader,
  type TailFold,
} from './run-index-format.js';
import { CODES, RUN_ID_PATTERN, runDirKind, runIdsOf, TRASH_PREFIX } from './run-layout.js';

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
  /** Deleted through the store: readers forget the run. */
  readonly deleted?: true;
}

/**
 * Most bytes of lines appended since the last rewrite that the constant-cost listing folds
 * (run-index-recent.ts); over it, the next full pass rewrites. ~330 runs' start and end lines.
 */
export const MAX_TAIL_BYTES = 32 * 1024;

/** The longest header the constant-cost listing reads (it is read with the file's first bytes). */
export const MAX_HEADER_BYTES = 64 * 1024;

/** What one read of the index found: what it says, how many lines say it, where they end. */
interface IndexRead {
  readonly index: Map<string, IndexedRun>;
  readonly lines: number;
  /** Bytes up to and including the last newline: what was parsed. */
  readonly parsed: number;
  readonly ino: number;
  /** Lines that are neither a run's line nor the header (corrupt, hand-edited). */
  readonly bad: number;
  /** The compacted layout, when the file starts with a header whose body it holds. */
  readonly layout?: {
    readonly header: IndexHeader;
    readonly tailBytes: number;
    readonly tail: TailFold;
  };
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
  const first = raw.data.indexOf(0x0a);
  const header = first > 0 ? parseHeader(raw.data.toString('utf8', 0, first)) : undefined;
  const tailAt = header === undefined ? -1 : first + 1 + header.body;
  const layout =
    header !== undefined && tailAt <= raw.size && (tailAt === 0 || raw.data[tailAt - 1] === 0x0a)
      ? {
          header,
          tailBytes: raw.size - tailAt,
          tail: foldTail(raw.data.toString('utf8', tailAt), new Set(header.unindexed)),
        }
      : undefined;
  const lines = parseIndexLines(raw.data.toString('utf8'));
  return {
    ...lines,
    bad: lines.bad - (header === undefined ? 0 : 1),
    parsed,
    ino: raw.ino,
    ...(layout === undefined ? {} : { layout }),
  };
}

/**
 * Parses the index text. The text after the last newline is a torn append (a prefix of a JSON
 * object line never parses as one) and is ignored; corrupt lines are skipped.
 */
export function parseIndex(text: string): Map<string, IndexedRun> {
  return parseIndexLines(text).index;
}

/**
 * parseIndex, how many lines (parseable or not) the text holds before its last newline, and how
 * many of them are not a run's line (a header counts among these).
 */
function parseIndexLines(text: string): {
  index: Map<string, IndexedRun>;
  lines: number;
  bad: number;
} {
  const out = new Map<string, IndexedRun>();
  const end = text.lastIndexOf('\n');
  if (end < 0) return { index: out, lines: 0, bad: 0 };
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
  let bad = lines - values.length;
  for (const v of values) {
    const { runId, startedAt, ended, deleted } = (v ?? {}) as Record<string, unknown>;
    if (
      typeof v !== 'object' ||
      v === null ||
      typeof runId !== 'string' ||
      !RUN_ID_PATTERN.test(runId)
    ) {
      bad++;
      continue;
    }
    if (deleted === true) {
      out.delete(runId); // deleted through the store: forget it (a run begun again later is new)
      continue;
    }
    const known = out.get(runId);
    const start =
      typeof startedAt === 'number' && Number.isFinite(startedAt) ? startedAt : known?.startedAt;
    const isEnded = ended === true || known?.ended === true;
    out.set(runId, start === undefined ? { ended: isEnded } : { startedAt: start, ended: isEnded });
  }
  return { index: out, lines, bad };
}

/** What one pass over the store root saw: one directory listing and one index read. */
export interface StoreScan {
  /** Every entry of the base directory (run directories, the index, temp and trash names). */
  readonly names: readonly string[];
  /** The run ids among them, in name order. */
  readonly runIds: readonly string[];
  /**
   * Directories named like runs that are none (no run.json and nothing recorded: a start that
   * never completed, or a directory of the user's own): never listed, counted as other
   * directories. Empty when the scan was not a listing.
   */
  readonly notRuns: readonly string[];
  /** What the index said, plus what this pass learned and appended (recovery's lines). */
  readonly index: Map<string, IndexedRun>;
}

/** Lists the base directory and reads the index, once each, for recovery and listing to share. */
export async function scanStore(base: SafeDir): Promise<StoreScan> {
  const names = await base.io.readdir(base.self);
  await noteRead('dir-listed', base.path);
  const read = await readIndex(base);
  const runIds: string[] = [];
  const notRuns: string[] = [];
  let foreign = 0;
  // Only a directory the index has no start for can be no run (begin() appends one once its
  // directory is complete): one lstat of its run.json each, for the few such directories. A
  // directory of the user's own counts as another directory; a half-made start is counted
  // nowhere, so the index disagrees with the store (full passes) until recovery removes it.
  for (const runId of runIdsOf(names)) {
    const indexed = read?.index.get(runId)?.startedAt !== undefined;
    const kind = indexed ? 'run' : await runDirKind(base, runId);
    if (kind === 'run') runIds.push(runId);
    else notRuns.push(runId);
    if (kind === 'foreign') foreign++;
  }
  if (read) await rewriteIfStale(base, read, names, runIds, foreign);
  return { names, runIds, notRuns, index: read?.index ?? new Map() };
}

/**
 * Lines an index may hold beyond two per live run before it is rewritten. A run adds at most two
 * lines (start, end) and a compacted index holds one per live run, so an index over
 * `2 * live + COMPACT_SLACK` lines holds more than COMPACT_SLACK lines about deleted runs (or
 * repeats), and one within it is never rewritten for its size. A rewrite writes `live` lines,
 * less than half of what the same pass just read, and is not repeated for size until at least
 * max(live, COMPACT_SLACK) more lines are appended or runs deleted.
 */
export const COMPACT_SLACK = 64;

/**
 * Rewrites the index (header, sorted body) when it has grown well beyond its runs (see
 * COMPACT_SLACK) or when the constant-cost listing could not use it: no header (appends alone,
 * before any full pass rewrote it), a tail over MAX_TAIL_BYTES, corrupt lines, or counts that disagree with this
 * pass's directory listing (a run copied in or removed by hand, a lost line). Best effort, under
 * the lock file (tried once, never waited for: runs append without it and are never blocked): any
 * failure leaves the old index in place. Lines other processes append while it runs are copied
 * over from the old file after the rename.
 */
async function rewriteIfStale(
  base: SafeDir,
  read: IndexRead,
  names: readonly string[],
  runIds: readonly string[],
  foreign: number,
): Promise<void> {
  const live = new Set(runIds);
  let kept = 0;
  let started = 0;
  for (const [runId, run] of read.index) {
    if (!live.has(runId)) continue;
    kept++;
    if (run.startedAt !== undefined) started++;
  }
  try {
    const others = (await otherDirs(base, names)) + foreign;
    if (read.lines <= 2 * kept + COMPACT_SLACK && fitsListing(read, kept, started, runIds, others))
      return;
    await withLock(base, COMPACT_LOCK, () => compactIndex(base, read, live, runIds, others));
  } catch {
    // busy (another process is rewriting), a full disk, a planted link: the index stays as it is
  }
}

/**
 * Whether the constant-cost listing would take this index as it is: its header and tail agree
 * with what this pass listed. (The listing itself checks the directory's link count, which this
 * pass's names stand in for here.)
 */
function fitsListing(
  read: IndexRead,
  kept: number,
  started: number,
  runIds: readonly string[],
  others: number,
): boolean {
  const l = read.layout;
  // A header over MAX_HEADER_BYTES (thousands of runs not ended or unindexed) is not a reason:
  // a rewrite would write it again, on every full pass.
  if (l === undefined || read.bad > 0 || l.tail.bad > 0 || l.tailBytes > MAX_TAIL_BYTES)
    return false;
  return (
    read.index.size === kept && // every run it names has a directory
    l.header.live + l.tail.delta === started &&
    l.header.unindexed.length - l.tail.settled === runIds.length - started &&
    l.header.others === others
  );
}

/** Subdirectories of the store root that are neither runs nor trash (counted in the header). */
async function otherDirs(base: SafeDir, names: readonly string[]): Promise<number> {
  let n = 0;
  for (const name of names) {
    if (RUN_ID_PATTERN.test(name) || name.startsWith(TRASH_PREFIX)) continue;
    const st = await base.io.lstat(base.at(name)).catch(() => undefined);
    if (st?.isDirectory()) n++;
  }
  return n;
}

const COMPACT_LOCK = {
  timeoutMs: 0,
  staleMs: 60_000,
  codes: { ...CODES, busy: CatalogFsCode.Busy },
} as const;

async function compactIndex(
  base: SafeDir,
  read: IndexRead,
  live: Set<string>,
  runIds: readonly string[],
  others: number,
): Promise<void> {
  const body: BodyEntry[] = [];
  const listed = new Set<string>();
  for (const [runId, run] of read.index) {
    // A run begun after the directory listing but before the index read has its line and not
    // (in `live`) its directory: a run that has not ended is kept if its directory exists now.
    // Deleted runs have ended (deletion refuses others without force), so this costs few lstats.
    if (!live.has(runId)) {
      if (run.ended) continue;
      const st = await fsp.lstat(base.at(runId)).catch(() => undefined);
      if (!st?.isDirectory()) continue;
    }
    // A run without a known start time stays out of the body (counted as unindexed) until a
    // listing reads its run.json and appends one: the body's order must be the listing's.
    if (run.startedAt === undefined) continue;
    body.push({ runId, startedAt: run.startedAt, ended: run.ended });
    listed.add(runId);
  }
  body.sort((a, b) => newestFirst(b, a)); // oldest first: the newest are the last lines
  const bodyText = indexText(
    body.map(({ runId, startedAt, ended }) => ({ runId, startedAt, ...(ended ? { ended } : {}) })),
  );
  const unindexed = runIds.filter((runId) => !listed.has(runId));
  const header = headerLine({
    live: body.length,
    unindexed,
    others,
    body: Buffer.byteLength(bodyText),
    open: body.filter((r) => !r.ended).map(({ runId, startedAt }) => ({ runId, startedAt })),
  });
  // The file read, held open across the rename: what was appended to it after the read is read
  // back from it and appended to the new index.
  const old = await fsp.open(base.at(INDEX_FILE), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const st = await old.stat();
    if (!st.isFile() || st.ino !== read.ino) return; // replaced since it was read
    await writeFileAtomic(base, INDEX_FILE, header + bodyText, 0o600, CODES, {
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
