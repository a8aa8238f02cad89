// What every verb runs with: the working directory, the environment, the two output streams and
// whether the caller asked for JSON. `runVerb` turns any outcome into an exit code: a CliError
// prints its code, message and hint (or a JSON error document), anything else is a bug and says so.
// Invariant 13: everything printed here passes terminalText, the one sanitizer; fields that must
// stay on one line (names, ids, codes) are passed through it in `line` layout by the verbs first.
import { terminalText } from '@wf/bridge/terminal-text';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { STDERR, STDOUT } from './std-output.js';

export interface TermStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

export interface CliContext {
  readonly verb: string;
  readonly cwd: string;
  readonly env: { readonly [key: string]: string | undefined };
  readonly stdout: TermStream;
  readonly stderr: TermStream;
  readonly json: boolean;
}

/** The context of a verb run from the command line (std-output.ts: a closed pipe ends it quietly). */
export function processContext(verb: string, json: boolean): CliContext {
  return { verb, cwd: process.cwd(), env: process.env, stdout: STDOUT, stderr: STDERR, json };
}

/**
 * Prints one JSON document on stdout (the `--json` contract: exactly one per invocation). The
 * sanitizer's escapes are JSON's, so a C1 or bidi control inside a string (JSON.stringify leaves
 * those raw) is escaped and the document parses to the same value.
 */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${terminalText(JSON.stringify(value, null, 2), 'lines')}\n`);
}

/** Prints one JSON value on one line of stdout (JSON Lines, for streams such as `events --json`). */
export function printJsonLine(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${terminalText(JSON.stringify(value))}\n`);
}

export function printLine(ctx: CliContext, line = ''): void {
  ctx.stdout.write(`${terminalText(line, 'lines')}\n`);
}

/** Columns padded to their widest cell, two spaces apart (the last column unpadded). */
export function printTable(
  ctx: CliContext,
  head: readonly string[],
  rows: readonly (readonly string[])[],
): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  printLine(ctx, line(head));
  for (const r of rows) printLine(ctx, line(r));
}

export function printNote(ctx: CliContext, line: string): void {
  ctx.stderr.write(`${terminalText(line, 'lines')}\n`);
}

export function errorDocument(error: CliError): {
  ok: false;
  error: { code: string; message: string; hint?: string; details?: unknown };
  exitCode: number;
} {
  return {
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      ...(error.details === undefined ? {} : { details: error.details }),
    },
    exitCode: error.exitCode,
  };
}

export function printError(ctx: CliContext, error: CliError): void {
  if (ctx.json) {
    printJson(ctx, errorDocument(error));
    return;
  }
  // Messages quote file names, run data and guest text. An error is one line (and its hint one
  // more): a line break in what it quotes is shown escaped, so it cannot forge a line of output.
  printNote(ctx, `wf ${ctx.verb}: ${error.code}: ${terminalText(error.message)}`);
  if (error.hint) printNote(ctx, `  hint: ${terminalText(error.hint)}`);
}

/** Runs a verb body and sets the process exit code from its outcome. */
export async function runVerb(
  ctx: CliContext,
  body: (ctx: CliContext) => Promise<ExitCode>,
): Promise<ExitCode> {
  let code: ExitCode;
  try {
    code = await body(ctx);
  } catch (e) {
    const error = CliError.is(e)
      ? e
      : new CliError(
          'WF_CLI_INTERNAL',
          `unexpected internal error: ${e instanceof Error ? e.message : String(e)}`,
          { hint: 'this is a bug in wf; please report it with the command you ran', cause: e },
        );
    if (!CliError.is(e) && ctx.env.WF_DEBUG) printNote(ctx, String((e as Error)?.stack ?? e));
    printError(ctx, error);
    code = error.exitCode;
  }
  process.exitCode = code;
  return code;
}

export { EXIT };
