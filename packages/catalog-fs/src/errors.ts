// The one error module of @wf/catalog-fs: a stable code table (CODE -> CODE, one WF_CATALOG_
// prefix; run-store codes are WF_CATALOG_RUN_*) and one branded error class on the @wf/errors kit.
// Expected outcomes (not found, already exists, unsafe path, disk full...) reach callers as data
// (`{ ok: false, error: { code, message } }`); the class is how they travel internally.
import { type ErrorInfo, type Failure, WfError } from '@wf/errors';

export const CATALOG_FS_ERROR_CODES = {
  /** A workflow name is not strict kebab-case. */
  WF_CATALOG_INVALID_NAME: 'WF_CATALOG_INVALID_NAME',
  /** A path component is a symlink, not a directory, not a regular file, or escapes its root. */
  WF_CATALOG_UNSAFE_PATH: 'WF_CATALOG_UNSAFE_PATH',
  /** A create-only save or a rename target found the name taken. */
  WF_CATALOG_EXISTS: 'WF_CATALOG_EXISTS',
  /** No workflow (or archived version) by that name. */
  WF_CATALOG_NOT_FOUND: 'WF_CATALOG_NOT_FOUND',
  /** A capsule exceeds `maxCapsuleBytes`. */
  WF_CATALOG_TOO_LARGE: 'WF_CATALOG_TOO_LARGE',
  /** A scope already holds `maxCatalogEntries` capsules. */
  WF_CATALOG_FULL: 'WF_CATALOG_FULL',
  /** A capsule failed JSON parsing or schema validation. */
  WF_CATALOG_INVALID_CAPSULE: 'WF_CATALOG_INVALID_CAPSULE',
  /** The catalog lock could not be taken in time. */
  WF_CATALOG_BUSY: 'WF_CATALOG_BUSY',
  /** `importTrustedLocal` was called without `{ confirmed: true }`. */
  WF_CATALOG_CONFIRMATION_REQUIRED: 'WF_CATALOG_CONFIRMATION_REQUIRED',
  /** A trusted-local module could not be imported or has no `run` function. */
  WF_CATALOG_IMPORT_FAILED: 'WF_CATALOG_IMPORT_FAILED',
  /** An operation the entry kind does not support (e.g. renaming a source file). */
  WF_CATALOG_UNSUPPORTED: 'WF_CATALOG_UNSUPPORTED',
  /** An unexpected filesystem error (disk full, permissions...); nothing was published. */
  WF_CATALOG_IO: 'WF_CATALOG_IO',
  /** A run id is not a safe identifier. */
  WF_CATALOG_RUN_INVALID_ID: 'WF_CATALOG_RUN_INVALID_ID',
  /** No run by that id. */
  WF_CATALOG_RUN_NOT_FOUND: 'WF_CATALOG_RUN_NOT_FOUND',
  /** `begin` for a run id that already has a directory. */
  WF_CATALOG_RUN_EXISTS: 'WF_CATALOG_RUN_EXISTS',
  /** The run is live (owned by a running process); it can never be deleted. */
  WF_CATALOG_RUN_ACTIVE: 'WF_CATALOG_RUN_ACTIVE',
  /** The run is not terminal; deleting a stale record needs `force`. */
  WF_CATALOG_RUN_NOT_TERMINAL: 'WF_CATALOG_RUN_NOT_TERMINAL',
  /** A write-once artifact name was written twice in one run. */
  WF_CATALOG_RUN_ARTIFACT_EXISTS: 'WF_CATALOG_RUN_ARTIFACT_EXISTS',
  /** The partition marker names another project. */
  WF_CATALOG_RUN_PARTITION_MISMATCH: 'WF_CATALOG_RUN_PARTITION_MISMATCH',
  /** A run-store path component is a symlink or not what it must be. */
  WF_CATALOG_RUN_UNSAFE_PATH: 'WF_CATALOG_RUN_UNSAFE_PATH',
  /** The owner of a non-terminal run is gone; recorded on runs `recover()` marks `interrupted`. */
  WF_CATALOG_RUN_INTERRUPTED: 'WF_CATALOG_RUN_INTERRUPTED',
  /** A run record on disk cannot be read (truncated or hand-edited `run.json`). */
  WF_CATALOG_RUN_CORRUPT: 'WF_CATALOG_RUN_CORRUPT',
  /** An unexpected filesystem error in the run store. */
  WF_CATALOG_RUN_IO: 'WF_CATALOG_RUN_IO',
} as const;

export type CatalogFsErrorCode = keyof typeof CATALOG_FS_ERROR_CODES;

/**
 * Name-keyed view of the table for this package's own modules (`CatalogFsCode.NotFound`). Not
 * exported from the package: callers use the codes themselves.
 */
export const CatalogFsCode = {
  InvalidName: CATALOG_FS_ERROR_CODES.WF_CATALOG_INVALID_NAME,
  UnsafePath: CATALOG_FS_ERROR_CODES.WF_CATALOG_UNSAFE_PATH,
  Exists: CATALOG_FS_ERROR_CODES.WF_CATALOG_EXISTS,
  NotFound: CATALOG_FS_ERROR_CODES.WF_CATALOG_NOT_FOUND,
  TooLarge: CATALOG_FS_ERROR_CODES.WF_CATALOG_TOO_LARGE,
  Full: CATALOG_FS_ERROR_CODES.WF_CATALOG_FULL,
  InvalidCapsule: CATALOG_FS_ERROR_CODES.WF_CATALOG_INVALID_CAPSULE,
  Busy: CATALOG_FS_ERROR_CODES.WF_CATALOG_BUSY,
  ConfirmationRequired: CATALOG_FS_ERROR_CODES.WF_CATALOG_CONFIRMATION_REQUIRED,
  ImportFailed: CATALOG_FS_ERROR_CODES.WF_CATALOG_IMPORT_FAILED,
  Unsupported: CATALOG_FS_ERROR_CODES.WF_CATALOG_UNSUPPORTED,
  Io: CATALOG_FS_ERROR_CODES.WF_CATALOG_IO,
  RunInvalidId: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_INVALID_ID,
  RunNotFound: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_NOT_FOUND,
  RunExists: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_EXISTS,
  RunActive: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_ACTIVE,
  RunNotTerminal: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_NOT_TERMINAL,
  ArtifactExists: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_ARTIFACT_EXISTS,
  PartitionMismatch: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_PARTITION_MISMATCH,
  RunUnsafePath: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_UNSAFE_PATH,
  RunInterrupted: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_INTERRUPTED,
  RunCorrupt: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_CORRUPT,
  RunIo: CATALOG_FS_ERROR_CODES.WF_CATALOG_RUN_IO,
} as const;

/** The error of this package; `CatalogFsError.is` recognises it across package copies and realms. */
export class CatalogFsError extends WfError<CatalogFsErrorCode> {
  static override readonly brand: string = '@wf/catalog-fs';
}

/** The data form of a failed operation (`{ code, message, hint? }`). */
export type OperationError = ErrorInfo<CatalogFsErrorCode>;

export type Result<T> = ({ readonly ok: true } & T) | Failure<CatalogFsErrorCode>;
