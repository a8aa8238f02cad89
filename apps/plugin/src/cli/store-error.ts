// Maps run-store failures (data from @wf/catalog-fs) to the CLI's codes and exit codes.
import { CliError } from './errors.js';

export function storeError(error: { code: string; message: string }, runId: string): CliError {
  if (error.code === 'WF_RUNSTORE_NOT_FOUND' || error.code === 'WF_RUNSTORE_INVALID_ID') {
    return new CliError(
      'WF_CLI_RUN_NOT_FOUND',
      `no run ${JSON.stringify(runId)} in this project: ${error.message}`,
      {
        hint: '`wf runs` lists the recorded runs of this directory',
      },
    );
  }
  if (error.code === 'WF_RUNSTORE_ACTIVE' || error.code === 'WF_RUNSTORE_NOT_TERMINAL') {
    return new CliError('WF_CLI_RUN_ACTIVE', error.message, {
      hint:
        error.code === 'WF_RUNSTORE_NOT_TERMINAL'
          ? 'a stale record whose owner is gone can be deleted with --force'
          : 'wait for the run to end, or stop it first',
    });
  }
  if (error.code === 'WF_RUNSTORE_CORRUPT' || error.code === 'WF_RUNSTORE_UNSAFE_PATH') {
    return new CliError('WF_CLI_RUN_CORRUPT', `run ${runId}: ${error.message}`, {
      hint: 'the run directory was damaged or hand-edited; `wf delete-run --force` removes it',
    });
  }
  return new CliError('WF_CLI_INTERNAL', `run store: ${error.code}: ${error.message}`);
}
