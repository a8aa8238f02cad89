// What `wf run <name|file>` names (docs/design.md#one-run-end-to-end, step 1): a file path, read here, or a name
// resolved by the shared resolver in @wf/catalog-fs (built-in > pattern > project > personal).
// Files are untrusted input: a capsule is fully validated (every issue with its path), a `.js`
// source runs under the shared default manifest.
import { basename, resolve } from 'node:path';
import { parseCapsule } from '@wf/bridge';
import {
  type Catalog,
  defaultManifest as sharedDefaultManifest,
  type WorkflowEntry,
} from '@wf/catalog-fs';
import type { WorkflowManifest } from '@wf/bridge';
import { errorText } from './args.js';
import { readInputText } from './input-file.js';
import { CliError } from './errors.js';
import { shippedWorkflows, workflowResolver } from './shipped.js';

/** A resolved workflow; `defaultManifest` is set when a bare `.js` file got the default one. */
export type ResolvedEntry = WorkflowEntry & { readonly defaultManifest?: boolean };

const MAX_FILE_BYTES = 512 * 1024;

/** A target is a file when it has a path separator or a workflow-file extension. */
export function looksLikeFile(target: string): boolean {
  return /[\\/]/.test(target) || /\.(workflow\.json|json|js|mjs|ts)$/.test(target);
}

export async function resolveTarget(
  target: string,
  cwd: string,
  catalog: Catalog | undefined,
  /** Why the catalog could not be opened, when it could not: a name not shipped is not "not found". */
  catalogProblem?: string,
): Promise<ResolvedEntry> {
  if (looksLikeFile(target)) return resolveFile(target, cwd);
  const found = await workflowResolver(catalog).resolve(target);
  if (found.ok) return found.entry;
  if (!catalog && catalogProblem !== undefined) {
    throw new CliError(
      'WF_CLI_STORAGE_FAILED',
      `cannot look up ${JSON.stringify(target)}: ${catalogProblem}`,
      {
        hint: 'built-ins and patterns still run; check that .dsh/workflows is a directory you can read',
      },
    );
  }
  if (catalog && found.error.code !== 'WF_CATALOG_NOT_FOUND') {
    throw new CliError('WF_CLI_WORKFLOW_INVALID', `workflow ${target}: ${found.error.message}`, {
      hint: `run \`wf list\` to see why it is invalid, or \`wf check\` on its file`,
      details: found.error,
    });
  }
  throw notFound(target, catalog);
}

async function resolveFile(target: string, cwd: string): Promise<ResolvedEntry> {
  const path = resolve(cwd, target);
  const read = await readInputText(path, target, MAX_FILE_BYTES);
  if (!read.ok) {
    if (read.reason === 'missing') {
      throw new CliError('WF_CLI_WORKFLOW_NOT_FOUND', `no workflow file at ${target}`, {
        hint: 'check the path (relative to the current directory), or give a workflow name from `wf list`',
      });
    }
    throw new CliError('WF_CLI_WORKFLOW_INVALID', read.message, {
      hint: 'a workflow file is a .js source or a .workflow.json capsule: a regular file of UTF-8 text',
    });
  }
  const text = read.text;
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
      source: 'inline',
      execution: 'capability-generated',
      location: path,
      capsule,
    };
  }
  const name = inlineName(path);
  return {
    name,
    source: 'inline',
    execution: 'capability-generated',
    location: path,
    capsule: { manifest: defaultManifest(name, target), source: text },
    defaultManifest: true,
  };
}

/** The shared default manifest with a bare source file's limits: read-only, 16 agents, 4 at once. */
export function defaultManifest(name: string, file: string): WorkflowManifest {
  return sharedDefaultManifest({
    name,
    description: `Inline workflow from ${basename(file)} (default manifest: read-only, 16 agents, 4 at once)`,
    readOnly: true,
    maxAgents: 16,
    maxConcurrency: 4,
  });
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
  const known = shippedWorkflows().map((b) => b.name);
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
