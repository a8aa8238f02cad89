// Error codes of the DSH plugin surface (tools and /workflow). Outcomes are data
// (`{ ok: false, error: { code, message } }`); a tool call that fails throws a PluginError, which
// DSH shows the model as an error result. One page per code in docs/errors/.
import { WfError } from '@wf/errors';

export const PLUGIN_ERROR_CODES = {
  /** A tool or command argument is missing, unknown or malformed (the message names the field). */
  WF_PLUGIN_INVALID_INPUT: 'WF_PLUGIN_INVALID_INPUT',
  /** No workflow or run by that name or id. */
  WF_PLUGIN_NOT_FOUND: 'WF_PLUGIN_NOT_FOUND',
  /** A catalog entry exists but can never run (invalid capsule, bad name...). */
  WF_PLUGIN_INVALID_WORKFLOW: 'WF_PLUGIN_INVALID_WORKFLOW',
  /** A name matches several runs, or both a run and a saved workflow. */
  WF_PLUGIN_AMBIGUOUS: 'WF_PLUGIN_AMBIGUOUS',
  /** A trusted-local workflow was not confirmed, or nothing can answer the confirmation. */
  WF_PLUGIN_CONFIRMATION_REQUIRED: 'WF_PLUGIN_CONFIRMATION_REQUIRED',
  /** `wf.workflow(name)` named a trusted-local workflow: never run nested. */
  WF_PLUGIN_TRUSTED_LOCAL_NESTED: 'WF_PLUGIN_TRUSTED_LOCAL_NESTED',
  /** The engine refused to start the run. */
  WF_PLUGIN_START_FAILED: 'WF_PLUGIN_START_FAILED',
  /** The run failed on the host side (a port threw); the workflow itself may be fine. */
  WF_PLUGIN_HOST_ERROR: 'WF_PLUGIN_HOST_ERROR',
  /** pause/resume/stop named a run that is not active. */
  WF_PLUGIN_NOT_ACTIVE: 'WF_PLUGIN_NOT_ACTIVE',
  /** delete/resume-run named a run that is still active (invariant 9). */
  WF_PLUGIN_RUN_ACTIVE: 'WF_PLUGIN_RUN_ACTIVE',
  /** save/revise on something without a capsule (a trusted-local run, a source file). */
  WF_PLUGIN_NOT_SAVEABLE: 'WF_PLUGIN_NOT_SAVEABLE',
  /** resume-run on a run with no recorded source. */
  WF_PLUGIN_NOT_RESUMABLE: 'WF_PLUGIN_NOT_RESUMABLE',
  /** The project/personal catalog could not be opened (a symlinked root, permissions). */
  WF_PLUGIN_CATALOG_UNAVAILABLE: 'WF_PLUGIN_CATALOG_UNAVAILABLE',
  /** The project's run store cannot be opened; no run starts (there is no in-memory fallback). */
  WF_PLUGIN_RUN_STORE_UNAVAILABLE: 'WF_PLUGIN_RUN_STORE_UNAVAILABLE',
  /**
   * The run's record could not be written (a full disk): it did not start, or it ended and its
   * end is not on record yet (the answer carries its outcome; the run stays resumable).
   */
  WF_PLUGIN_RUN_UNRECORDED: 'WF_PLUGIN_RUN_UNRECORDED',
  /** The plugin is being unloaded; no new runs start. */
  WF_PLUGIN_UNLOADING: 'WF_PLUGIN_UNLOADING',
  /** `/workflow report` could not write the report file (the message names the path). */
  WF_PLUGIN_REPORT_UNWRITABLE: 'WF_PLUGIN_REPORT_UNWRITABLE',
  /** A package below the plugin refused (catalog, run store, engine): `upstream` holds its code. */
  WF_PLUGIN_UPSTREAM: 'WF_PLUGIN_UPSTREAM',
} as const;

export type PluginErrorCode = keyof typeof PLUGIN_ERROR_CODES;

/** The code and message of a failure from a package below the plugin. */
export interface UpstreamFailure {
  readonly code: string;
  readonly message: string;
}

/**
 * What a failing tool call throws: DSH renders the message; `code` stays machine-readable and is
 * always one of the plugin's. A refusal from a package below keeps that package's code in
 * `upstream` (and at the head of the message), under `WF_PLUGIN_UPSTREAM`.
 */
export class PluginError extends WfError<PluginErrorCode> {
  static override readonly brand: string = '@wf/plugin';

  readonly upstream?: UpstreamFailure;

  constructor(
    code: PluginErrorCode,
    message: string,
    options: { cause?: unknown; hint?: string; upstream?: UpstreamFailure } = {},
  ) {
    super(code, message, options);
    if (options.upstream !== undefined) this.upstream = options.upstream;
  }

  /** The error a tool call throws for a failed result: `CODE: message`, whoever's code it is. */
  static fromFailure(error: UpstreamFailure): PluginError {
    const message = `${error.code}: ${error.message}`;
    return Object.hasOwn(PLUGIN_ERROR_CODES, error.code)
      ? new PluginError(error.code as PluginErrorCode, message)
      : new PluginError('WF_PLUGIN_UPSTREAM', message, {
          upstream: { code: error.code, message: error.message },
        });
  }
}
