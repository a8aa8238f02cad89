// The wf command line's error codes and exit codes. Every failure a user can cause has a code, a
// message naming what was wrong and where, and an exit code a script can branch on.
import { WfError } from '@wf/errors';

/** Exit codes. EXIT_TABLE below says what each means; docs/cli.md and `wf --help` show it. */
export const EXIT = {
  /** The verb did what was asked (for `run`/`resume`: the workflow completed and is on record). */
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
  /** The disk refused a write (full, read-only, failing): what is not on record is named. */
  storage: 6,
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
  WF_CLI_STORAGE_FAILED: 'WF_CLI_STORAGE_FAILED',
  WF_CLI_RUN_UNRECORDED: 'WF_CLI_RUN_UNRECORDED',
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
  WF_CLI_STORAGE_FAILED: EXIT.storage,
  WF_CLI_RUN_UNRECORDED: EXIT.storage,
  WF_CLI_INTERRUPTED: EXIT.interrupted,
  WF_CLI_ENGINE_UNAVAILABLE: EXIT.unavailable,
  WF_CLI_INTERNAL: EXIT.internal,
} as const satisfies Record<CliErrorCode, ExitCode>;

/**
 * The one table of exit codes: what each means, in `wf --help` and in docs/cli.md (a test checks
 * the docs' table is `exitCodeTable()`, and runs a command for each code it lists).
 */
export const EXIT_TABLE: readonly { readonly exit: ExitCode; readonly meaning: string }[] = [
  { exit: EXIT.ok, meaning: 'ok (run/resume: the workflow completed and its end is on record)' },
  { exit: EXIT.failed, meaning: 'the workflow failed or was denied; `check` found errors' },
  {
    exit: EXIT.usage,
    meaning:
      'usage or input error (a bad flag, invalid JSON, args failing the input schema, a file that is no workflow; no run is recorded)',
  },
  { exit: EXIT.notFound, meaning: 'not found (an unknown workflow or run)' },
  {
    exit: EXIT.conflict,
    meaning:
      'conflict with the current state (the run is active, the name is taken, the run cannot be resumed)',
  },
  { exit: EXIT.corrupt, meaning: 'a corrupt or unreadable record (the file and field are named)' },
  {
    exit: EXIT.storage,
    meaning:
      'the disk refused a write (full, read-only, failing): what is not on record is named; a run still prints its result and stays resumable',
  },
  {
    exit: EXIT.unavailable,
    meaning:
      'the Restate server is unreachable, is not Restate, or has no worker (`--engine restate`, `wf worker`)',
  },
  { exit: EXIT.internal, meaning: 'a bug in wf' },
  { exit: EXIT.interrupted, meaning: 'interrupted by Ctrl-C (a run is recorded `stopped`)' },
];

/** The CLI codes that exit with `exit`, in table order. */
export function codesExitingWith(exit: ExitCode): CliErrorCode[] {
  return (Object.keys(CLI_EXIT_CODES) as CliErrorCode[]).filter(
    (code) => CLI_EXIT_CODES[code] === exit,
  );
}

/** docs/cli.md's exit-code table, as markdown. */
export function exitCodeTable(): string {
  const rows = EXIT_TABLE.map(({ exit, meaning }) => {
    const codes = codesExitingWith(exit).map((c) => `[${c}](errors/${c}.md)`);
    return `| ${exit} | ${meaning} |${codes.length > 0 ? ` ${codes.join(', ')} ` : ' '}|`;
  });
  return ['| code | meaning | error codes |', '| --- | --- | --- |', ...rows].join('\n');
}

/** `wf --help`'s exit codes, one line each. */
export function exitCodesHelp(): string {
  return EXIT_TABLE.map(
    ({ exit, meaning }) => `  ${String(exit).padEnd(5)}${meaning.replaceAll('`', '')}`,
  ).join('\n');
}

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
