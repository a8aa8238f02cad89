// Resolving a workflow name to one entry (docs/design.md#one-run-end-to-end, step 1), the one rule the `wf`
// command and the DSH plugin share: shipped workflows first (passed in, so this package never
// imports @wf/patterns), then the catalog. Also the default manifest and the catalog roots.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowCapsule, WorkflowManifest } from '@wf/bridge';
import type { Catalog, CatalogEntry, CatalogListing, CatalogScope } from './catalog-types.js';
import { CatalogFsCode, type OperationError, type Result } from './errors.js';

/** Where a resolved workflow came from: its origin (docs/design.md#glossary). */
export type WorkflowSource =
  | 'built-in'
  | 'pattern'
  | 'project'
  | 'personal'
  | 'inline'
  | 'run-snapshot';

/** The trust class a workflow runs under (docs/design.md#trust-classes). */
export type WorkflowExecution = 'trusted-package' | 'capability-generated' | 'trusted-local';

/** What a source-based workflow runs: manifest and source, and the rest of a capsule if known. */
export type WorkflowProgram = Pick<WorkflowCapsule, 'manifest' | 'source'> &
  Partial<Omit<WorkflowCapsule, 'manifest' | 'source'>>;

/** A workflow that runs as source through the sandbox (everything but trusted-local). */
export interface SourceWorkflowEntry {
  readonly name: string;
  readonly source: WorkflowSource;
  readonly execution: 'trusted-package' | 'capability-generated';
  readonly capsule: WorkflowProgram;
  /** For messages: a file path, or `@wf/patterns` for shipped workflows. */
  readonly location: string;
}

/** A project/personal `.ts/.mjs/.js` module: imported only after confirmation (invariant 10). */
export interface TrustedLocalWorkflowEntry {
  readonly name: string;
  readonly source: CatalogScope;
  readonly execution: 'trusted-local';
  /** Absolute path of the module; nothing has imported it. */
  readonly module: string;
  /** What `catalog.importTrustedLocal(entry, { confirmed: true })` takes. */
  readonly catalogEntry: CatalogEntry;
  readonly location: string;
}

/** The one resolved-workflow type both apps use. */
export type WorkflowEntry = SourceWorkflowEntry | TrustedLocalWorkflowEntry;

/** The trusted-package workflows a deployment ships, in precedence order within each list. */
export interface ShippedWorkflows {
  readonly builtIns: readonly WorkflowCapsule[];
  readonly patterns: readonly WorkflowCapsule[];
}

/**
 * What a listing shows of a shipped workflow: its metadata, never its source. `@wf/patterns`'
 * light index (`@wf/patterns/shipped-index`) has this shape, so a listing loads no capsule.
 */
export interface ShippedWorkflowInfo {
  readonly name: string;
  readonly scope: 'built-in' | 'pattern';
  readonly valid: boolean;
  readonly error?: string;
  readonly description: string;
  readonly inputSchema?: unknown;
  /** The first example args. */
  readonly example?: unknown;
}

/** One row of a listing: a shipped workflow or a catalog entry (valid or not). */
export interface ListedWorkflowEntry {
  readonly name: string;
  readonly source: 'built-in' | 'pattern' | CatalogScope;
  readonly execution: WorkflowExecution;
  readonly valid: boolean;
  readonly error?: string;
  /** Shipped workflows; catalog capsules when listed with `details`. */
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly example?: unknown;
  /** Catalog entries only. */
  readonly catalogEntry?: CatalogEntry;
  /** A catalog name a shipped workflow hides: listed, never resolved. */
  readonly shadowed?: boolean;
}

export interface ListWorkflowsOptions {
  /**
   * Also read each valid catalog capsule for its description, input schema and first example
   * (one capsule read each). Trusted-local modules are never read: they are only named.
   */
  readonly details?: boolean;
}

/** The catalog's listing (`truncated`, `problems`) with shipped workflows in front. */
export type WorkflowListing = Omit<CatalogListing, 'entries'> & {
  readonly entries: readonly ListedWorkflowEntry[];
};

export interface WorkflowResolverOptions {
  readonly shipped: ShippedWorkflows;
  /** The catalog, or undefined when it cannot be opened (then only shipped workflows resolve). */
  readonly catalog: () => Promise<Catalog | undefined>;
}

export interface WorkflowResolver {
  /** Built-ins, then patterns, as entries. */
  shipped(): readonly SourceWorkflowEntry[];
  /**
   * A name, by precedence built-in > pattern > project > personal; within a catalog directory a
   * capsule beats a source file and `.ts` > `.mjs` > `.js` (the catalog's rule). An invalid
   * catalog entry is refused with its error; a name found nowhere is `WF_CATALOG_NOT_FOUND`.
   */
  resolve(name: string): Promise<Result<{ entry: WorkflowEntry }>>;
  /** `wf.workflow(name)` lookups: source-based only, never trusted-local (undefined otherwise). */
  nested(name: string): Promise<
    | {
        manifest: WorkflowManifest;
        source: string;
        trust: SourceWorkflowEntry['execution'];
      }
    | undefined
  >;
  /** Every name in precedence order, catalog entries hidden by a shipped one marked `shadowed`. */
  list(options?: ListWorkflowsOptions): Promise<WorkflowListing>;
}

const SHIPPED_LOCATION = '@wf/patterns';

export function createWorkflowResolver(options: WorkflowResolverOptions): WorkflowResolver {
  const shipped: readonly SourceWorkflowEntry[] = Object.freeze([
    ...options.shipped.builtIns.map((capsule) => shippedEntry(capsule, 'built-in')),
    ...options.shipped.patterns.map((capsule) => shippedEntry(capsule, 'pattern')),
  ]);
  const byName = new Map<string, SourceWorkflowEntry>();
  for (const e of shipped) if (!byName.has(e.name)) byName.set(e.name, e);
  const shippedInfo = shipped.map(shippedInfoOf);

  const resolve = async (name: string): Promise<Result<{ entry: WorkflowEntry }>> => {
    const hit = byName.get(name);
    if (hit) return { ok: true, entry: hit };
    const catalog = await options.catalog();
    if (!catalog) return notFound(`no workflow named "${name}" (the catalog could not be opened)`);
    const loaded = await catalog.load(name);
    if (!loaded.ok) return loaded;
    const { entry, capsule } = loaded;
    if (!entry.valid)
      return {
        ok: false,
        error: {
          code: entry.errorCode ?? CatalogFsCode.InvalidCapsule,
          message: `workflow "${name}" is invalid: ${entry.error ?? 'unknown'}`,
        },
      };
    if (capsule)
      return {
        ok: true,
        entry: {
          name: entry.name,
          source: entry.scope,
          execution: 'capability-generated',
          capsule,
          location: entry.path,
        },
      };
    return {
      ok: true,
      entry: {
        name: entry.name,
        source: entry.scope,
        execution: 'trusted-local',
        module: entry.path,
        catalogEntry: entry,
        location: entry.path,
      },
    };
  };

  return {
    shipped: () => shipped,
    resolve,
    async nested(name) {
      const found = await resolve(name);
      if (!found.ok || found.entry.execution === 'trusted-local') return undefined;
      const { manifest, source } = found.entry.capsule;
      return { manifest, source, trust: found.entry.execution };
    },
    list: async (listOptions) => listWorkflows(shippedInfo, await options.catalog(), listOptions),
  };
}

/**
 * Every workflow a name can resolve to, in the resolver's precedence (built-in > pattern >
 * project > personal): the shipped workflows in their order, then the catalog's entries, a
 * catalog name that a shipped one hides marked `shadowed` (resolve never reaches it). The one
 * listing both apps show; it takes shipped metadata, so listing loads no workflow source.
 */
export async function listWorkflows(
  shipped: readonly ShippedWorkflowInfo[],
  catalog: Catalog | undefined,
  options: ListWorkflowsOptions = {},
): Promise<WorkflowListing> {
  const entries: ListedWorkflowEntry[] = shipped.map((e) => ({
    name: e.name,
    source: e.scope,
    execution: 'trusted-package',
    valid: e.valid,
    ...(e.error === undefined ? {} : { error: e.error }),
    description: e.description,
    ...(e.inputSchema === undefined ? {} : { inputSchema: e.inputSchema }),
    ...(e.example === undefined ? {} : { example: e.example }),
  }));
  if (!catalog) return { entries, truncated: false, problems: [] };
  const shippedNames = new Set(shipped.map((e) => e.name));
  const listing = await catalog.list();
  for (const e of listing.entries) {
    const details =
      options.details === true && e.valid && e.execution === 'capability-generated'
        ? await capsuleDetails(catalog, e.name)
        : {};
    entries.push({
      name: e.name,
      source: e.scope,
      execution: e.execution,
      valid: e.valid,
      ...(e.error === undefined ? {} : { error: e.error }),
      ...details,
      catalogEntry: e,
      ...(shippedNames.has(e.name) ? { shadowed: true } : {}),
    });
  }
  return { entries, truncated: listing.truncated, problems: listing.problems };
}

/** A catalog capsule's description, input schema and first example, or nothing if unreadable. */
async function capsuleDetails(
  catalog: Catalog,
  name: string,
): Promise<Pick<ListedWorkflowEntry, 'description' | 'inputSchema' | 'example'>> {
  const loaded = await catalog.load(name);
  if (!loaded.ok || !loaded.capsule) return {};
  const { manifest, inputs } = loaded.capsule;
  const example = inputs?.examples?.[0];
  return {
    description: manifest.description,
    ...(manifest.inputSchema === undefined ? {} : { inputSchema: manifest.inputSchema }),
    ...(example === undefined ? {} : { example }),
  };
}

/** What a listing shows of a shipped capsule (the same fields `@wf/patterns` indexes). */
function shippedInfoOf(entry: SourceWorkflowEntry): ShippedWorkflowInfo {
  const { manifest, inputs } = entry.capsule;
  const example = inputs?.examples?.[0];
  return {
    name: entry.name,
    scope: entry.source as 'built-in' | 'pattern',
    valid: true,
    description: manifest.description,
    ...(manifest.inputSchema === undefined ? {} : { inputSchema: manifest.inputSchema }),
    ...(example === undefined ? {} : { example }),
  };
}

function shippedEntry(
  capsule: WorkflowCapsule,
  source: 'built-in' | 'pattern',
): SourceWorkflowEntry {
  return {
    name: capsule.manifest.name,
    source,
    execution: 'trusted-package',
    capsule,
    location: SHIPPED_LOCATION,
  };
}

function notFound(message: string): { ok: false; error: OperationError } {
  return { ok: false, error: { code: CatalogFsCode.NotFound, message } };
}

export interface DefaultManifestOptions {
  readonly name: string;
  readonly description: string;
  /**
   * Files on disk default to read-only children; inline source from a conversation may write
   * (its run passes the approval gate first).
   */
  readonly readOnly: boolean;
  readonly maxAgents: number;
  readonly maxConcurrency: number;
}

/**
 * The one manifest a workflow without its own runs under (a bare source file, inline source,
 * a trusted-local module that exports none): one phase `main`, the fan-out pattern, and the
 * caller's limits. Concurrency never exceeds the agent count.
 */
export function defaultManifest(options: DefaultManifestOptions): WorkflowManifest {
  return {
    name: options.name,
    description: options.description,
    phases: ['main'],
    readOnly: options.readOnly,
    maxAgents: options.maxAgents,
    maxConcurrency: Math.min(options.maxConcurrency, options.maxAgents),
    patterns: ['fan-out-and-synthesize'],
  };
}

export interface CatalogEnv {
  readonly DSH_HOME?: string | undefined;
  readonly HOME?: string | undefined;
}

/**
 * The one personal-root rule: `$DSH_HOME/workflows`, else `$HOME/.dsh/workflows`, else the
 * account's home directory from the OS. An empty variable counts as unset (never a relative path).
 */
export function personalCatalogRoot(env: CatalogEnv = process.env): string {
  const dshHome = env.DSH_HOME || join(env.HOME || homedir(), '.dsh');
  return join(dshHome, 'workflows');
}

/** The default catalog directories: `<cwd>/.dsh/workflows` and the personal root. */
export function defaultCatalogRoots(
  cwd: string,
  env: CatalogEnv = process.env,
): { project: string; personal: string } {
  return { project: join(cwd, '.dsh', 'workflows'), personal: personalCatalogRoot(env) };
}
