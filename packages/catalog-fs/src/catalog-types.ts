// The catalog's public shapes: entries, listings, archived versions, limits, options and the
// Catalog interface that openCatalog returns (re-exported from catalog.ts).
import type { ManifestLimits, WorkflowCapsule } from '@wf/bridge';
import type { OperationError, Result } from './errors.js';

export type CatalogScope = 'project' | 'personal';
export type CatalogEntryKind = 'capsule' | 'ts' | 'mjs' | 'js';
export type CatalogExecution = 'capability-generated' | 'trusted-local';

export interface CatalogEntry {
  readonly name: string;
  readonly scope: CatalogScope;
  readonly execution: CatalogExecution;
  readonly kind: CatalogEntryKind;
  /** Absolute path of the file (for display; operations re-resolve from the root). */
  readonly path: string;
  /** False for an entry that can never be run; `error` says why. */
  readonly valid: boolean;
  readonly error?: string;
  readonly errorCode?: OperationError['code'];
}

export interface CatalogListing {
  readonly entries: readonly CatalogEntry[];
  /** True when more than `maxCatalogEntries` names were found. */
  readonly truncated: boolean;
  /** Roots that could not be read (a symlinked root, permissions...). */
  readonly problems: readonly { readonly scope: CatalogScope; readonly error: OperationError }[];
}

export interface ArchivedEntry {
  /** Stable id: the archive file name without `.workflow.json`. */
  readonly id: string;
  readonly name: string;
  readonly scope: CatalogScope;
  /** ISO time the version was archived. */
  readonly archivedAt: string;
  readonly path: string;
  readonly valid: boolean;
  readonly error?: string;
}

export interface CatalogLimits {
  /** Largest capsule file read or written, in bytes. Default 512 KiB. */
  readonly maxCapsuleBytes: number;
  /** Most entries `list()` returns, and most capsules one scope may hold. Default 200. */
  readonly maxCatalogEntries: number;
  /** Deployment ceilings passed to the capsule parser. */
  readonly manifest?: ManifestLimits;
}

export interface CatalogOptions {
  /** Project catalog directory, normally `<cwd>/.dsh/workflows`. */
  readonly project: string;
  /** Personal catalog directory, normally `$DSH_HOME/workflows` or `~/.dsh/workflows`. */
  readonly personal?: string;
  readonly limits?: Partial<CatalogLimits>;
  /** Accept roots reached through symlinks (their canonical path is used). Default false. */
  readonly allowSymlinkedRoot?: boolean;
  /** How long a mutation waits for another process's catalog lock. Default 10 s. */
  readonly lockTimeoutMs?: number;
}

export interface SaveOptions {
  readonly scope?: CatalogScope;
  /** Replace an existing capsule, archiving the old version. Default false (create-only). */
  readonly replace?: boolean;
}

export interface TrustedLocalModule {
  readonly entry: CatalogEntry;
  /** The module's `run(wf, args)` function. */
  readonly run: (...args: unknown[]) => unknown;
  /** The module's `manifest` or `meta` export, unvalidated (the caller applies its defaults). */
  readonly manifest: unknown;
  /** The URL it was imported from (with its content-hash cache-buster). */
  readonly url: string;
}

export interface Catalog {
  readonly roots: { readonly project: string; readonly personal?: string };
  list(): Promise<CatalogListing>;
  load(name: string): Promise<Result<{ entry: CatalogEntry; capsule?: WorkflowCapsule }>>;
  save(
    name: string,
    capsule: unknown,
    options?: SaveOptions,
  ): Promise<Result<{ entry: CatalogEntry; archived?: string }>>;
  rename(
    from: string,
    to: string,
    options?: { readonly scope?: CatalogScope },
  ): Promise<Result<{ entry: CatalogEntry; archived: string }>>;
  delete(
    name: string,
    options?: { readonly scope?: CatalogScope },
  ): Promise<Result<{ archived: string }>>;
  /** Archived versions, newest first; pass a name (or `{ name, scope }`) to filter. */
  archive(
    options?: string | { readonly name?: string; readonly scope?: CatalogScope },
  ): Promise<Result<{ entries: readonly ArchivedEntry[] }>>;
  restore(
    id: string,
    options?: { readonly scope?: CatalogScope; readonly as?: string; readonly replace?: boolean },
  ): Promise<Result<{ entry: CatalogEntry; archived?: string }>>;
  importTrustedLocal(
    entry: Pick<CatalogEntry, 'name' | 'scope' | 'kind'>,
    options?: { readonly confirmed?: boolean },
  ): Promise<Result<{ module: TrustedLocalModule }>>;
}
