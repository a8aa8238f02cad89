// The failure value of every catalog and run-store operation: a CatalogFsError becomes
// `{ ok: false, error }`; anything else is a bug and is rethrown.
import { CatalogFsError, type OperationError } from '../errors.js';

export function fail(error: unknown): { ok: false; error: OperationError } {
  if (CatalogFsError.is(error))
    return { ok: false, error: { code: error.code, message: error.message } };
  throw error;
}
