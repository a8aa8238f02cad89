// Maps run-store failures (data from @wf/catalog-fs) to the CLI's codes and exit codes.
import { CliError } from './errors.js';

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
      hint: 'the run directory was damaged or hand-edited; `wf delete-run --force` removes it',
    });
  }
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
