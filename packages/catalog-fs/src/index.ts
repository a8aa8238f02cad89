// @wf/catalog-fs: the crash-safe workflow catalog and run store on disk (invariants 8 and 9).
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
} from './catalog-types.js';
export { DEFAULT_CATALOG_LIMITS, openCatalog } from './catalog.js';
export type { CatalogFsErrorCode, OperationError, Result } from './errors.js';
export { CATALOG_FS_ERROR_CODES, CatalogFsError } from './errors.js';
export type {
  JournalEntryRecord,
  RunCostRecord,
  RunEventRecord,
  RunFinishRecordShape,
  RunStartRecordShape,
  RunStatus,
  TerminalRunStatus,
} from './run-types.js';
export type {
  CatalogEnv,
  DefaultManifestOptions,
  ListedWorkflowEntry,
  ListWorkflowsOptions,
  ShippedWorkflowInfo,
  ShippedWorkflows,
  SourceWorkflowEntry,
  TrustedLocalWorkflowEntry,
  WorkflowEntry,
  WorkflowExecution,
  WorkflowListing,
  WorkflowProgram,
  WorkflowResolver,
  WorkflowResolverOptions,
  WorkflowSource,
} from './resolve.js';
export {
  createWorkflowResolver,
  defaultCatalogRoots,
  defaultManifest,
  listWorkflows,
  personalCatalogRoot,
} from './resolve.js';
export type {
  DeferredRecovery,
  FsyncPolicy,
  RunOwner,
  RunSnapshot,
  RunStore,
  RunStoreOptions,
  RunSummary,
} from './run-store-types.js';
export { openRunStore } from './run-store.js';
