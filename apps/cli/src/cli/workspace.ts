// Where the command line finds workflows: the project and personal catalogs
// (`<cwd>/.dsh/workflows`, `$DSH_HOME/workflows`) through @wf/catalog-fs, so the CLI and the
// plugin share one on-disk format. The run store is in store.ts and the shipped workflows in
// shipped.ts: the run-store verbs load neither the catalog nor the patterns.
import { type Catalog, defaultCatalogRoots, openCatalog } from '@wf/catalog-fs';
import { type CliContext, printNote } from './context.js';
import { CliError } from './errors.js';
import { runsRoot } from './store.js';

export type { RunStore } from './store.js';
export { openProjectStore, runsRoot, withProjectStore } from './store.js';

/** Directories `wf.readFile` must never read: the run store and both catalog roots. */
export function protectedRoots(ctx: CliContext): string[] {
  const roots = defaultCatalogRoots(ctx.cwd, { DSH_HOME: ctx.env.DSH_HOME, HOME: ctx.env.HOME });
  return [runsRoot(ctx), roots.project, roots.personal];
}

/** Why the catalog could not be opened for a command, kept for its errors (`--json` included). */
const problems = new WeakMap<CliContext, string>();

/** Why `openProjectCatalog(ctx)` returned undefined, if it did. */
export function catalogProblem(ctx: CliContext): string | undefined {
  return problems.get(ctx);
}

/** The catalog, or undefined when its roots cannot be opened (the CLI still runs built-ins). */
export async function openProjectCatalog(ctx: CliContext): Promise<Catalog | undefined> {
  const roots = defaultCatalogRoots(ctx.cwd, { DSH_HOME: ctx.env.DSH_HOME, HOME: ctx.env.HOME });
  try {
    return await openCatalog({ project: roots.project, personal: roots.personal });
  } catch (e) {
    const reason = `the workflow catalog cannot be opened: ${(e as Error).message}`;
    problems.set(ctx, reason);
    if (!ctx.json) printNote(ctx, `wf: ${reason}; only built-ins are available`);
    return undefined;
  }
}

/** The catalog for a verb that needs it: its open failure is the verb's error, reason included. */
export async function requireProjectCatalog(ctx: CliContext): Promise<Catalog> {
  const catalog = await openProjectCatalog(ctx);
  if (catalog) return catalog;
  throw new CliError(
    'WF_CLI_STORAGE_FAILED',
    catalogProblem(ctx) ?? 'the workflow catalog cannot be opened',
    {
      hint: 'check that .dsh/workflows (and $DSH_HOME/workflows) are directories you can read and write',
    },
  );
}
