// @wf/cli: the `wf` command line (bin/wf.cjs runs `main`, bundled into dist/cli/wf.cjs), its terminal progress and the HTML run
// report. A program, not a library: the exports are for tests and for embedding the command.
export {
  CLI_ERROR_CODES,
  CLI_EXIT_CODES,
  type CliErrorCode,
  CliError,
  EXIT,
  type ExitCode,
} from './cli/errors.js';
export { main } from './cli/main.js';
// The report's renderer and fold live in @wf/report (the plugin writes the same report).
export {
  foldRunEvents,
  type RunModel,
  type RunReportInput,
  type RunReportOptions,
  renderRunReport,
} from '@wf/report';
