// `wf list`: every workflow `wf run <name>` can resolve, in precedence order (built-in > pattern >
// project > personal), with its scope, trust class and validity. An invalid catalog entry is
// listed with its error (it can never run); a catalog name hidden by a built-in is marked shadowed.
import { clean } from '../progress/frame.js';
import { type CliContext, printJson, printLine, printNote } from './context.js';
import { EXIT, type ExitCode } from './errors.js';
import { printTable } from './runs.js';
import { workflowResolver } from './shipped.js';
import { openProjectCatalog } from './workspace.js';

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
  const out: ListedWorkflow[] = [];
  const catalog = await openProjectCatalog(ctx);
  const listing = await workflowResolver(catalog).list();
  const truncated = listing.truncated;
  const problems = listing.problems.map((p) => `${p.scope}: ${p.error.code}: ${p.error.message}`);
  for (const e of listing.entries) {
    if (e.capsule) {
      const { manifest, inputs } = e.capsule;
      out.push({
        name: e.name,
        scope: e.source,
        trust: e.execution,
        valid: true,
        description: manifest.description,
        ...(manifest.inputSchema === undefined ? {} : { inputSchema: manifest.inputSchema }),
        ...(inputs?.examples?.[0] === undefined ? {} : { example: inputs.examples[0] }),
      });
      continue;
    }
    let description: string | undefined;
    let inputSchema: unknown;
    let example: unknown;
    if (catalog && e.valid && e.execution === 'capability-generated') {
      const loaded = await catalog.load(e.name);
      if (loaded.ok && loaded.capsule) {
        description = loaded.capsule.manifest.description;
        inputSchema = loaded.capsule.manifest.inputSchema;
        example = loaded.capsule.inputs?.examples?.[0];
      }
    }
    out.push({
      name: e.name,
      scope: e.source,
      trust: e.execution,
      valid: e.valid,
      ...(e.catalogEntry ? { path: e.catalogEntry.path } : {}),
      ...(description === undefined ? {} : { description }),
      ...(inputSchema === undefined ? {} : { inputSchema }),
      ...(example === undefined ? {} : { example }),
      ...(e.error === undefined ? {} : { error: e.error }),
      ...(e.shadowed ? { shadowed: true } : {}),
    });
  }
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
      clean(w.name),
      w.scope,
      w.trust,
      w.shadowed ? 'shadowed' : w.valid ? 'ok' : 'INVALID',
      clip(clean(w.valid ? (w.description ?? '') : (w.error ?? 'invalid')), 90),
    ]),
  );
  if (truncated) printLine(ctx, '(the catalog listing was truncated at its entry limit)');
  for (const p of problems) printNote(ctx, `wf list: ${clean(p)}`);
  const trustedLocal = out.filter((w) => w.trust === 'trusted-local').length;
  if (trustedLocal > 0)
    printLine(
      ctx,
      `${trustedLocal} trusted-local module(s): they run with full Node authority, only with --trust-local`,
    );
  return EXIT.ok;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
