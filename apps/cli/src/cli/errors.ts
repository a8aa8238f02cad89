// The wf command line's error codes and exit codes. Every failure a user can cause has a code, a
// message naming what was wrong and where, and an exit code a script can branch on.
import { WfError } from '@wf/errors';

/** Exit codes (documented in docs/cli.md and `wf --help`). */
export const EXIT = {
  /** The verb did what was asked (for `run`/`resume`: the workflow completed). */
  ok: 0,
  /** The workflow ran and failed or was denied; `check` found errors. */
  failed: 1,
  /** Bad usage or bad input: unknown flag, invalid JSON, args failing the input schema, invalid capsule. */
  usage: 2,
  /** The workflow or run named does not exist. */
  notFound: 3,
  /** The request conflicts with the current state: an active run, a name already taken. */
  conflict: 4,
  /** Recorded data could not be read: a corrupt or unreadable run directory. */
  corrupt: 5,
  /**
   * A service the verb needs did not answer as it should: the Restate server is unreachable, is
   * not Restate, or has no worker (sysexits' EX_UNAVAILABLE).
   */
  unavailable: 69,
  /** A bug in wf itself (the message says so). */
  internal: 70,
  /** Interrupted by Ctrl-C (SIGINT); a run is recorded `stopped`. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The CLI's codes, keyed CODE -> CODE like every @wf code table. */
export const CLI_ERROR_CODES = {
  WF_CLI_SMOKE_FAILED: 'WF_CLI_SMOKE_FAILED',
  WF_CLI_CHECK_FAILED: 'WF_CLI_CHECK_FAILED',
  WF_CLI_USAGE: 'WF_CLI_USAGE',
  WF_CLI_ARGS_JSON: 'WF_CLI_ARGS_JSON',
  WF_CLI_ARGS_INVALID: 'WF_CLI_ARGS_INVALID',
  WF_CLI_WORKFLOW_INVALID: 'WF_CLI_WORKFLOW_INVALID',
  WF_CLI_AGENTS_UNSUPPORTED: 'WF_CLI_AGENTS_UNSUPPORTED',
  WF_CLI_TRUST_REQUIRED: 'WF_CLI_TRUST_REQUIRED',
  WF_CLI_WORKFLOW_NOT_FOUND: 'WF_CLI_WORKFLOW_NOT_FOUND',
  WF_CLI_RUN_NOT_FOUND: 'WF_CLI_RUN_NOT_FOUND',
  WF_CLI_RUN_ACTIVE: 'WF_CLI_RUN_ACTIVE',
  WF_CLI_NAME_TAKEN: 'WF_CLI_NAME_TAKEN',
  WF_CLI_NOT_RESUMABLE: 'WF_CLI_NOT_RESUMABLE',
  WF_CLI_RESUME_PROVIDER_MISMATCH: 'WF_CLI_RESUME_PROVIDER_MISMATCH',
  WF_CLI_RUN_CORRUPT: 'WF_CLI_RUN_CORRUPT',
  WF_CLI_INTERRUPTED: 'WF_CLI_INTERRUPTED',
  WF_CLI_ENGINE_UNAVAILABLE: 'WF_CLI_ENGINE_UNAVAILABLE',
  WF_CLI_INTERNAL: 'WF_CLI_INTERNAL',
} as const;

export type CliErrorCode = keyof typeof CLI_ERROR_CODES;

/** The exit code each CLI code ends the process with (docs/cli.md). */
export const CLI_EXIT_CODES = {
  WF_CLI_SMOKE_FAILED: EXIT.failed,
  WF_CLI_CHECK_FAILED: EXIT.failed,
  WF_CLI_USAGE: EXIT.usage,
  WF_CLI_ARGS_JSON: EXIT.usage,
  WF_CLI_ARGS_INVALID: EXIT.usage,
  WF_CLI_WORKFLOW_INVALID: EXIT.usage,
  WF_CLI_AGENTS_UNSUPPORTED: EXIT.usage,
  WF_CLI_TRUST_REQUIRED: EXIT.usage,
  WF_CLI_WORKFLOW_NOT_FOUND: EXIT.notFound,
  WF_CLI_RUN_NOT_FOUND: EXIT.notFound,
  WF_CLI_RUN_ACTIVE: EXIT.conflict,
  WF_CLI_NAME_TAKEN: EXIT.conflict,
  WF_CLI_NOT_RESUMABLE: EXIT.conflict,
  WF_CLI_RESUME_PROVIDER_MISMATCH: EXIT.conflict,
  WF_CLI_RUN_CORRUPT: EXIT.corrupt,
  WF_CLI_INTERRUPTED: EXIT.interrupted,
  WF_CLI_ENGINE_UNAVAILABLE: EXIT.unavailable,
  WF_CLI_INTERNAL: EXIT.internal,
} as const satisfies Record<CliErrorCode, ExitCode>;

export class CliError extends WfError<CliErrorCode> {
  static override readonly brand: string = '@wf/cli';

  /** Structured detail for `--json` (e.g. schema issues with their paths). */
  readonly details: unknown;

  constructor(
    code: CliErrorCode,
    message: string,
    options: { hint?: string; details?: unknown; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.details = options.details;
  }

  get exitCode(): ExitCode {
    return CLI_EXIT_CODES[this.code];
  }
}
