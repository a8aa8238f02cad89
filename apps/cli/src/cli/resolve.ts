// Resolving what `wf run <name|file>` names (DESIGN.md section 4, step 1): a file path, or a name
// looked up built-in > pattern > project > personal. Files are untrusted input: a capsule is fully
// validated (every issue with its path), a `.js` source gets a conservative default manifest.
import { readFile, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { type WorkflowCapsule, parseCapsule } from '@wf/bridge';
import type { Catalog, CatalogEntry } from '@wf/catalog-fs';
import { errorText } from './args.js';
import { CliError } from './errors.js';
import { type BuiltinWorkflow, builtinWorkflows } from './workspace.js';

export type WorkflowOrigin = 'built-in' | 'pattern' | 'project' | 'personal' | 'file';
export type WorkflowTrust = 'trusted-package' | 'capability-generated' | 'trusted-local';

export interface ResolvedEntry {
  readonly name: string;
  readonly origin: WorkflowOrigin;
  readonly trust: WorkflowTrust;
  /** Where it came from, for messages: a path, or `@wf/patterns`. */
  readonly location: string;
  readonly manifest: unknown;
  /** Source-based workflows (everything but trusted-local). */
  readonly source?: string;
  readonly capsule?: WorkflowCapsule;
  /** Trusted-local: the catalog entry, imported only after explicit confirmation. */
  readonly catalogEntry?: CatalogEntry;
  /** Set when the manifest was synthesised (a bare `.js` file). */
  readonly defaultManifest?: boolean;
}

const MAX_FILE_BYTES = 512 * 1024;

/** A target is a file when it has a path separator or a workflow-file extension. */
export function looksLikeFile(target: string): boolean {
  return /[\\/]/.test(target) || /\.(workflow\.json|json|js|mjs|ts)$/.test(target);
}

export async function resolveTarget(
  target: string,
  cwd: string,
  catalog: Catalog | undefined,
): Promise<ResolvedEntry> {
  if (looksLikeFile(target)) return resolveFile(target, cwd);
  const builtin = builtinWorkflows().find((b) => b.name === target);
  if (builtin) return fromBuiltin(builtin);
  if (catalog) {
    const loaded = await catalog.load(target);
    if (loaded.ok) {
      const { entry, capsule } = loaded;
      if (entry.execution === 'trusted-local' || !capsule) {
        return {
          name: entry.name,
          origin: entry.scope,
          trust: 'trusted-local',
          location: entry.path,
          manifest: undefined,
          catalogEntry: entry,
        };
      }
      return {
        name: entry.name,
        origin: entry.scope,
        trust: 'capability-generated',
        location: entry.path,
        manifest: capsule.manifest,
        source: capsule.source,
        capsule,
      };
    }
    if (loaded.error.code !== 'WF_CATALOG_NOT_FOUND') {
      throw new CliError('WF_CLI_WORKFLOW_INVALID', `workflow ${target}: ${loaded.error.message}`, {
        hint: `run \`wf list\` to see why it is invalid, or \`wf check\` on its file`,
        details: loaded.error,
      });
    }
  }
  throw notFound(target, catalog);
}

function fromBuiltin(b: BuiltinWorkflow): ResolvedEntry {
  return {
    name: b.name,
    origin: b.origin,
    trust: 'trusted-package',
    location: '@wf/patterns',
    manifest: b.capsule.manifest,
    source: b.capsule.source,
    capsule: b.capsule,
  };
}

async function resolveFile(target: string, cwd: string): Promise<ResolvedEntry> {
  const path = resolve(cwd, target);
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    if (info.size > MAX_FILE_BYTES) {
      throw new CliError(
        'WF_CLI_WORKFLOW_INVALID',
        `${target} is ${info.size} bytes; a workflow file may be at most ${MAX_FILE_BYTES}`,
      );
    }
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    if ((e as { code?: string }).code === 'ENOENT') {
      throw new CliError('WF_CLI_WORKFLOW_NOT_FOUND', `no workflow file at ${target}`, {
        hint: 'check the path (relative to the current directory), or give a workflow name from `wf list`',
      });
    }
    throw new CliError('WF_CLI_WORKFLOW_INVALID', `cannot read ${target}: ${errorText(e)}`, {
      cause: e,
    });
  }
  if (/\.(mjs|ts)$/.test(path)) {
    throw new CliError(
      'WF_CLI_TRUST_REQUIRED',
      `${target} is a trusted-local module (full Node authority); wf runs those only from the catalog`,
      {
        hint: 'put it in .dsh/workflows/ and run it by name with --trust-local, or write a capsule (.workflow.json)',
      },
    );
  }
  if (/\.json$/.test(path)) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new CliError(
        'WF_CLI_WORKFLOW_INVALID',
        `${target} is not valid JSON: ${errorText(e)}`,
        {
          hint: 'a capsule is one JSON object: { "format": "dsh.workflow", "version": 1, ... }',
        },
      );
    }
    const parsed = parseCapsule(json);
    if (!parsed.ok) {
      const list = parsed.issues.slice(0, 8).map((i) => `${i.path || 'capsule'}: ${i.message}`);
      throw new CliError(
        'WF_CLI_WORKFLOW_INVALID',
        `${target} is not a valid workflow capsule: ${list.join('; ')}${parsed.issues.length > 8 ? `; and ${parsed.issues.length - 8} more` : ''}`,
        { hint: `run \`wf check ${target}\` for every problem`, details: parsed.issues },
      );
    }
    const capsule = parsed.capsule;
    return {
      name: capsule.manifest.name,
      origin: 'file',
      trust: 'capability-generated',
      location: path,
      manifest: capsule.manifest,
      source: capsule.source,
      capsule,
    };
  }
  const name = inlineName(path);
  return {
    name,
    origin: 'file',
    trust: 'capability-generated',
    location: path,
    manifest: defaultManifest(name, target),
    source: text,
    defaultManifest: true,
  };
}

/** The limits a bare source file runs under: read-only, 16 agents, 4 at once. */
export function defaultManifest(name: string, file: string) {
  return {
    name,
    description: `Inline workflow from ${basename(file)} (default manifest: read-only, 16 agents, 4 at once)`,
    phases: ['main'],
    readOnly: true,
    maxAgents: 16,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize'],
  };
}

function inlineName(path: string): string {
  const base = basename(path).replace(/(\.workflow)?\.(js|mjs|ts)$/, '');
  const kebab = base
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return /^[a-z]/.test(kebab) ? kebab : `wf-${kebab || 'inline'}`;
}

function notFound(target: string, catalog: Catalog | undefined): CliError {
  const known = builtinWorkflows().map((b) => b.name);
  const close = known.filter(
    (n) => distance(n, target) <= Math.max(2, Math.floor(target.length / 4)),
  );
  return new CliError(
    'WF_CLI_WORKFLOW_NOT_FOUND',
    `no workflow named ${JSON.stringify(target)} (looked in built-ins, patterns${catalog ? ', the project and personal catalogs' : ''})`,
    {
      hint:
        close.length > 0
          ? `did you mean ${close.map((c) => `\`${c}\``).join(' or ')}? \`wf list\` shows every workflow`
          : '`wf list` shows every workflow; a file path needs a / or an extension (./x.workflow.json)',
    },
  );
}

/** Levenshtein distance, for "did you mean" on short names. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const tmp = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] as number;
}
