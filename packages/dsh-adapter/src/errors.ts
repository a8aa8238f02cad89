// The one error module of @wf/dsh-adapter. Expected outcomes (a refused launch, an unavailable
// host service) are data; these codes name why.
import { WfError } from '@wf/errors';

export const DSH_ERROR_CODES = {
  /** A task needs a provider capability (toolFilter, outputSchema...) the DSH provider lacks. */
  WF_DSH_CAPABILITY_MISSING: 'WF_DSH_CAPABILITY_MISSING',
  /** The named DSH subagent provider is not mounted. */
  WF_DSH_PROVIDER_MISSING: 'WF_DSH_PROVIDER_MISSING',
  /** `ctx.subagents.start` rejected: the child could not be launched. */
  WF_DSH_LAUNCH_FAILED: 'WF_DSH_LAUNCH_FAILED',
  /** A child failed (model/transport error, refusal, token ceiling, infrastructure fault). */
  WF_DSH_CHILD_FAILED: 'WF_DSH_CHILD_FAILED',
  /** A child exceeded its per-child model-call cap (`maxChildModelCalls`) and was stopped. */
  WF_DSH_CHILD_LIMIT: 'WF_DSH_CHILD_LIMIT',
  /** A child finished but its verification evidence did not satisfy the task. */
  WF_DSH_VERIFICATION_FAILED: 'WF_DSH_VERIFICATION_FAILED',
  /** A child returned no structured value, or one that does not match its schema. */
  WF_DSH_STRUCTURED_INVALID: 'WF_DSH_STRUCTURED_INVALID',
  /** A steering message could not be delivered (remote or finished child). */
  WF_DSH_SEND_UNAVAILABLE: 'WF_DSH_SEND_UNAVAILABLE',
  /** An optional host service (user questions, jobs) is not mounted, or has no provider. */
  WF_DSH_SERVICE_UNAVAILABLE: 'WF_DSH_SERVICE_UNAVAILABLE',
  /** An optional host service threw for another reason. */
  WF_DSH_SERVICE_FAILED: 'WF_DSH_SERVICE_FAILED',
  /** A question was asked on behalf of a child agent, which may not ask the user. */
  WF_DSH_QUESTION_DELEGATED: 'WF_DSH_QUESTION_DELEGATED',
  /** A question was cancelled (its signal aborted) before the user answered. */
  WF_DSH_QUESTION_CANCELLED: 'WF_DSH_QUESTION_CANCELLED',
} as const;

export type DshErrorCode = keyof typeof DSH_ERROR_CODES;

/** The adapter's error; `DshAdapterError.is` recognises it across package copies and realms. */
export class DshAdapterError extends WfError<DshErrorCode> {
  static override readonly brand: string = '@wf/dsh-adapter';
}
