// The bridge's error codes (CODE -> CODE) and its one error class, built on the @wf/errors kit so
// identity survives realm crossings.
import { WfError } from '@wf/errors';

/** Every code this package defines. Expected outcomes are `{ ok: false, issues }`, not throws. */
export const BRIDGE_ERROR_CODES = {
  /** A capsule document failed `parseCapsule` where a valid one was required. */
  WF_BRIDGE_CAPSULE_INVALID: 'WF_BRIDGE_CAPSULE_INVALID',
  /** A manifest failed `parseManifest` where a valid one was required. */
  WF_BRIDGE_MANIFEST_INVALID: 'WF_BRIDGE_MANIFEST_INVALID',
  /** Args failed `validateArgs` for the workflow's manifest. */
  WF_BRIDGE_ARGS_INVALID: 'WF_BRIDGE_ARGS_INVALID',
  /** A `wf` call's input failed its method's schema (`validateCall`). */
  WF_BRIDGE_CALL_INVALID: 'WF_BRIDGE_CALL_INVALID',
  /** A `wf` call's input has more JSON values than `CALL_LIMITS.maxNodes` (host-work bound). */
  WF_BRIDGE_CALL_TOO_LARGE: 'WF_BRIDGE_CALL_TOO_LARGE',
  /** A call named a method that is not in `WF_METHODS`. */
  WF_BRIDGE_UNKNOWN_METHOD: 'WF_BRIDGE_UNKNOWN_METHOD',
} as const;

export type BridgeErrorCode = keyof typeof BRIDGE_ERROR_CODES;

/**
 * Codes the `wf` object itself reports to workflow code (in `lastFailure().error.code`) when the
 * failure it records carries no code of its own. They belong to the author-facing contract, so
 * they have their own `WF_WORKFLOW_` prefix rather than the host-facing `WF_BRIDGE_`.
 */
export const WORKFLOW_API_CODES = {
  /** A `parallel`/`pipeline` lane, `runAgent` or `log` failed with a value that has no string `code`. */
  WF_WORKFLOW_ERROR: 'WF_WORKFLOW_ERROR',
  /** `runAgent` returned null for a failed task whose result carried no error. */
  WF_WORKFLOW_TASK_FAILED: 'WF_WORKFLOW_TASK_FAILED',
  /** `runAgent` returned null for a stopped task whose result carried no error. */
  WF_WORKFLOW_TASK_STOPPED: 'WF_WORKFLOW_TASK_STOPPED',
} as const;

export type WorkflowApiCode = keyof typeof WORKFLOW_API_CODES;

export interface BridgeErrorIssue {
  readonly path: string;
  readonly message: string;
}

/** The bridge's error: a stable `code`, a message naming what was wrong, optional `issues`. */
export class BridgeError extends WfError<BridgeErrorCode> {
  static override readonly brand: string = '@wf/bridge';

  readonly issues: readonly BridgeErrorIssue[];

  constructor(
    code: BridgeErrorCode,
    message: string,
    options: { cause?: unknown; hint?: string; issues?: readonly BridgeErrorIssue[] } = {},
  ) {
    super(code, message, options);
    this.issues = options.issues ?? [];
  }
}

/**
 * A BridgeError for a refused document or call, for callers that must throw (a CLI, a preflight):
 * the message lists the first issues (`invalid args: args.scopes[2] must be ...; ...`), `issues`
 * keeps all of them.
 */
export function bridgeErrorFromIssues(
  code: BridgeErrorCode,
  subject: string,
  issues: readonly BridgeErrorIssue[],
): BridgeError {
  const shown = issues.slice(0, 3).map((i) => i.message);
  const more = issues.length > shown.length ? ` (and ${issues.length - shown.length} more)` : '';
  const detail = shown.length > 0 ? shown.join('; ') : 'no details';
  return new BridgeError(code, `invalid ${subject}: ${detail}${more}`, { issues });
}
