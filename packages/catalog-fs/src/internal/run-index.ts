// The runs index: one append-only file in the store's base directory with a line per run start
// ({ runId, startedAt }) and per run end ({ runId, ended: true }). Listing the newest runs sorts
// it instead of reading every run.json, and recovery skips runs it knows ended: both cost what
// they touch, not what is stored. A cache, never the truth: lines for deleted runs are ignored,
// and a run missing from it (recorded before it existed, or a lost append) is read once and added.
import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { noteRead, readRegularFile, type SafeDir } from './safe-dir.js';
import { CODES, RUN_ID_PATTERN, runIdsOf } from './run-layout.js';

const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;

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

/** What the index says about each run; empty when it is missing, unreadable or too large. */
export async function readIndex(base: SafeDir): Promise<Map<string, IndexedRun>> {
  let text: string;
  try {
    const raw = await readRegularFile(base, INDEX_FILE, MAX_INDEX_BYTES, CODES);
    if (!raw) return new Map();
    text = raw.data.toString('utf8');
  } catch {
    return new Map(); // a symlink, a FIFO, an oversized file: rebuilt from the run directories
  }
  return parseIndex(text);
}

/**
 * Parses the index text. The text after the last newline is a torn append (a prefix of a JSON
 * object line never parses as one) and is ignored; corrupt lines are skipped.
 */
export function parseIndex(text: string): Map<string, IndexedRun> {
  const out = new Map<string, IndexedRun>();
  const end = text.lastIndexOf('\n');
  if (end < 0) return out;
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
  return out;
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
  const names = await fsp.readdir(base.self);
  await noteRead('dir-listed', base.path);
  const index = await readIndex(base);
  return { names, runIds: runIdsOf(names), index };
}

/**
 * Appends lines in one write (O_APPEND: concurrent writers do not interleave lines). Best effort:
 * a failed append only makes a later listing read that run's run.json.
 */
export async function appendIndex(base: SafeDir, lines: readonly IndexLine[]): Promise<void> {
  if (lines.length === 0) return;
  const text = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  let handle: fsp.FileHandle | undefined;
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
