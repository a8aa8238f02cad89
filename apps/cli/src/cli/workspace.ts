// Where the command line finds things: the built-in workflows and patterns (@wf/patterns), the
// project and personal catalogs (`<cwd>/.dsh/workflows`, `$DSH_HOME/workflows`), and the run store
// (`<cwd>/.dsh/workflow-runs`), all through @wf/catalog-fs so the CLI and the plugin share one
// on-disk format. The shipped workflows live in shipped.ts: the run-store verbs do not load them.
import { join } from 'node:path';
import {
  type Catalog,
  defaultCatalogRoots,
  openCatalog,
  openRunStore,
  type RunStore,
} from '@wf/catalog-fs';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';

export type { RunStore };

export function runsRoot(ctx: CliContext): string {
  return join(ctx.cwd, '.dsh', 'workflow-runs');
}

/** Directories `wf.readFile` must never read: the run store and both catalog roots. */
export function protectedRoots(ctx: CliContext): string[] {
  const roots = defaultCatalogRoots(ctx.cwd, { DSH_HOME: ctx.env.DSH_HOME, HOME: ctx.env.HOME });
  return [runsRoot(ctx), roots.project, roots.personal];
}

/** The catalog, or undefined when its roots cannot be opened (the CLI still runs built-ins). */
export async function openProjectCatalog(ctx: CliContext): Promise<Catalog | undefined> {
  const roots = defaultCatalogRoots(ctx.cwd, { DSH_HOME: ctx.env.DSH_HOME, HOME: ctx.env.HOME });
  try {
    return await openCatalog({ project: roots.project, personal: roots.personal });
  } catch (e) {
    if (!ctx.json)
      ctx.stderr.write(
        `wf: the workflow catalog cannot be opened (${(e as Error).message}); only built-ins are available\n`,
      );
    return undefined;
  }
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
