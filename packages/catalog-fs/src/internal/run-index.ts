// The runs index: one append-only file in the store's base directory with a line per run start
// ({ runId, startedAt }) and per run end ({ runId, ended: true }). Listing the newest runs sorts
// it instead of reading every run.json, and recovery skips runs it knows ended: both cost what
// they touch, not what is stored. A cache, never the truth: lines for deleted runs are ignored,
// and a run missing from it (recorded before it existed, or a lost append) is read once and added.
import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { readRegularFile, type SafeDir } from './safe-dir.js';
import { CODES, RUN_ID_PATTERN } from './run-layout.js';

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
  const out = new Map<string, IndexedRun>();
  let text: string;
  try {
    const raw = await readRegularFile(base, INDEX_FILE, MAX_INDEX_BYTES, CODES);
    if (!raw) return out;
    text = raw.data.toString('utf8');
  } catch {
    return out; // a symlink, a FIFO, an oversized file: rebuilt from the run directories
  }
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue; // a torn line from a crash mid-append
    }
    if (typeof v !== 'object' || v === null) continue;
    const { runId, startedAt, ended } = v as Record<string, unknown>;
    if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) continue;
    const known = out.get(runId);
    out.set(runId, {
      ...(typeof startedAt === 'number' && Number.isFinite(startedAt)
        ? { startedAt }
        : known?.startedAt === undefined
          ? {}
          : { startedAt: known.startedAt }),
      ended: ended === true || known?.ended === true,
    });
  }
  return out;
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
