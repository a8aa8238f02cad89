// Crash recovery (invariant 9): runs whose owner process is gone are marked `interrupted`, trash
// and abandoned temp files are removed. One pass over the store root serves recovery and a listing.
import { promises as fsp } from 'node:fs';
import { CatalogFsCode } from '../errors.js';
import type { RunSnapshot } from '../run-store-types.js';
import {
  CODES,
  isTerminal,
  liveRun,
  openBase,
  ownerGone,
  type RunStoreState,
  readSnapshot,
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
export async function recoverRuns(
  s: RunStoreState,
): Promise<{ readonly interrupted: readonly string[] }> {
  const base = await openBase(s, false);
  if (!base) return { interrupted: [] };
  try {
    const vouched = await recentFromIndex(base, 0);
    return await recoverScanned(
      s,
      base,
      vouched ? scanOfOpen(vouched.open) : await scanStore(base),
    );
  } finally {
    await base.close();
  }
}

/**
 * A scan made of the runs the index has not seen end, for recovery without listing the store:
 * no names (trash and temp files wait for a full pass; trash makes the index disagree anyway).
 */
export function scanOfOpen(open: readonly OpenRun[]): StoreScan {
  const index = new Map(open.map((r) => [r.runId, { startedAt: r.startedAt, ended: false }]));
  return { names: [], runIds: [...index.keys()].sort(), index };
}

/**
 * Recovery over one scan of the store (a listing in the same pass reuses it): removes trash and
 * abandoned temp files, and marks every non-terminal run whose owner is gone `interrupted`. Opens
 * only the runs the index has not seen end; a run it did not know is added to it (in the file and
 * in `scan.index`), so the next pass need not open it again.
 */
export async function recoverScanned(
  s: RunStoreState,
  base: SafeDir,
  scan: StoreScan,
): Promise<{ readonly interrupted: readonly string[] }> {
  const interrupted: string[] = [];
  const learned: IndexLine[] = [];
  const now = Date.now();
  for (const name of scan.names) {
    if (name.startsWith(TRASH_PREFIX)) {
      await fsp.rm(base.at(name), { recursive: true, force: true }).catch(() => undefined);
    } else if (name.startsWith(TEMP_PREFIX)) {
      const st = await fsp.lstat(base.at(name)).catch(() => undefined);
      if (st && isAbandonedTemp(name, st.mtimeMs, now)) {
        await fsp.unlink(base.at(name)).catch(() => undefined);
      }
    }
  }
  try {
    await recoverRunDirs(s, base, scan, now, interrupted, learned);
  } finally {
    // Also after a failure part-way (a full disk): the runs marked so far are recorded.
    for (const line of learned) {
      const known = scan.index.get(line.runId);
      const startedAt = line.startedAt ?? known?.startedAt;
      const isEnded = line.ended === true || known?.ended === true;
      scan.index.set(
        line.runId,
        startedAt === undefined ? { ended: isEnded } : { startedAt, ended: isEnded },
      );
    }
    await appendIndex(base, learned);
  }
  return { interrupted };
}

async function recoverRunDirs(
  s: RunStoreState,
  base: SafeDir,
  scan: StoreScan,
  now: number,
  interrupted: string[],
  learned: IndexLine[],
): Promise<void> {
  // Runs the index saw end are terminal for good: recovery opens only the others.
  for (const runId of scan.runIds) {
    const known = scan.index.get(runId);
    if (known?.ended || liveRun(s, runId)) continue;
    await withDir(
      await openChildDir(base, runId, { create: false, codes: CODES }).catch(() => undefined),
      async (dir) => {
        for (const file of await fsp.readdir(dir.self)) {
          if (!file.startsWith(TEMP_PREFIX)) continue;
          const st = await fsp.lstat(dir.at(file)).catch(() => undefined);
          if (st && isAbandonedTemp(file, st.mtimeMs, now))
            await fsp.unlink(dir.at(file)).catch(() => undefined);
        }
        let snapshot: RunSnapshot;
        try {
          snapshot = await readSnapshot(dir);
        } catch {
          return;
        }
        // As listRecent's repair: a run.json without a start time sorts as the oldest.
        const startedAt =
          known?.startedAt === undefined
            ? typeof snapshot.startedAt === 'number'
              ? snapshot.startedAt
              : 0
            : undefined;
        const start = startedAt === undefined ? {} : { startedAt };
        if (isTerminal(snapshot.status)) {
          learned.push({ runId, ...start, ended: true });
          return;
        }
        if (!ownerGone(s, snapshot, runId, now)) {
          if (startedAt !== undefined) learned.push({ runId, startedAt });
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
        await writeFileAtomic(
          dir,
          'run.json',
          `${JSON.stringify(marked, null, 2)}\n`,
          0o600,
          CODES,
        );
        interrupted.push(runId);
        learned.push({ runId, ...start, ended: true });
      },
    );
  }
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
