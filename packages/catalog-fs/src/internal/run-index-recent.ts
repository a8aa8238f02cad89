// The constant-cost listing (what `wf runs` pays, whatever is stored): the newest runs from the index's header, its tail and the
// end of its sorted body, without listing the store directory. The index stays a cache, never the
// truth: it is used only when the counts it implies equal the store directory's link count (on
// Linux file systems, 2 + its subdirectories), so a run copied in or removed by hand, a lost
// append, trash or a concurrent begin or delete sends the caller to the full pass, which lists
// the directory and rewrites the index.
import { INDEX_FILE, MAX_HEADER_BYTES, MAX_TAIL_BYTES } from './run-index.js';
import {
  type BodyEntry,
  foldTail,
  newestFirst,
  type OpenRun,
  parseBodyLine,
  parseHeader,
} from './run-index-format.js';
import { CODES } from './run-layout.js';
import { noteRead, readRegularFileFrom, type SafeDir } from './safe-dir.js';

/**
 * Bytes of the index's start read first: a header with few open runs is ~100 bytes, and a longer
 * one (up to MAX_HEADER_BYTES) costs a second read. Reading a larger head and body chunk up front
 * would make every one-shot `wf show last` read, decode and collect bytes it does not need.
 */
const HEAD_FIRST = 4 * 1024;
/**
 * The body's end read first: BODY_LINE_BYTES per run asked for (a line is ~96 bytes with the
 * store's run ids), at least BODY_MIN and at most BODY_CHUNK (~170 runs); a page that needs more,
 * because of long ids or runs deleted in the tail, reads 4x more each time.
 */
const BODY_LINE_BYTES = 128;
const BODY_MIN = 2 * 1024;
const BODY_CHUNK = 16 * 1024;

export interface RecentRuns {
  /** The newest runs (at most the number asked for), newest first, ties in run id order. */
  readonly newest: readonly OpenRun[];
  /** Stored runs, as a full listing counts them. */
  readonly total: number;
  /** Runs not seen end: what recovery opens. */
  readonly open: readonly OpenRun[];
  /**
   * Run directories the index has no start line for (recorded before it, or a start that never
   * completed): recovery opens these too, reads their start (and adds it) or removes them.
   */
  readonly unindexed: readonly string[];
}

/**
 * The newest `keep` runs and the count from the index alone, or undefined when the index cannot
 * vouch for them (the caller then lists the directory). Reads at most the header, the tail
 * (MAX_TAIL_BYTES) and enough of the body's end for `keep` runs: the same bytes with 10 or
 * 100,000 runs stored.
 */
export async function recentFromIndex(
  base: SafeDir,
  keep: number,
): Promise<RecentRuns | undefined> {
  try {
    return await readRecent(base, keep);
  } catch {
    return undefined; // a symlink, a FIFO, an I/O error: the full pass decides
  }
}

async function readRecent(base: SafeDir, keep: number): Promise<RecentRuns | undefined> {
  // The link count first: a run begun or deleted while the index is read makes them disagree.
  const dir = await base.stat();
  if (!dir.isDirectory() || dir.nlink < 2) return undefined; // btrfs and others count no subdirs
  let head = await readIndex(base, 0, HEAD_FIRST);
  if (head && head.data.indexOf(0x0a) < 0 && head.data.length < head.size) {
    head = await readIndex(base, 0, MAX_HEADER_BYTES); // a long header (many open runs)
  }
  if (!head) return undefined;
  const first = head.data.indexOf(0x0a);
  const header = first > 0 ? parseHeader(head.data.toString('utf8', 0, first)) : undefined;
  if (header === undefined) return undefined;
  const bodyAt = first + 1;
  const tailAt = bodyAt + header.body;
  if (tailAt > head.size || head.size - tailAt > MAX_TAIL_BYTES) return undefined;
  const unindexedSet = new Set(header.unindexed);
  const firstSpan = Math.min(BODY_CHUNK, Math.max(BODY_MIN, keep * BODY_LINE_BYTES));
  for (let span = firstSpan; ; span *= 4) {
    const from = Math.max(bodyAt, tailAt - span);
    let chunk: { readonly data: Buffer; readonly ino: number } | undefined;
    if (head.data.length === head.size) {
      chunk = { data: head.data.subarray(from), ino: head.ino }; // the head held the whole file
    } else {
      chunk = await readIndex(base, from, tailAt - from + MAX_TAIL_BYTES);
    }
    if (!chunk || chunk.ino !== head.ino) return undefined; // rewritten meanwhile
    const split = tailAt - from;
    if (split > chunk.data.length || (split > 0 && chunk.data[split - 1] !== 0x0a))
      return undefined;
    const tail = foldTail(chunk.data.toString('utf8', split), unindexedSet);
    const live = header.live + tail.delta;
    const unindexed = header.unindexed.length - tail.settled;
    if (tail.bad > 0 || live + unindexed + header.others !== dir.nlink - 2) return undefined;
    // Unindexed runs (no start time known) sort as the oldest: a page that reaches them needs
    // their run.json, which the full pass reads.
    if (unindexed > 0 && keep > live) return undefined;
    const body = bodyLines(chunk.data.toString('utf8', 0, split), from > bodyAt);
    if (body === undefined) return undefined;
    let kept = 0;
    for (const entry of body) if (!tail.runs.get(entry.runId)?.deleted) kept++;
    if (kept < keep && from > bodyAt) continue;
    const byId = new Map<string, number>();
    for (const entry of body) byId.set(entry.runId, entry.startedAt);
    for (const [runId, run] of tail.runs) {
      if (run.deleted) byId.delete(runId);
      else if (run.startedAt !== undefined) byId.set(runId, run.startedAt);
    }
    const newest = [...byId]
      .map(([runId, startedAt]) => ({ runId, startedAt }))
      .sort(newestFirst)
      .slice(0, keep);
    const open = header.open.filter((r) => tail.runs.get(r.runId) === undefined);
    for (const [runId, run] of tail.runs) {
      if (!run.ended && !run.deleted && run.startedAt !== undefined)
        open.push({ runId, startedAt: run.startedAt });
    }
    const notSettled = header.unindexed.filter(
      (runId) => tail.runs.get(runId)?.unindexed !== false,
    );
    return { newest, total: live + unindexed, open, unindexed: notSettled };
  }
}

/** The body's whole lines in `text`, the first dropped when `cut` (it starts mid-line). */
function bodyLines(text: string, cut: boolean): BodyEntry[] | undefined {
  const lines = text.split('\n');
  lines.pop(); // after the last newline: nothing (the body ends with one)
  if (cut) lines.shift();
  const out: BodyEntry[] = [];
  for (const line of lines) {
    const entry = parseBodyLine(line);
    if (entry === undefined) return undefined; // a hand edit: the full pass rewrites it
    out.push(entry);
  }
  return out;
}

/** Up to `maxBytes` of the index from `offset`, each read noted for the tests' byte counts. */
async function readIndex(base: SafeDir, offset: number, maxBytes: number) {
  const read = await readRegularFileFrom(base, INDEX_FILE, offset, maxBytes, CODES);
  await noteRead('index-read', `${base.path}/${INDEX_FILE}@${offset}+${read?.data.length ?? 0}`);
  return read;
}
