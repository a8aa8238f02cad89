// Maps failures of @wf/catalog-fs (the run store's and the catalog's, data with a code) to the
// CLI's codes and exit codes: one place, so a full disk, a damaged record or a missing run exits
// the same way whichever verb met it.
import { CliError } from './errors.js';

/** A full, read-only or failing disk: the write that failed is named, the hint says what helps. */
export function storageError(error: { code: string; message: string }, what: string): CliError {
  return new CliError('WF_CLI_STORAGE_FAILED', `${what}: ${error.message}`, {
    hint: 'free space on that disk (or make it writable), then run the command again; nothing reported done was lost',
    details: { code: error.code },
  });
}

/** Whether a @wf/catalog-fs code is an I/O failure of the disk (full, read-only, failing). */
export function isStorageCode(code: string): boolean {
  return code === 'WF_CATALOG_IO' || code === 'WF_CATALOG_RUN_IO';
}

export function storeError(error: { code: string; message: string }, runId: string): CliError {
  if (error.code === 'WF_CATALOG_RUN_NOT_FOUND' || error.code === 'WF_CATALOG_RUN_INVALID_ID') {
    return new CliError(
      'WF_CLI_RUN_NOT_FOUND',
      `no run ${JSON.stringify(runId)} in this project: ${error.message}`,
      {
        hint: '`wf runs` lists the recorded runs of this directory',
      },
    );
  }
  if (error.code === 'WF_CATALOG_RUN_ACTIVE' || error.code === 'WF_CATALOG_RUN_NOT_TERMINAL') {
    return new CliError('WF_CLI_RUN_ACTIVE', error.message, {
      hint:
        error.code === 'WF_CATALOG_RUN_NOT_TERMINAL'
          ? 'a stale record whose owner is gone can be deleted with --force'
          : 'wait for the run to end, or stop it first',
    });
  }
  if (error.code === 'WF_CATALOG_RUN_CORRUPT' || error.code === 'WF_CATALOG_RUN_UNSAFE_PATH') {
    return new CliError('WF_CLI_RUN_CORRUPT', `run ${runId}: ${error.message}`, {
      hint: `the run directory was damaged or hand-edited; \`wf delete-run --force ${runId}\` removes it`,
    });
  }
  if (isStorageCode(error.code)) return storageError(error, `run ${runId}`);
  return new CliError('WF_CLI_INTERNAL', `run store: ${error.code}: ${error.message}`);
}

/**
 * A run id, a display alias, or `last` (the most recently started run of this directory). With
 * `recover` (a store opened with `recoverAtOpen: false`) crash recovery runs first: for `last` in
 * the same pass as the listing that finds it.
 */
export async function resolveRunTarget(
  store: {
    listRecent(
      limit: number,
      options?: { readonly recover?: boolean },
    ): Promise<{ readonly runs: readonly { runId: string }[] }>;
    recover(): Promise<unknown>;
    resolve(
      target: string,
    ): Promise<
      { ok: true; runId: string } | { ok: false; error: { code: string; message: string } }
    >;
  },
  target: string,
  options: { readonly recover?: boolean } = {},
): Promise<string> {
  if (target === 'last') {
    const newest = (await store.listRecent(1, options.recover ? { recover: true } : {})).runs[0];
    if (!newest) {
      throw new CliError(
        'WF_CLI_RUN_NOT_FOUND',
        'no runs recorded in this directory yet, so there is no last run',
        {
          hint: 'start one with `wf run <workflow>`; `wf list` shows the workflows',
        },
      );
    }
    return newest.runId;
  }
  if (options.recover) await store.recover();
  const resolved = await store.resolve(target);
  if (!resolved.ok) throw storeError(resolved.error, target);
  return resolved.runId;
}
