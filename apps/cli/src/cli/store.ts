// The project's run store (`<cwd>/.dsh/workflow-runs`), through @wf/catalog-fs's light run-store
// entry: the verbs that only read runs (runs, show, events, report, prune) never load the catalog
// or its capsule parser.
import { join } from 'node:path';
import { type CatalogFsError, openRunStore, type RunStore } from '@wf/catalog-fs/run-store';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { isStorageCode, storageError } from './store-error.js';

export type { RunStore };

export function runsRoot(ctx: CliContext): string {
  return join(ctx.cwd, '.dsh', 'workflow-runs');
}

export interface ProjectStoreOptions {
  /**
   * False: the store is opened without its recovery pass, and the verb recovers in the same pass
   * as its first read (`listRecent(n, { recover: true })`, or `recover()` before anything else),
   * so `wf runs` lists the runs directory and reads the runs index once, not twice. A recovery
   * failure is still reported as the open's.
   */
  readonly recoverAtOpen?: boolean;
  /**
   * The store opens, lists and reads with synchronous calls (RunStoreOptions.blockingReads): a
   * verb that only waits on its reads gets them without a thread-pool round trip each.
   */
  readonly blockingReads?: boolean;
}

export async function openProjectStore(
  ctx: CliContext,
  options: ProjectStoreOptions = {},
): Promise<RunStore> {
  try {
    const store = await openRunStore({
      project: ctx.cwd,
      root: runsRoot(ctx),
      recoverAtOpen: options.recoverAtOpen !== false,
      blockingReads: options.blockingReads === true,
    });
    if (options.recoverAtOpen !== false) return store;
    return {
      ...store,
      listRecent: (limit, listOptions) =>
        asOpenFailure(ctx, () => store.listRecent(limit, listOptions)),
      recover: () => asOpenFailure(ctx, () => store.recover()),
    };
  } catch (e) {
    throw openFailure(ctx, e);
  }
}

function openFailure(ctx: CliContext, e: unknown): CliError {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && isStorageCode(code))
    return storageError(e as CatalogFsError, `the run store at ${runsRoot(ctx)}`);
  return new CliError(
    'WF_CLI_RUN_CORRUPT',
    `the run store at ${runsRoot(ctx)} cannot be opened: ${(e as Error).message}`,
    {
      hint: 'check that .dsh/workflow-runs is a real directory you can write (not a symlink)',
      cause: e,
    },
  );
}

async function asOpenFailure<T>(ctx: CliContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw openFailure(ctx, e);
  }
}

/** Runs `body` with the project's run store open, and closes it whatever happens. */
export async function withProjectStore<T>(
  ctx: CliContext,
  body: (store: RunStore) => Promise<T>,
  options: ProjectStoreOptions = {},
): Promise<T> {
  const store = await openProjectStore(ctx, options);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}
