// The one error module of @wf/catalog-fs: a stable code table and one branded Error subclass.
// Expected outcomes (not found, already exists, unsafe path, disk full...) reach callers as data
// (`{ ok: false, error: { code, message } }`); the class is how they travel internally.

export const CatalogFsCode = {
  /** A workflow name is not strict kebab-case. */
  InvalidName: 'WF_CATALOG_INVALID_NAME',
  /** A path component is a symlink, not a directory, not a regular file, or escapes its root. */
  UnsafePath: 'WF_CATALOG_UNSAFE_PATH',
  /** A create-only save or a rename target found the name taken. */
  Exists: 'WF_CATALOG_EXISTS',
  /** No workflow (or archived version) by that name. */
  NotFound: 'WF_CATALOG_NOT_FOUND',
  /** A capsule exceeds `maxCapsuleBytes`. */
  TooLarge: 'WF_CATALOG_TOO_LARGE',
  /** A scope already holds `maxCatalogEntries` capsules. */
  Full: 'WF_CATALOG_FULL',
  /** A capsule failed JSON parsing or schema validation. */
  InvalidCapsule: 'WF_CATALOG_INVALID_CAPSULE',
  /** The catalog lock could not be taken in time. */
  Busy: 'WF_CATALOG_BUSY',
  /** `importTrustedLocal` was called without `{ confirmed: true }`. */
  ConfirmationRequired: 'WF_CATALOG_CONFIRMATION_REQUIRED',
  /** A trusted-local module could not be imported or has no `run` function. */
  ImportFailed: 'WF_CATALOG_IMPORT_FAILED',
  /** An operation the entry kind does not support (e.g. renaming a source file). */
  Unsupported: 'WF_CATALOG_UNSUPPORTED',
  /** An unexpected filesystem error (disk full, permissions...); nothing was published. */
  Io: 'WF_CATALOG_IO',
  /** A run id is not a safe identifier. */
  RunInvalidId: 'WF_RUNSTORE_INVALID_ID',
  /** No run by that id. */
  RunNotFound: 'WF_RUNSTORE_NOT_FOUND',
  /** `begin` for a run id that already has a directory. */
  RunExists: 'WF_RUNSTORE_EXISTS',
  /** The run is live (owned by a running process); it can never be deleted. */
  RunActive: 'WF_RUNSTORE_ACTIVE',
  /** The run is not terminal; deleting a stale record needs `force`. */
  RunNotTerminal: 'WF_RUNSTORE_NOT_TERMINAL',
  /** A write-once artifact name was written twice in one run. */
  ArtifactExists: 'WF_RUNSTORE_ARTIFACT_EXISTS',
  /** The partition marker names another project. */
  PartitionMismatch: 'WF_RUNSTORE_PARTITION_MISMATCH',
  /** A run-store path component is a symlink or not what it must be. */
  RunUnsafePath: 'WF_RUNSTORE_UNSAFE_PATH',
  /** The owner of a non-terminal run is gone; recorded on runs `recover()` marks `interrupted`. */
  RunInterrupted: 'WF_RUNSTORE_INTERRUPTED',
  /** A run record on disk cannot be read (truncated or hand-edited `run.json`). */
  RunCorrupt: 'WF_RUNSTORE_CORRUPT',
  /** An unexpected filesystem error in the run store. */
  RunIo: 'WF_RUNSTORE_IO',
} as const;

export type CatalogFsErrorCode = (typeof CatalogFsCode)[keyof typeof CatalogFsCode];

const BRAND: unique symbol = Symbol.for('@wf/catalog-fs.error') as never;

/** The error of this package; `isCatalogFsError` recognises it across realms. */
export class CatalogFsError extends Error {
  readonly code: CatalogFsErrorCode;
  declare readonly [BRAND]: true;

  constructor(code: CatalogFsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CatalogFsError';
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

export function isCatalogFsError(value: unknown): value is CatalogFsError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/** The data form of a failed operation. */
export interface OperationError {
  readonly code: CatalogFsErrorCode;
  readonly message: string;
}

export type Result<T> =
  | ({ readonly ok: true } & T)
  | { readonly ok: false; readonly error: OperationError };
