// `wf list`: every workflow `wf run <name>` can resolve, in precedence order (built-in > pattern >
// project > personal), with its scope, trust class and validity: the resolver's own listing
// (`listWorkflows`, @wf/catalog-fs), which the DSH plugin shows too. An invalid catalog entry is
// listed with its error (it can never run); a catalog name hidden by a built-in is marked shadowed.
// Shipped workflows come from @wf/patterns' generated index, not the capsules, and catalog
// capsules are validated by the catalog as it lists them, every time (the catalog and its capsule
// parser are not even opened when neither catalog directory exists): listing loads no source
// parser, engine or embedded workflow source.
import { promises as fsp } from 'node:fs';
import { terminalText } from '@wf/bridge/terminal-text';
import { defaultCatalogRoots, listWorkflows } from '@wf/catalog-fs/resolve';
import { SHIPPED_INDEX } from '@wf/patterns/shipped-index';
import { type CliContext, printJson, printLine, printNote, printTable } from './context.js';
import { EXIT, type ExitCode } from './errors.js';

export interface ListedWorkflow {
  name: string;
  scope: 'built-in' | 'pattern' | 'project' | 'personal';
  trust: 'trusted-package' | 'capability-generated' | 'trusted-local';
  valid: boolean;
  description?: string;
  path?: string;
  error?: string;
  shadowed?: boolean;
  inputSchema?: unknown;
  example?: unknown;
}

export async function listCommand(ctx: CliContext): Promise<ExitCode> {
  const workspace = (await catalogRootsExist(ctx)) ? await import('./workspace.js') : undefined;
  const catalog = await workspace?.openProjectCatalog(ctx);
  const listing = await listWorkflows(SHIPPED_INDEX, catalog, { details: true });
  const out: ListedWorkflow[] = listing.entries.map((e) =>
    e.catalogEntry === undefined
      ? {
          name: e.name,
          scope: e.source,
          trust: e.execution,
          valid: e.valid,
          description: e.description ?? '',
          ...(e.error === undefined ? {} : { error: e.error }),
          ...(e.inputSchema === undefined ? {} : { inputSchema: e.inputSchema }),
          ...(e.example === undefined ? {} : { example: e.example }),
        }
      : {
          name: e.name,
          scope: e.source,
          trust: e.execution,
          valid: e.valid,
          path: e.catalogEntry.path,
          ...(e.description === undefined ? {} : { description: e.description }),
          ...(e.inputSchema === undefined ? {} : { inputSchema: e.inputSchema }),
          ...(e.example === undefined ? {} : { example: e.example }),
          ...(e.error === undefined ? {} : { error: e.error }),
          ...(e.shadowed ? { shadowed: true } : {}),
        },
  );
  const truncated = listing.truncated;
  const problems = listing.problems.map((p) => `${p.scope}: ${p.error.code}: ${p.error.message}`);
  // A catalog that cannot be opened hides its workflows: --json says so too (stderr already did).
  const unopened = workspace?.catalogProblem(ctx);
  if (unopened !== undefined && ctx.json) problems.push(unopened);
  if (ctx.json) {
    printJson(ctx, {
      ok: true,
      workflows: out,
      truncated,
      ...(problems.length > 0 ? { problems } : {}),
    });
    return EXIT.ok;
  }
  printTable(
    ctx,
    ['NAME', 'SCOPE', 'TRUST', 'STATE', 'DESCRIPTION'],
    out.map((w) => [
      terminalText(w.name),
      w.scope,
      w.trust,
      w.shadowed ? 'shadowed' : w.valid ? 'ok' : 'INVALID',
      clip(terminalText(w.valid ? (w.description ?? '') : (w.error ?? 'invalid')), 90),
    ]),
  );
  if (truncated) printLine(ctx, '(the catalog listing was truncated at its entry limit)');
  for (const p of problems) printNote(ctx, `wf list: ${terminalText(p)}`);
  const trustedLocal = out.filter((w) => w.trust === 'trusted-local').length;
  if (trustedLocal > 0)
    printLine(
      ctx,
      `${trustedLocal} trusted-local module(s): they run with full Node authority, only with --trust-local`,
    );
  return EXIT.ok;
}

/**
 * Whether either catalog root exists (anything at the path, even a broken one: then opening the
 * catalog reports it). When neither does, the catalog has nothing to list, and `wf list` need not
 * open it, which loads the capsule parser (the bridge and its schema library).
 */
async function catalogRootsExist(ctx: CliContext): Promise<boolean> {
  const roots = defaultCatalogRoots(ctx.cwd, { DSH_HOME: ctx.env.DSH_HOME, HOME: ctx.env.HOME });
  for (const root of [roots.project, roots.personal]) {
    try {
      await fsp.lstat(root);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return true;
    }
  }
  return false;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
