// The saved-workflow verbs: `wf rename`, `wf delete`, `wf archived` (archived versions) and
// `wf restore`. Each goes through @wf/catalog-fs, whose writes are temp file + fsync + atomic
// rename and whose replacements and deletions archive the old capsule first (invariant 8): a
// crash at any instant leaves the old or the new capsule, and nothing is ever lost to a verb.
import { terminalText } from '@wf/bridge/terminal-text';
import type { Catalog, CatalogScope } from '@wf/catalog-fs';
import { type CliContext, printJson, printLine } from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { shippedWorkflows } from './shipped.js';
import { isStorageCode, storageError } from './store-error.js';
import { requireProjectCatalog } from './workspace.js';

type ScopeOption = { scope?: string };

function scopeOf(options: ScopeOption): CatalogScope | undefined {
  const scope = options.scope;
  if (scope === undefined) return undefined;
  if (scope !== 'project' && scope !== 'personal') {
    throw new CliError(
      'WF_CLI_USAGE',
      `--scope must be project or personal, got ${JSON.stringify(scope)}`,
    );
  }
  return scope;
}

async function withCatalog<T>(ctx: CliContext, body: (catalog: Catalog) => Promise<T>): Promise<T> {
  return body(await requireProjectCatalog(ctx));
}

/** What to do about a catalog entry or directory that is a symlink or not a regular file. */
export const UNSAFE_PATH_HINT =
  'the catalog never follows a symbolic link or opens a special file: replace it with a regular file (copy the capsule in), or remove it yourself';

/** A catalog failure as the CLI error with the documented exit code. */
function catalogError(error: { code: string; message: string }, what: string): CliError {
  const message = `${what}: ${error.message}`;
  switch (error.code) {
    case 'WF_CATALOG_NOT_FOUND':
      return new CliError('WF_CLI_WORKFLOW_NOT_FOUND', message, {
        hint: '`wf list` shows saved workflows; `wf archived` shows archived versions',
      });
    case 'WF_CATALOG_EXISTS':
      return new CliError('WF_CLI_NAME_TAKEN', message, {
        hint: 'pick another name, or pass --replace (the current capsule is archived first)',
      });
    case 'WF_CATALOG_INVALID_NAME':
      return new CliError('WF_CLI_USAGE', message, {
        hint: 'use kebab-case: a lowercase letter, then lowercase letters, digits and dashes',
      });
    case 'WF_CATALOG_INVALID_CAPSULE':
    case 'WF_CATALOG_TOO_LARGE':
      return new CliError('WF_CLI_WORKFLOW_INVALID', message);
    case 'WF_CATALOG_UNSAFE_PATH':
      // A planted symlink or special file under a catalog name is bad input, as `wf run` says.
      return new CliError('WF_CLI_WORKFLOW_INVALID', message, { hint: UNSAFE_PATH_HINT });
    default:
      if (isStorageCode(error.code)) return storageError(error, what);
      return new CliError('WF_CLI_INTERNAL', `${what}: ${error.code}: ${error.message}`);
  }
}

function refuseBuiltInName(name: string): void {
  if (shippedWorkflows().some((b) => b.name === name)) {
    throw new CliError(
      'WF_CLI_NAME_TAKEN',
      `${name} is a built-in workflow name; a catalog entry by that name would never run`,
      { hint: 'pick another name' },
    );
  }
}

export async function renameCommand(
  ctx: CliContext,
  from: string,
  to: string,
  options: ScopeOption,
): Promise<ExitCode> {
  const scope = scopeOf(options);
  refuseBuiltInName(to);
  return withCatalog(ctx, async (catalog) => {
    const out = await catalog.rename(from, to, scope ? { scope } : {});
    if (!out.ok) throw catalogError(out.error, `cannot rename ${from} to ${to}`);
    if (ctx.json) {
      printJson(ctx, {
        ok: true,
        renamed: from,
        to,
        scope: out.entry.scope,
        path: out.entry.path,
        archived: out.archived,
      });
    } else {
      printLine(
        ctx,
        `renamed ${terminalText(from)} to ${terminalText(to)} (${out.entry.scope}: ${terminalText(out.entry.path)})`,
      );
      const archived = terminalText(out.archived);
      printLine(ctx, `  the old name is archived as ${archived}: wf restore ${archived}`);
    }
    return EXIT.ok;
  });
}

export async function deleteCommand(
  ctx: CliContext,
  name: string,
  options: ScopeOption,
): Promise<ExitCode> {
  const scope = scopeOf(options);
  return withCatalog(ctx, async (catalog) => {
    const out = await catalog.delete(name, scope ? { scope } : {});
    if (!out.ok) throw catalogError(out.error, `cannot delete ${name}`);
    if (ctx.json) printJson(ctx, { ok: true, deleted: name, archived: out.archived });
    else {
      const archived = terminalText(out.archived);
      printLine(ctx, `deleted ${terminalText(name)}; archived as ${archived}`);
      printLine(ctx, `  bring it back with: wf restore ${archived}`);
    }
    return EXIT.ok;
  });
}

export async function archivedCommand(
  ctx: CliContext,
  name: string | undefined,
  options: ScopeOption,
): Promise<ExitCode> {
  const scope = scopeOf(options);
  return withCatalog(ctx, async (catalog) => {
    const out = await catalog.archive({
      ...(name === undefined ? {} : { name }),
      ...(scope === undefined ? {} : { scope }),
    });
    if (!out.ok) throw catalogError(out.error, 'cannot list archived versions');
    const entries = out.entries.map((e) => ({
      id: e.id,
      name: e.name,
      scope: e.scope,
      archivedAt: e.archivedAt,
      valid: e.valid,
      ...(e.error === undefined ? {} : { error: e.error }),
    }));
    if (ctx.json) {
      printJson(ctx, { ok: true, archived: entries });
      return EXIT.ok;
    }
    if (entries.length === 0) {
      printLine(
        ctx,
        `No archived versions${name === undefined ? '' : ` of ${terminalText(name)}`}.`,
      );
      return EXIT.ok;
    }
    const head = ['ID', 'NAME', 'SCOPE', 'ARCHIVED'];
    // Archive ids are file names: any name before `--<stamp>-<hash>` is one, a cloned
    // repository's included, so each cell is shown through the sanitizer.
    const rows = entries.map((e) => [
      terminalText(e.id),
      terminalText(e.name),
      e.scope,
      `${terminalText(e.archivedAt.slice(0, 19).replace('T', ' '))}${e.valid ? '' : ' (unreadable)'}`,
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    for (const r of [head, ...rows])
      printLine(
        ctx,
        r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '),
      );
    printLine(ctx, '  restore one with: wf restore <id> [--as <name>] [--replace]');
    return EXIT.ok;
  });
}

export async function restoreCommand(
  ctx: CliContext,
  id: string,
  options: ScopeOption & { as?: string; replace?: boolean },
): Promise<ExitCode> {
  const scope = scopeOf(options);
  if (options.as !== undefined) refuseBuiltInName(options.as);
  return withCatalog(ctx, async (catalog) => {
    const out = await catalog.restore(id, {
      ...(scope === undefined ? {} : { scope }),
      ...(options.as === undefined ? {} : { as: options.as }),
      replace: options.replace === true,
    });
    if (!out.ok) throw catalogError(out.error, `cannot restore ${id}`);
    if (ctx.json) {
      printJson(ctx, {
        ok: true,
        restored: id,
        name: out.entry.name,
        scope: out.entry.scope,
        path: out.entry.path,
        ...(out.archived ? { archived: out.archived } : {}),
      });
    } else {
      printLine(
        ctx,
        `restored ${terminalText(id)} as ${terminalText(out.entry.name)} (${out.entry.scope}: ${terminalText(out.entry.path)})${out.archived ? `; the replaced version is archived as ${terminalText(out.archived)}` : ''}`,
      );
      printLine(ctx, `  run it with: wf run ${terminalText(out.entry.name)}`);
    }
    return EXIT.ok;
  });
}
