// The run store's maintenance: display aliases, deletion (never of an active run, invariant 9),
// retention, and flushing or closing live runs. Crash recovery lives in run-recovery.ts.
import { randomBytes } from './crypto.js';
import { promises as fsp } from 'node:fs';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { RunSummary } from '../run-store-types.js';
import {
  CODES,
  checkRunId,
  isTerminal,
  LIVE,
  openBase,
  openRun,
  type RunStoreState,
  summarize,
  TRASH_PREFIX,
} from './run-layout.js';
import { listRuns } from './run-queries.js';
import { appendIndex } from './run-index.js';
import { flushRun, persistSnapshot, retireRun } from './run-recorder.js';
import { ioError, withDir, writeFileAtomic } from './safe-dir.js';

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
      if (summary.error && deleteOptions.force !== true) {
        // Unreadable: there is no status to judge; only force removes it (it is not live).
        throw new CatalogFsError(
          CatalogFsCode.RunCorrupt,
          `${summary.error.message}; delete it with force: true`,
        );
      }
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
      // Before the trash goes: the constant-cost listing sees the index and the directory agree
      // again only once both happened (a deletion without its line costs a full pass).
      await appendIndex(base, [{ runId, deleted: true }]);
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
