// The run store's maintenance: display aliases, deletion (never of an active run, invariant 9),
// retention, crash recovery of runs whose owner is gone, and flushing or closing live runs.
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { RunSnapshot, RunSummary } from '../run-store-types.js';
import {
  CODES,
  checkRunId,
  isTerminal,
  LIVE,
  liveRun,
  openBase,
  openRun,
  ownerGone,
  type RunStoreState,
  readSnapshot,
  runIds,
  summarize,
  TRASH_PREFIX,
} from './run-layout.js';
import { appendIndex, readIndex } from './run-index.js';
import { listRuns } from './run-queries.js';
import { flushRun, persistSnapshot, retireRun } from './run-recorder.js';
import {
  ioError,
  isAbandonedTemp,
  openChildDir,
  readRegularFileFrom,
  type SafeDir,
  TEMP_PREFIX,
  withDir,
  writeFileAtomic,
} from './safe-dir.js';

export async function renameRun(
  s: RunStoreState,
  runId: string,
  displayName: string,
): Promise<Result<{ displayName: string }>> {
  try {
    checkRunId(runId);
    if (
      typeof displayName !== 'string' ||
      displayName.trim() === '' ||
      displayName.length > 128 ||
      /[\u0000-\u001f\u007f]/.test(displayName)
    ) {
      throw new CatalogFsError(
        CatalogFsCode.RunInvalidId,
        'a display name must be 1 to 128 printable characters',
      );
    }
    // The alias lives beside run.json, so renaming never rewrites a live owner's snapshot.
    const done = await withDir(await openRun(s, runId), async (dir) => {
      await writeFileAtomic(
        dir,
        'alias.json',
        `${JSON.stringify({ displayName })}\n`,
        0o600,
        CODES,
      );
      return true;
    });
    if (done === undefined) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
    return { ok: true, displayName };
  } catch (error) {
    return fail(error);
  }
}

export async function deleteRun(
  s: RunStoreState,
  runId: string,
  deleteOptions: { readonly force?: boolean } = {},
): Promise<Result<{ deleted: string }>> {
  try {
    checkRunId(runId);
    const base = await openBase(s, false);
    if (!base) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
    try {
      const summary = await summarize(s, base, runId);
      if (!summary) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
      if (summary.error?.code === CatalogFsCode.RunUnsafePath) {
        throw new CatalogFsError(summary.error.code, summary.error.message);
      }
      // invariant 9: an active run can never be deleted, not even with force.
      if (summary.active) {
        throw new CatalogFsError(
          CatalogFsCode.RunActive,
          `run ${runId} is active (its owner is alive); stop it first`,
        );
      }
      const status = summary.snapshot?.status;
      if (!isTerminal(status) && deleteOptions.force !== true) {
        throw new CatalogFsError(
          CatalogFsCode.RunNotTerminal,
          `run ${runId} is ${status ?? 'unreadable'} but its owner is gone; run recover() or delete with force: true`,
        );
      }
      // Atomic disappearance first (rename into a trash name), then the slow removal.
      const trash = `${TRASH_PREFIX}${runId}-${randomBytes(4).toString('hex')}`;
      try {
        await fsp.rename(base.at(runId), base.at(trash));
      } catch (error) {
        throw ioError(CODES, `deleting run ${runId}`, error);
      }
      await base.sync();
      await fsp.rm(base.at(trash), { recursive: true, force: true }).catch(() => undefined);
      s.tails.delete(runId);
      return { ok: true, deleted: runId };
    } finally {
      await base.close();
    }
  } catch (error) {
    return fail(error);
  }
}

export async function pruneRuns(
  s: RunStoreState,
  pruneOptions: {
    readonly keep?: number;
    readonly olderThan?: number;
    readonly dryRun?: boolean;
  } = {},
): Promise<{ readonly pruned: readonly string[]; readonly dryRun: boolean }> {
  const keep = pruneOptions.keep ?? 100;
  const dryRun = pruneOptions.dryRun === true;
  const cutoff =
    pruneOptions.olderThan === undefined ? undefined : Date.now() - pruneOptions.olderThan;
  const ended = (s: RunSummary) => {
    const snap = s.snapshot;
    return typeof snap?.endedAt === 'number'
      ? snap.endedAt
      : typeof snap?.startedAt === 'number'
        ? snap.startedAt
        : 0;
  };
  // Retention touches terminal runs only.
  const terminal = (await listRuns(s))
    .filter((s) => !s.active && isTerminal(s.snapshot?.status))
    .sort((a, b) => ended(b) - ended(a));
  const candidates = terminal
    .slice(Math.max(0, keep))
    .filter((s) => cutoff === undefined || ended(s) < cutoff);
  const pruned: string[] = [];
  for (const candidate of candidates) {
    if (dryRun) {
      pruned.push(candidate.runId);
      continue;
    }
    const result = await deleteRun(s, candidate.runId);
    if (result.ok) pruned.push(candidate.runId);
  }
  return { pruned, dryRun };
}

export async function recoverRuns(
  s: RunStoreState,
): Promise<{ readonly interrupted: readonly string[] }> {
  const base = await openBase(s, false);
  if (!base) return { interrupted: [] };
  const interrupted: string[] = [];
  try {
    const names = await fsp.readdir(base.self);
    const now = Date.now();
    for (const name of names) {
      if (name.startsWith(TRASH_PREFIX)) {
        await fsp.rm(base.at(name), { recursive: true, force: true }).catch(() => undefined);
      } else if (name.startsWith(TEMP_PREFIX)) {
        const st = await fsp.lstat(base.at(name)).catch(() => undefined);
        if (st && isAbandonedTemp(name, st.mtimeMs, now)) {
          await fsp.unlink(base.at(name)).catch(() => undefined);
        }
      }
    }
    // Runs the index saw end are terminal for good: recovery opens only the others.
    const index = await readIndex(base);
    for (const runId of await runIds(base)) {
      if (liveRun(s, runId) || index.get(runId)?.ended) continue;
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
          if (isTerminal(snapshot.status) || !ownerGone(s, snapshot, runId, now)) return;
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
          await appendIndex(base, [{ runId, ended: true }]);
        },
      );
    }
    return { interrupted };
  } finally {
    await base.close();
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

export async function flushStore(s: RunStoreState): Promise<void> {
  const mine = [...LIVE.values()].filter((r) => r.key.startsWith(`${s.basePath}\0`));
  for (const run of mine) {
    await flushRun(s, run, true);
    await persistSnapshot(s, run);
  }
}

export async function closeStore(s: RunStoreState): Promise<void> {
  await flushStore(s);
  for (const run of [...LIVE.values()].filter((r) => r.key.startsWith(`${s.basePath}\0`))) {
    await retireRun(run);
  }
}
