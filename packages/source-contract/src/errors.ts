// The source contract's codes and its one error class. Diagnostics are data (`{ ok: false, errors }`);
// the class is thrown only for caller bugs (invalid options), never for hostile source.
import { WfError } from '@wf/errors';

/**
 * Codes a Diagnostic can carry. `WF_SOURCE_LINT_*` are quality findings, every other
 * `WF_SOURCE_*` a contract violation.
 */
export const SOURCE_CONTRACT_CODES = {
  /** The source is not a string. */
  WF_SOURCE_NOT_TEXT: 'WF_SOURCE_NOT_TEXT',
  /** The source does not parse as a strict-mode script (or has an invalid regular expression). */
  WF_SOURCE_SYNTAX: 'WF_SOURCE_SYNTAX',
  /** The top level is not exactly one `async function run(wf, args)` plus helper functions and consts. */
  WF_SOURCE_SHAPE: 'WF_SOURCE_SHAPE',
  /** `import`/`export` declarations, `import()` or `import.meta`. */
  WF_SOURCE_MODULE_SYNTAX: 'WF_SOURCE_MODULE_SYNTAX',
  /** A free reference to a host or code-generation name (`process`, `eval`, `setTimeout`, ...). */
  WF_SOURCE_FORBIDDEN_NAME: 'WF_SOURCE_FORBIDDEN_NAME',
  /** A prototype-reaching member name (`constructor`, `__proto__`, `prototype`, ...). */
  WF_SOURCE_FORBIDDEN_MEMBER: 'WF_SOURCE_FORBIDDEN_MEMBER',
  /** A Node built-in module named as a `require`/`import()` specifier. */
  WF_SOURCE_NODE_MODULE: 'WF_SOURCE_NODE_MODULE',
  /** `with` or `debugger`. */
  WF_SOURCE_FORBIDDEN_STATEMENT: 'WF_SOURCE_FORBIDDEN_STATEMENT',
  /** Syntax Babel accepts but the QuickJS runtime does not (`using`, decorators, ...). */
  WF_SOURCE_UNSUPPORTED_SYNTAX: 'WF_SOURCE_UNSUPPORTED_SYNTAX',
  /** The source is larger than the size cap (default 512 KiB of UTF-8). */
  WF_SOURCE_TOO_LARGE: 'WF_SOURCE_TOO_LARGE',
  /** Brackets nest deeper than the depth cap, or the parser ran out of stack. */
  WF_SOURCE_TOO_DEEP: 'WF_SOURCE_TOO_DEEP',
  /** `while (true)` / `for (;;)` with no break, return or throw that leaves it. */
  WF_SOURCE_LINT_UNBOUNDED_LOOP: 'WF_SOURCE_LINT_UNBOUNDED_LOOP',
  /** `run` never calls an agent method (runAgent, spawnAgent, synthesize, workflow). */
  WF_SOURCE_LINT_NO_AGENT_WORK: 'WF_SOURCE_LINT_NO_AGENT_WORK',
  /** An agent call whose promise is neither awaited, returned nor stored. */
  WF_SOURCE_LINT_UNAWAITED_AGENT: 'WF_SOURCE_LINT_UNAWAITED_AGENT',
  /** A free reference to a name the workflow runtime does not define (`console`, `document`, ...). */
  WF_SOURCE_LINT_UNKNOWN_GLOBAL: 'WF_SOURCE_LINT_UNKNOWN_GLOBAL',
  /** A `wf.<name>` member that is not a method of the workflow API. */
  WF_SOURCE_LINT_UNKNOWN_WF_METHOD: 'WF_SOURCE_LINT_UNKNOWN_WF_METHOD',
} as const;

export type SourceContractCode = keyof typeof SOURCE_CONTRACT_CODES;

/** Codes of the error class (caller bugs, not source findings). */
export const SOURCE_CONTRACT_ERROR_CODES = {
  /** `checkWorkflowSource` options are malformed (unknown profile, non-positive caps). */
  WF_SOURCE_INVALID_OPTIONS: 'WF_SOURCE_INVALID_OPTIONS',
} as const;

export type SourceContractErrorCode = keyof typeof SOURCE_CONTRACT_ERROR_CODES;

/** Thrown only for invalid options. `SourceContractError.is` recognises it across realms. */
export class SourceContractError extends WfError<SourceContractErrorCode> {
  static override readonly brand: string = '@wf/source-contract';
}
