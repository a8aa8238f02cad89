// Crash recovery (invariant 9): runs whose owner process is gone are marked `interrupted`, trash
// and abandoned temp files are removed. One pass over the store root serves recovery and a listing.
import { promises as fsp } from 'node:fs';
import { CatalogFsCode } from '../errors.js';
import type { RunSnapshot } from '../run-store-types.js';
import { randomBytes } from './crypto.js';
import {
  CODES,
  isTerminal,
  liveRun,
  openBase,
  ownerGone,
  type RunStoreState,
  readSnapshotIfAny,
  withoutRunJson,
  TRASH_PREFIX,
} from './run-layout.js';
import { appendIndex, type IndexLine, scanStore, type StoreScan } from './run-index.js';
import type { OpenRun } from './run-index-format.js';
import { recentFromIndex } from './run-index-recent.js';
import {
  isAbandonedTemp,
  openChildDir,
  readRegularFileFrom,
  type SafeDir,
  TEMP_PREFIX,
  withDir,
  writeFileAtomic,
} from './safe-dir.js';

/**
 * Crash recovery. When the runs index vouches for the store (run-index-recent.ts: one fstat and
 * the index's head and tail), only the runs it has not seen end are opened: the same bytes with
 * 10 or 100,000 runs stored, so `wf run`, `wf show <id>` and the plugin's opens stay constant.
 * Otherwise (trash, runs copied in or removed by hand, an index without a header) the full pass lists the
 * store, removes trash and abandoned temp files, and rewrites the index. Abandoned temp files at
 * the store's root (a crash while the index was rewritten) wait for the next full pass.
 */
export async function recoverRuns(s: RunStoreState): Promise<Recovered> {
  const base = await openBase(s, false);
  if (!base) return { interrupted: [], deferred: [] };
  try {
    const vouched = await recentFromIndex(base, 0);
    return await recoverScanned(s, base, vouched ? scanOfOpen(vouched) : await scanStore(base));
  } finally {
    await base.close();
  }
}

/**
 * What a recovery pass did: the runs it marked `interrupted`, and the stale runs it could not mark
 * (the disk is full or read-only: each with the reason). A deferred run stays as it is on disk,
 * never active, and the next recovery that can write marks it; reads never wait for it.
 */
export interface Recovered {
  readonly interrupted: readonly string[];
  readonly deferred: readonly { readonly runId: string; readonly reason: string }[];
}

/**
 * A scan made of the runs the index has not seen end, and of the run directories it has no start
 * for, for recovery without listing the store: no names (trash and temp files wait for a full
 * pass; trash makes the index disagree anyway).
 */
export function scanOfOpen(recent: {
  readonly open: readonly OpenRun[];
  readonly unindexed: readonly string[];
}): StoreScan {
  const index = new Map(
    recent.open.map((r) => [r.runId, { startedAt: r.startedAt, ended: false }]),
  );
  return {
    names: [],
    runIds: [...index.keys(), ...recent.unindexed].sort(),
    notRuns: [],
    index,
  };
}

/** Removes a temp file or the temp directory of a begin() whose writer is gone. */
async function removeAbandonedTemp(dir: SafeDir, name: string, now: number): Promise<void> {
  const st = await fsp.lstat(dir.at(name)).catch(() => undefined);
  if (!st || !isAbandonedTemp(name, st.mtimeMs, now)) return;
  if (st.isDirectory())
    await fsp.rm(dir.at(name), { recursive: true, force: true }).catch(() => undefined);
  else await fsp.unlink(dir.at(name)).catch(() => undefined);
}

/**
 * Recovery over one scan of the store (a listing in the same pass reuses it): removes trash and
 * abandoned temp files, and marks every non-terminal run whose owner is gone `interrupted`. Opens
 * only the runs the index has not seen end; a run it did not know is added to it (in the file and
 * in `scan.index`), so the next pass need not open it again. Never fails for want of space: what
 * it cannot write is returned as deferred.
 */
export async function recoverScanned(
  s: RunStoreState,
  base: SafeDir,
  scan: StoreScan,
): Promise<Recovered> {
  const found: Found = { interrupted: [], deferred: [], learned: [], halfMade: [] };
  const now = Date.now();
  for (const name of scan.names) {
    if (name.startsWith(TRASH_PREFIX)) {
      await fsp.rm(base.at(name), { recursive: true, force: true }).catch(() => undefined);
    } else if (name.startsWith(TEMP_PREFIX)) {
      await removeAbandonedTemp(base, name, now);
    }
  }
  for (const runId of scan.notRuns) await noteHalfMade(base, runId, now, found);
  try {
    await recoverRunDirs(s, base, scan, now, found);
  } finally {
    // Also after a failure part-way: the runs marked so far are recorded.
    for (const line of found.learned) {
      const known = scan.index.get(line.runId);
      const startedAt = line.startedAt ?? known?.startedAt;
      const isEnded = line.ended === true || known?.ended === true;
      scan.index.set(
        line.runId,
        startedAt === undefined ? { ended: isEnded } : { startedAt, ended: isEnded },
      );
    }
    await appendIndex(base, found.learned);
  }
  for (const runId of found.halfMade) await removeHalfMade(base, runId, scan);
  return { interrupted: found.interrupted, deferred: found.deferred };
}

interface Found {
  readonly interrupted: string[];
  readonly deferred: { runId: string; reason: string }[];
  readonly learned: IndexLine[];
  /** Run directories without a complete start, old enough that no begin() is still at them. */
  readonly halfMade: string[];
}

/**
 * A run directory without run.json that recorded nothing is left alone this long after its last
 * change: an earlier version's begin() built runs in place and may still be writing one.
 */
export const HALF_MADE_GRACE_MS = 60_000;

/** Notes a directory without run.json for removal when it is a half-made start old enough. */
async function noteHalfMade(base: SafeDir, runId: string, now: number, found: Found) {
  await withDir(
    await openChildDir(base, runId, { create: false, codes: CODES }).catch(() => undefined),
    async (dir) => {
      const st = await dir.stat().catch(() => undefined);
      if (
        st &&
        now - st.mtimeMs > HALF_MADE_GRACE_MS &&
        (await withoutRunJson(dir)) === 'half-made'
      )
        found.halfMade.push(runId);
    },
  );
}

/** Moves a half-made run directory to trash, then removes it (a crash part-way leaves trash). */
async function removeHalfMade(base: SafeDir, runId: string, scan: StoreScan): Promise<void> {
  const trash = `${TRASH_PREFIX}${runId}-${randomBytes(4).toString('hex')}`;
  try {
    await fsp.rename(base.at(runId), base.at(trash));
  } catch {
    return;
  }
  scan.index.delete(runId);
  for (const list of [scan.runIds, scan.notRuns] as string[][]) {
    const at = list.indexOf(runId);
    if (at >= 0) list.splice(at, 1);
  }
  await fsp.rm(base.at(trash), { recursive: true, force: true }).catch(() => undefined);
}

async function recoverRunDirs(
  s: RunStoreState,
  base: SafeDir,
  scan: StoreScan,
  now: number,
  found: Found,
): Promise<void> {
  // Runs the index saw end are terminal for good: recovery opens only the others.
  for (const runId of scan.runIds) {
    const known = scan.index.get(runId);
    if (known?.ended || liveRun(s, runId)) continue;
    await withDir(
      await openChildDir(base, runId, { create: false, codes: CODES }).catch(() => undefined),
      async (dir) => {
        for (const file of await fsp.readdir(dir.self)) {
          if (file.startsWith(TEMP_PREFIX)) await removeAbandonedTemp(dir, file, now);
        }
        let snapshot: RunSnapshot | undefined;
        try {
          snapshot = await readSnapshotIfAny(dir);
        } catch {
          return;
        }
        if (!snapshot) {
          await noteHalfMade(base, runId, now, found);
          return;
        }
        await recoverRun(s, dir, runId, snapshot, known, now, found);
      },
    );
  }
}

/** Marks one run `interrupted` when its owner is gone; what it learns goes to the index. */
async function recoverRun(
  s: RunStoreState,
  dir: SafeDir,
  runId: string,
  snapshot: RunSnapshot,
  known: { readonly startedAt?: number } | undefined,
  now: number,
  found: Found,
): Promise<void> {
  // As listRecent's repair: a run.json without a start time sorts as the oldest.
  const startedAt = known?.startedAt === undefined ? snapshot.startedAt : undefined;
  const start = startedAt === undefined ? {} : { startedAt };
  if (isTerminal(snapshot.status)) {
    found.learned.push({ runId, ...start, ended: true });
    return;
  }
  if (!ownerGone(s, snapshot, runId, now)) {
    if (startedAt !== undefined) found.learned.push({ runId, startedAt });
    return;
  }
  const owner = snapshot.owner;
  const marked = {
    ...snapshot,
    status: 'interrupted',
    // The run ended at its last recorded event, not when this recovery noticed.
    endedAt: (await lastEventTime(dir)) ?? snapshot.startedAt ?? now,
    updatedAt: now,
    interruptedFrom: snapshot.status,
    error: {
      code: CatalogFsCode.RunInterrupted,
      message: `the process that owned this run${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''} is gone; recorded as interrupted`,
    },
  };
  try {
    // A result.json beside a run that never recorded its end (its owner died between the two
    // writes) is no result of it: removed first, so a result on disk always has its end beside it.
    await fsp.unlink(dir.at('result.json')).catch(() => undefined);
    await writeFileAtomic(dir, 'run.json', `${JSON.stringify(marked, null, 2)}\n`, 0o600, CODES);
  } catch (error) {
    // A full or read-only disk: the run stays as it is (its owner is gone, so it is not active)
    // until a recovery that can write marks it. Reads go on.
    found.deferred.push({ runId, reason: error instanceof Error ? error.message : String(error) });
    if (startedAt !== undefined) found.learned.push({ runId, startedAt });
    return;
  }
  found.interrupted.push(runId);
  found.learned.push({ runId, ...start, ended: true });
}

/** Bytes read from the end of events.jsonl to find the last complete event line. */
const TAIL_BYTES = 64 * 1024;

/** The time of the last complete, parseable event line (a torn last line is skipped). */
async function lastEventTime(dir: SafeDir): Promise<number | undefined> {
  try {
    const st = await fsp.lstat(dir.at('events.jsonl'));
    if (!st.isFile()) return undefined;
    const chunk = await readRegularFileFrom(
      dir,
      'events.jsonl',
      Math.max(0, st.size - TAIL_BYTES),
      TAIL_BYTES,
      CODES,
    );
    if (!chunk) return undefined;
    const lines = chunk.data.toString('utf8').split('\n');
    // The last element follows the final newline: a torn write, or empty.
    for (let i = lines.length - 2; i >= 0; i -= 1) {
      try {
        const event: unknown = JSON.parse(lines[i] ?? '');
        const time = (event as { time?: unknown } | null)?.time;
        if (typeof time === 'number' && Number.isFinite(time)) return time;
      } catch {
        // the first line of the tail may be cut mid-line; keep looking
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}
