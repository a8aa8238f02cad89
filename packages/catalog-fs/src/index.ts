// @wf/catalog-fs: the crash-safe workflow catalog and run store on disk (DESIGN.md invariants 8-9).
export type {
  ArchivedEntry,
  Catalog,
  CatalogEntry,
  CatalogEntryKind,
  CatalogExecution,
  CatalogLimits,
  CatalogListing,
  CatalogOptions,
  CatalogScope,
  SaveOptions,
  TrustedLocalModule,
} from './catalog.js';
export { DEFAULT_CATALOG_LIMITS, defaultCatalogRoots, openCatalog } from './catalog.js';
export type { CatalogFsErrorCode, OperationError, Result } from './errors.js';
export { CatalogFsCode, CatalogFsError, isCatalogFsError } from './errors.js';
