// The `wf` program: parses the command line (../startup/command-line.ts over the verb table in
// verbs.ts) and runs one verb. Usage errors exit 2 (1 would read as "found errors"), with the
// error on stderr and, under --json, one error document on stdout.
import { readFileSync } from 'node:fs';
import { terminalText } from '@wf/bridge/terminal-text';
import { type ProgramSpec, parseCommandLine } from '../startup/command-line.js';
import { CliError, EXIT } from './errors.js';
import { STDERR, STDOUT } from './std-output.js';
import { VERBS } from './verbs.js';

export const PROGRAM: ProgramSpec = {
  name: 'wf',
  description: 'secure multi-agent workflows for DSH: check, run and inspect workflows',
  verbs: VERBS,
};

function packageVersion(): string {
  // src/cli and dist/cli are both two levels below the package root.
  try {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Help is wrapped to the terminal's width, or 80 columns when not on a terminal. */
function helpWidth(): number {
  // Asked only when help is printed: it builds the Node stream (std-output.ts)
  return STDOUT.isTTY && STDOUT.columns ? STDOUT.columns : 80;
}

/** Runs the command line on `argv` (as in process.argv) and sets process.exitCode. */
export async function main(argv: readonly string[]): Promise<number> {
  let code: number;
  try {
    const parsed = parseCommandLine(PROGRAM, argv, helpWidth);
    if (parsed.kind === 'version') {
      STDOUT.write(`${packageVersion()}\n`);
      code = EXIT.ok;
    } else if (parsed.kind === 'help') {
      (parsed.toStderr ? STDERR : STDOUT).write(parsed.text);
      code = parsed.exitCode;
    } else {
      await parsed.verb.action(parsed.positional, parsed.options);
      code = typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
    }
  } catch (error) {
    if (!(CliError.is(error) && error.code === 'WF_CLI_USAGE')) throw error;
    code = EXIT.usage;
    // The message quotes the command line (a word copied from a listing, say); its own "did you
    // mean" is a second line.
    STDERR.write(`error: ${terminalText(error.message, 'lines')}\n(run \`wf --help\` for usage)\n`);
    if (argv.includes('--json')) {
      const doc = {
        ok: false,
        error: { code: 'WF_CLI_USAGE', message: error.message },
        exitCode: EXIT.usage,
      };
      STDOUT.write(`${terminalText(JSON.stringify(doc, null, 2), 'lines')}\n`);
    }
  }
  process.exitCode = code;
  return code;
}
