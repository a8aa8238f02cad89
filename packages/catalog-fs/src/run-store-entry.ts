// A light entry (`@wf/catalog-fs/run-store`): the run store and this package's error class, without
// the catalog and its capsule parser, so a reader of runs (`wf runs`, `wf show`) loads only the
// modules it uses. Same functions as the main entry, not copies.
export { CatalogFsError } from './errors.js';
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
