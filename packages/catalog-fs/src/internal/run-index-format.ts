// The runs index's compacted form (version 2): a header line, a body sorted by start time, then a
// tail of lines appended since. Pure functions shared by the full pass (which writes and checks it)
// and the constant-cost listing (which reads the header, the tail and the end of the body only).
//
//   {"format":"wf.runs-index","version":2,"live":N,"unindexed":["..."],"others":K,"body":B,
//    "open":[{"runId":"...","startedAt":T}, ...]}
//   one line per run in the body, ascending by (startedAt, runId descending): the newest last
//   lines appended since the rewrite: starts, ends, deletions, repairs
//
// The header names no runId, so a reader of the line format alone skips it.
import { RUN_ID_PATTERN } from './run-layout.js';

export const INDEX_FORMAT = 'wf.runs-index';

export interface IndexHeader {
  /** Body lines: runs with a directory and a start time when the index was rewritten. */
  readonly live: number;
  /**
   * Run directories the body does not list (no start time known: copied in by hand, or no
   * readable run.json). A start line for one in the tail moves it to the live runs.
   */
  readonly unindexed: readonly string[];
  /** Other subdirectories of the store root (not run ids, not trash). */
  readonly others: number;
  /** Bytes of the body, after the header's newline. */
  readonly body: number;
  /** Body runs not seen end: what recovery must open. */
  readonly open: readonly OpenRun[];
}

export interface OpenRun {
  readonly runId: string;
  readonly startedAt: number;
}

/** A run as one body line states it. */
export interface BodyEntry {
  readonly runId: string;
  readonly startedAt: number;
  readonly ended: boolean;
}

export function headerLine(header: IndexHeader): string {
  return `${JSON.stringify({ format: INDEX_FORMAT, version: 2, ...header })}\n`;
}

const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isRunId = (v: unknown): v is string =>
  typeof v === 'string' && RUN_ID_PATTERN.test(v) && !v.includes('..');

const isOpenRun = (v: unknown): v is OpenRun => {
  if (typeof v !== 'object' || v === null) return false;
  const { runId, startedAt } = v as Record<string, unknown>;
  return isRunId(runId) && typeof startedAt === 'number' && Number.isFinite(startedAt);
};

/** The header from the index's first line, or undefined (no header: a plain-line index). */
export function parseHeader(line: string): IndexHeader | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const h = v as Record<string, unknown>;
  if (h.format !== INDEX_FORMAT || h.version !== 2) return undefined;
  const { live, unindexed, others, body, open } = h;
  if (!count(live) || !count(others) || !count(body)) return undefined;
  if (!Array.isArray(unindexed) || !unindexed.every(isRunId)) return undefined;
  if (!Array.isArray(open) || !open.every(isOpenRun)) return undefined;
  return { live, unindexed, others, body, open };
}

/** One body line, or undefined when it is not exactly what a rewrite writes. */
export function parseBodyLine(line: string): BodyEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { runId, startedAt, ended } = v as Record<string, unknown>;
  if (!isRunId(runId) || typeof startedAt !== 'number' || !Number.isFinite(startedAt))
    return undefined;
  if (ended !== undefined && ended !== true) return undefined;
  return { runId, startedAt, ended: ended === true };
}

/** The order listings use: newest first, ties in run id order. */
export function newestFirst(
  a: { readonly runId: string; readonly startedAt: number },
  b: { readonly runId: string; readonly startedAt: number },
): number {
  return b.startedAt - a.startedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}

/** What the tail says about one run, its lines folded in order. */
export interface TailEntry {
  readonly startedAt?: number;
  readonly ended: boolean;
  readonly deleted: boolean;
  /** Still one of the header's unindexed runs (no start or deletion line for it yet). */
  readonly unindexed: boolean;
}

export interface TailFold {
  readonly runs: ReadonlyMap<string, TailEntry>;
  /** Live runs gained (start lines of runs not live before) minus live runs deleted. */
  readonly delta: number;
  /** The header's unindexed runs that a start line made live or a deletion removed. */
  readonly settled: number;
  /** Lines that are not index lines (corrupt, hand-edited). */
  readonly bad: number;
}

/**
 * Folds the tail's whole lines (text up to its last newline) over the header's unindexed runs. A
 * start line counts as a new live run unless the tail already holds that run live: begin()
 * appends one per new directory, a listing one per unindexed run it reads. Any line that breaks
 * this (a repair for a run the body lists, a deletion of an unknown run) makes the count disagree
 * with the directory, and the listing falls back to the full pass that rewrites.
 */
export function foldTail(text: string, unindexed: ReadonlySet<string>): TailFold {
  const runs = new Map<string, TailEntry>();
  let delta = 0;
  let settled = 0;
  let bad = 0;
  const end = text.lastIndexOf('\n');
  if (end < 0) return { runs, delta, settled, bad };
  for (const line of text.slice(0, end).split('\n')) {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      bad++;
      continue;
    }
    const { runId, startedAt, ended, deleted } = (v ?? {}) as Record<string, unknown>;
    if (typeof v !== 'object' || v === null || !isRunId(runId)) {
      bad++;
      continue;
    }
    const known = runs.get(runId) ?? {
      ended: false,
      deleted: false,
      unindexed: unindexed.has(runId),
    };
    const liveInTail = !known.deleted && !known.unindexed && known.startedAt !== undefined;
    if (deleted === true) {
      if (known.unindexed) settled++;
      else delta--;
      runs.set(runId, { ended: true, deleted: true, unindexed: false });
    } else if (typeof startedAt === 'number' && Number.isFinite(startedAt)) {
      if (known.unindexed) settled++;
      if (!liveInTail) delta++;
      const isEnded = ended === true || (known.ended && !known.deleted);
      runs.set(runId, { startedAt, ended: isEnded, deleted: false, unindexed: false });
    } else if (ended === true) {
      runs.set(runId, { ...known, ended: true });
    } else {
      bad++;
    }
  }
  return { runs, delta, settled, bad };
}
