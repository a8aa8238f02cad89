// Where the command line finds workflows: the project and personal catalogs
// (`<cwd>/.dsh/workflows`, `$DSH_HOME/workflows`) through @wf/catalog-fs, so the CLI and the
// plugin share one on-disk format. The run store is in store.ts and the shipped workflows in
// shipped.ts: the run-store verbs load neither the catalog nor the patterns.
import { type Catalog, defaultCatalogRoots, openCatalog } from '@wf/catalog-fs';
import { type CliContext, printNote } from './context.js';
import { runsRoot } from './store.js';

export type { RunStore } from './store.js';
export { openProjectStore, runsRoot, withProjectStore } from './store.js';

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
      printNote(
        ctx,
        `wf: the workflow catalog cannot be opened (${(e as Error).message}); only built-ins are available`,
      );
    return undefined;
  }
}
