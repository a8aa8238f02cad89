// The bridge's error codes and its one error class (branded so identity survives realm crossings).

/** Every code this package defines. Expected outcomes are `{ ok: false, issues }`, not throws. */
export const BRIDGE_ERROR_CODES = {
  /** A capsule document failed `parseCapsule` where a valid one was required. */
  CAPSULE_INVALID: 'WF_BRIDGE_CAPSULE_INVALID',
  /** A manifest failed `parseManifest` where a valid one was required. */
  MANIFEST_INVALID: 'WF_BRIDGE_MANIFEST_INVALID',
  /** Args failed `validateArgs` for the workflow's manifest. */
  ARGS_INVALID: 'WF_BRIDGE_ARGS_INVALID',
  /** A `wf` call's input failed its method's schema (`validateCall`). */
  CALL_INVALID: 'WF_BRIDGE_CALL_INVALID',
  /** A `wf` call's input has more JSON values than `CALL_LIMITS.maxNodes` (host-work bound). */
  CALL_TOO_LARGE: 'WF_BRIDGE_CALL_TOO_LARGE',
  /** A call named a method that is not in `WF_METHODS`. */
  UNKNOWN_METHOD: 'WF_BRIDGE_UNKNOWN_METHOD',
} as const;

export type BridgeErrorCode = (typeof BRIDGE_ERROR_CODES)[keyof typeof BRIDGE_ERROR_CODES];

const BRAND: unique symbol = Symbol.for('@wf/bridge.error') as never;

export interface BridgeErrorIssue {
  readonly path: string;
  readonly message: string;
}

/** The bridge's error: a stable `code`, a message naming what was wrong, optional `issues`. */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  readonly issues: readonly BridgeErrorIssue[];
  readonly [BRAND] = true;

  constructor(
    code: BridgeErrorCode,
    message: string,
    options: { cause?: unknown; issues?: readonly BridgeErrorIssue[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BridgeError';
    this.code = code;
    this.issues = options.issues ?? [];
  }

  /** True for a BridgeError from any copy of this package or realm. */
  static is(value: unknown): value is BridgeError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[BRAND] === true
    );
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
