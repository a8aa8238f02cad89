// What every verb runs with: the working directory, the environment, the two output streams and
// whether the caller asked for JSON. `runVerb` turns any outcome into an exit code: a CliError
// prints its code, message and hint (or a JSON error document), anything else is a bug and says so.
import { cleanLines } from '../progress/frame.js';
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

/** Prints one JSON document on stdout (the `--json` contract: exactly one per invocation). */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(ctx: CliContext, line = ''): void {
  ctx.stdout.write(`${line}\n`);
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
  ctx.stderr.write(`${line}\n`);
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
  // Messages quote user files and run data: no control character reaches the terminal.
  ctx.stderr.write(`wf ${ctx.verb}: ${error.code}: ${cleanLines(error.message)}\n`);
  if (error.hint) ctx.stderr.write(`  hint: ${cleanLines(error.hint)}\n`);
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
    if (!CliError.is(e) && ctx.env.WF_DEBUG) ctx.stderr.write(`${(e as Error)?.stack ?? e}\n`);
    printError(ctx, error);
    code = error.exitCode;
  }
  process.exitCode = code;
  return code;
}

export { EXIT };
