// `wf list`: every workflow `wf run <name>` can resolve, in precedence order (built-in > pattern >
// project > personal), with its scope, trust class and validity. An invalid catalog entry is
// listed with its error (it can never run); a catalog name hidden by a built-in is marked shadowed.
import { clean } from '../progress/frame.js';
import { type CliContext, printJson, printLine, printNote } from './context.js';
import { EXIT, type ExitCode } from './errors.js';
import { printTable } from './runs.js';
import { builtinWorkflows, openProjectCatalog } from './workspace.js';

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
  const seen = new Set<string>();
  for (const b of builtinWorkflows()) {
    seen.add(b.name);
    out.push({
      name: b.name,
      scope: b.origin,
      trust: 'trusted-package',
      valid: true,
      description: b.capsule.manifest.description,
      ...(b.capsule.manifest.inputSchema === undefined
        ? {}
        : { inputSchema: b.capsule.manifest.inputSchema }),
      ...(b.capsule.inputs?.examples?.[0] === undefined
        ? {}
        : { example: b.capsule.inputs.examples[0] }),
    });
  }
  const catalog = await openProjectCatalog(ctx);
  let truncated = false;
  const problems: string[] = [];
  if (catalog) {
    const listing = await catalog.list();
    truncated = listing.truncated;
    for (const p of listing.problems)
      problems.push(`${p.scope}: ${p.error.code}: ${p.error.message}`);
    for (const e of listing.entries) {
      let description: string | undefined;
      let inputSchema: unknown;
      if (e.valid && e.execution === 'capability-generated') {
        const loaded = await catalog.load(e.name);
        if (loaded.ok && loaded.capsule) {
          description = loaded.capsule.manifest.description;
          inputSchema = loaded.capsule.manifest.inputSchema;
        }
      }
      out.push({
        name: e.name,
        scope: e.scope,
        trust: e.execution,
        valid: e.valid,
        path: e.path,
        ...(description === undefined ? {} : { description }),
        ...(inputSchema === undefined ? {} : { inputSchema }),
        ...(e.error === undefined ? {} : { error: e.error }),
        ...(seen.has(e.name) ? { shadowed: true } : {}),
      });
    }
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
