// @wf/source-contract: the static contract for untrusted workflow source (defence in depth;
// the sandbox is the boundary). Read this file and README.md to audit the package.
export { checkWorkflowSource, MAX_DIAGNOSTICS } from './check.js';
export {
  SOURCE_CONTRACT_CODES,
  SOURCE_CONTRACT_ERROR_CODES,
  SourceContractError,
  type SourceContractCode,
  type SourceContractErrorCode,
} from './errors.js';
export {
  FORBIDDEN_GLOBALS,
  FORBIDDEN_MEMBERS,
  KNOWN_GLOBALS,
  PRELUDE_GLOBALS,
} from './policy.js';
export { WF_METHODS, type WfMethodKind, type WfMethodName } from './wf-methods.js';
export {
  type CheckOptions,
  type CheckProfile,
  type CheckResult,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_DEPTH,
  type Diagnostic,
} from './types.js';
