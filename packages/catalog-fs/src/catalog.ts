// The workflow catalog: discovery with precedence, and crash-safe save / replace / rename / delete /
// restore of `.workflow.json` capsules below a project and a personal root (invariants 8 and 10).
// This file assembles the catalog from its state (internal/catalog-names.ts) and the discovery,
// publish, rename-intent, archive and trusted-local modules.
import type { Catalog, CatalogLimits, CatalogOptions, CatalogScope } from './catalog-types.js';
import { archivedEntries, restoreEntry } from './internal/catalog-archive.js';
import { loadCapsuleFormat } from './internal/capsule-text.js';
import { listEntries, loadEntry } from './internal/catalog-discovery.js';
import { renameEntry, repairRoot } from './internal/catalog-intent.js';
import { type CatalogState, CODES, openRoot } from './internal/catalog-names.js';
import { deleteEntry, saveEntry } from './internal/catalog-publish.js';
import { importTrustedLocal } from './internal/catalog-trusted-local.js';
import { CatalogFsError } from './errors.js';
import { withDir } from './internal/safe-dir.js';

export const DEFAULT_CATALOG_LIMITS: CatalogLimits = {
  maxCapsuleBytes: 512 * 1024,
  maxCatalogEntries: 200,
};

/**
 * Opens the catalog. At open, each existing root is repaired under its lock: interrupted renames
 * are rolled forward or back from their intent records, and abandoned temp files are removed.
 */
export async function openCatalog(options: CatalogOptions): Promise<Catalog> {
  if (typeof options?.project !== 'string' || options.project === '') {
    throw new TypeError('openCatalog: `project` must be the project catalog directory');
  }
  await loadCapsuleFormat();
  const limits: CatalogLimits = { ...DEFAULT_CATALOG_LIMITS, ...options.limits };
  const allowSymlinkedRoot = options.allowSymlinkedRoot === true;
  const lockOptions = { timeoutMs: options.lockTimeoutMs ?? 10_000, staleMs: 30_000, codes: CODES };
  const rootPaths: Record<CatalogScope, string | undefined> = {
    project: options.project,
    personal: options.personal,
  };
  const scopes: CatalogScope[] =
    options.personal === undefined ? ['project'] : ['project', 'personal'];

  const c: CatalogState = { limits, allowSymlinkedRoot, lockOptions, rootPaths, scopes };

  for (const scope of scopes) {
    const root = await openRoot(c, scope, false).catch((error: unknown) => {
      // An unusable root is reported by list() and every operation; opening still succeeds.
      if (CatalogFsError.is(error)) return undefined;
      throw error;
    });
    await withDir(root, (r) => repairRoot(c, r)).catch((error: unknown) => {
      if (!CatalogFsError.is(error)) throw error;
    });
  }

  const catalog: Catalog = {
    roots:
      options.personal === undefined
        ? { project: options.project }
        : { project: options.project, personal: options.personal },
    list: () => listEntries(c),
    load: (name) => loadEntry(c, name),
    save: (name, capsule, saveOptions) => saveEntry(c, name, capsule, saveOptions),
    rename: (from, to, renameOptions) => renameEntry(c, from, to, renameOptions),
    delete: (name, deleteOptions) => deleteEntry(c, name, deleteOptions),
    archive: (filter) => archivedEntries(c, filter),
    restore: (id, restoreOptions) => restoreEntry(c, id, restoreOptions),
    importTrustedLocal: (entry, importOptions) => importTrustedLocal(c, entry, importOptions),
  };
  return catalog;
}
