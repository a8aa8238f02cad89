// The `wf` program: builds the commander command tree and runs it. Each verb registers itself
// with one line below; usage errors exit 2 (commander's default of 1 would read as "found errors").
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerCheck } from './check.js';
import {
  registerCatalogVerbs,
  registerDeleteRunVerb,
  registerEventsVerb,
  registerListVerb,
  registerPruneVerb,
  registerReportVerb,
  registerResumeVerb,
  registerRunsVerb,
  registerRunVerb,
  registerSaveVerb,
  registerShowVerb,
  registerWorkerVerb,
} from './verbs.js';

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

export function createProgram(): Command {
  const program = new Command('wf')
    .description('secure multi-agent workflows for DSH: check, run and inspect workflows')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(run `wf --help` for usage)')
    .exitOverride();
  registerCheck(program);
  registerRunVerb(program);
  registerResumeVerb(program);
  registerListVerb(program);
  registerRunsVerb(program);
  registerShowVerb(program);
  registerEventsVerb(program);
  registerReportVerb(program);
  registerSaveVerb(program);
  registerDeleteRunVerb(program);
  registerPruneVerb(program);
  registerCatalogVerbs(program);
  registerWorkerVerb(program);
  return program;
}

/** Runs the command line on `argv` (as in process.argv) and sets process.exitCode. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  let code: number;
  try {
    await program.parseAsync([...argv]);
    code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version throw with exit code 0; every other parse error is a usage error.
    code = error.exitCode === 0 ? 0 : 2;
    if (code === 2 && argv.includes('--json')) {
      process.stdout.write(
        `${JSON.stringify({ ok: false, error: { code: 'WF_CLI_USAGE', message: error.message.replace(/^error: /, '') } }, null, 2)}\n`,
      );
    }
  }
  process.exitCode = code;
  return code;
}
