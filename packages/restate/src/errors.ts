// The one error module of @wf/restate. Expected outcomes are data; these codes name why a call to
// Restate, a worker option or a submitted run was refused.
import { WfError } from '@wf/errors';

export const RESTATE_ERROR_CODES = {
  /** The Restate ingress or admin API did not answer (down, restarting past patience, wrong URL). */
  WF_RESTATE_UNREACHABLE: 'WF_RESTATE_UNREACHABLE',
  /** The URL answers, but not as a Restate ingress (or admin API) does: a wrong port or host. */
  WF_RESTATE_NOT_RESTATE: 'WF_RESTATE_NOT_RESTATE',
  /** The Restate server answers, but no worker has registered the @wf services with it. */
  WF_RESTATE_NO_WORKER: 'WF_RESTATE_NO_WORKER',
  /** Restate answered a request with an error status or an unreadable body. */
  WF_RESTATE_REQUEST_FAILED: 'WF_RESTATE_REQUEST_FAILED',
  /** Worker or submission options are invalid (URL, port, run id, workflow). */
  WF_RESTATE_INVALID_OPTIONS: 'WF_RESTATE_INVALID_OPTIONS',
  /** The durable journal refused an entry: another attempt of the same run wrote a different one. */
  WF_RESTATE_JOURNAL_CONFLICT: 'WF_RESTATE_JOURNAL_CONFLICT',
  /**
   * A large answer stored by reference (WfBlob) is above the reader's size limit, missing, or
   * does not match its hash; or a value to store is above that limit.
   */
  WF_RESTATE_ANSWER_REFERENCE: 'WF_RESTATE_ANSWER_REFERENCE',
} as const;

export type RestateErrorCode = keyof typeof RESTATE_ERROR_CODES;

/** The package's error; `RestateBackendError.is` recognises it across package copies and realms. */
export class RestateBackendError extends WfError<RestateErrorCode> {
  static override readonly brand: string = '@wf/restate';
}
