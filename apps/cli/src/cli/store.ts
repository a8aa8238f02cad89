// The project's run store (`<cwd>/.dsh/workflow-runs`), through @wf/catalog-fs's light run-store
// entry: the verbs that only read runs (runs, show, events, report, prune) never load the catalog
// or its capsule parser.
import { join } from 'node:path';
import { openRunStore, type RunStore } from '@wf/catalog-fs/run-store';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';

export type { RunStore };

export function runsRoot(ctx: CliContext): string {
  return join(ctx.cwd, '.dsh', 'workflow-runs');
}

export async function openProjectStore(ctx: CliContext): Promise<RunStore> {
  try {
    return await openRunStore({ project: ctx.cwd, root: runsRoot(ctx) });
  } catch (e) {
    throw new CliError(
      'WF_CLI_RUN_CORRUPT',
      `the run store at ${runsRoot(ctx)} cannot be opened: ${(e as Error).message}`,
      {
        hint: 'check that .dsh/workflow-runs is a real directory you can write (not a symlink)',
        cause: e,
      },
    );
  }
}

/** Runs `body` with the project's run store open, and closes it whatever happens. */
export async function withProjectStore<T>(
  ctx: CliContext,
  body: (store: RunStore) => Promise<T>,
): Promise<T> {
  const store = await openProjectStore(ctx);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}
