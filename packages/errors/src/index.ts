// @wf/errors: the error kit every @wf package builds on. It imports nothing, so every layer,
// including @wf/sandbox and @wf/source-contract, may import it.

export type { BrandedErrorClass, ErrorInfo, WfErrorOptions } from './error.js';
export { ERROR_BRAND, hasErrorBrand, WfError } from './error.js';
export type { CodeOf, Failure, Outcome } from './failure.js';
export { failure, isCodeTable } from './failure.js';
