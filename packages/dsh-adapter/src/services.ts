// Optional DSH services behind small interfaces that answer "unavailable" instead of throwing.
// Headless DSH mounts no approval answerer (request resolves 'unavailable') and no question
// provider (ask throws NO_PROVIDER); a child agent may not ask at all (DELEGATED_CALLER).
import type { ApprovalDecision, ApprovalRequest, Approver } from '@wf/engine';
import { type Failure, failure } from '@wf/errors';
import type { DshErrorCode } from './errors.js';
import type {
  HostAgent,
  HostApproval,
  HostJobOutcome,
  HostJobs,
  HostQuestion,
  HostSandboxPolicy,
  HostUserQuestions,
  SandboxMode,
} from './host.js';

const SANDBOX_MODES: readonly SandboxMode[] = [
  'read-only',
  'workspace-write',
  'danger-full-access',
];

export interface SandboxModeRead {
  readonly mode: SandboxMode | 'unavailable';
  readonly workspaceRoot?: string;
}

/** The session's sandbox mode from `ctx.sandboxPolicy`, or `unavailable`; never throws. */
export function resolveSandboxMode(
  policy: HostSandboxPolicy | undefined,
  agent: HostAgent | undefined,
): SandboxModeRead {
  if (!policy || typeof policy.resolve !== 'function') return { mode: 'unavailable' };
  try {
    const resolved = policy.resolve(agent ? { session: agent.session } : {});
    const mode = SANDBOX_MODES.find((m) => m === resolved?.mode);
    if (!mode) return { mode: 'unavailable' };
    return typeof resolved.workspaceRoot === 'string'
      ? { mode, workspaceRoot: resolved.workspaceRoot }
      : { mode };
  } catch {
    return { mode: 'unavailable' };
  }
}

export type ApprovalMode = 'never' | 'generated-and-local' | 'always';

/**
 * Whether a run of this trust class needs a gate. Full access means no gate at all: there DSH's
 * approval policy is `never` and `request` auto-rejects, which denied every run of the earlier
 * plugin for its full-access users. Otherwise the configured approval mode decides.
 */
export function needsApproval(
  mode: ApprovalMode,
  trust: ApprovalRequest['trust'],
  sandbox: SandboxModeRead['mode'],
): boolean {
  if (sandbox === 'danger-full-access') return false;
  if (mode === 'never') return false;
  if (mode === 'always') return true;
  return trust !== 'trusted-package';
}

export interface DshApproverOptions {
  readonly approval: HostApproval | undefined;
  readonly sandboxPolicy?: HostSandboxPolicy | undefined;
  readonly agent: HostAgent;
  readonly mode: ApprovalMode;
  /** The tool name shown in DSH's approval prompt. */
  readonly toolName: string;
}

/** The engine's `Approver` port over `ctx.approval`, gated by sandbox mode and approval mode. */
export function createDshApprover(options: DshApproverOptions): Approver & {
  readonly lastOutcome: () => string | undefined;
} {
  let last: string | undefined;
  return {
    lastOutcome: () => last,
    async request(request, signal): Promise<ApprovalDecision> {
      const sandbox = resolveSandboxMode(options.sandboxPolicy, options.agent).mode;
      if (!needsApproval(options.mode, request.trust, sandbox)) {
        last = 'not-required';
        return 'allowed';
      }
      if (!options.approval || typeof options.approval.request !== 'function') {
        last = 'unavailable';
        return 'unavailable';
      }
      try {
        const outcome = await options.approval.request({
          agent: options.agent,
          toolName: options.toolName,
          reason: request.summary,
          signal,
        });
        last = outcome;
        if (outcome === 'allowed-once') return 'allowed';
        if (outcome === 'rejected' || outcome === 'cancelled') return outcome;
        return 'unavailable';
      } catch {
        last = 'unavailable';
        return signal.aborted ? 'cancelled' : 'unavailable';
      }
    },
  };
}

/** Why a question got no answer, as `confirmWithUser` reports it (`declined` aside). */
export type QuestionFailureReason = 'unavailable' | 'delegated' | 'cancelled' | 'failed';

/** A failed optional-service call: the one failure shape `{ ok: false, error: { code, message } }`. */
export type ServiceFailure<C extends DshErrorCode = DshErrorCode> = Failure<C>;

export type QuestionOutcome =
  | {
      readonly ok: true;
      readonly answers: ReadonlyMap<string, { selected: string[]; custom?: string }>;
    }
  | ServiceFailure<(typeof REASON_CODE)[QuestionFailureReason]>;

const REASON_CODE = {
  unavailable: 'WF_DSH_SERVICE_UNAVAILABLE',
  failed: 'WF_DSH_SERVICE_FAILED',
  delegated: 'WF_DSH_QUESTION_DELEGATED',
  cancelled: 'WF_DSH_QUESTION_CANCELLED',
} as const satisfies Record<QuestionFailureReason, DshErrorCode>;

function serviceFailure<R extends QuestionFailureReason>(
  reason: R,
  message: string,
): ServiceFailure<(typeof REASON_CODE)[R]> {
  return failure(REASON_CODE[reason], message);
}

/** The reason `confirmWithUser` reports for a failed question, read back from its code. */
function reasonOf(code: DshErrorCode): QuestionFailureReason {
  const found = Object.entries(REASON_CODE).find(([, c]) => c === code);
  return (found?.[0] as QuestionFailureReason | undefined) ?? 'failed';
}

/** `ctx.userQuestions.ask` as data: "nothing can answer" is `unavailable`, not a throw. */
export async function askUser(
  questions: HostUserQuestions | undefined,
  request: { questions: HostQuestion[]; agent?: HostAgent; signal?: AbortSignal },
): Promise<QuestionOutcome> {
  if (!questions || typeof questions.ask !== 'function')
    return serviceFailure('unavailable', 'no userQuestions service is mounted');
  try {
    const answer = await questions.ask(request);
    const answers = new Map<string, { selected: string[]; custom?: string }>();
    for (const a of answer?.answers ?? []) {
      if (a && typeof a.id === 'string')
        answers.set(a.id, {
          selected: Array.isArray(a.selected)
            ? a.selected.filter((s) => typeof s === 'string')
            : [],
          ...(typeof a.custom === 'string' ? { custom: a.custom } : {}),
        });
    }
    return { ok: true, answers };
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    const message = error instanceof Error ? error.message : String(error);
    if (request.signal?.aborted) return serviceFailure('cancelled', message);
    if (code === 'NO_PROVIDER') return serviceFailure('unavailable', message);
    if (code === 'DELEGATED_CALLER') return serviceFailure('delegated', message);
    return serviceFailure('failed', message);
  }
}

/** Asks one yes/no confirmation; `confirmed` only when the human picked `yesLabel`. */
export async function confirmWithUser(
  questions: HostUserQuestions | undefined,
  input: {
    id: string;
    header: string;
    question: string;
    detail?: string;
    yesLabel: string;
    noLabel: string;
    agent?: HostAgent;
    signal?: AbortSignal;
  },
): Promise<{ confirmed: true } | { confirmed: false; reason: string; message: string }> {
  const q: HostQuestion = {
    id: input.id,
    header: input.header,
    question: input.question,
    options: [{ label: input.yesLabel }, { label: input.noLabel }],
  };
  if (input.detail !== undefined) q.detail = input.detail;
  const out = await askUser(questions, {
    questions: [q],
    ...(input.agent ? { agent: input.agent } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  if (!out.ok)
    return { confirmed: false, reason: reasonOf(out.error.code), message: out.error.message };
  const picked = out.answers.get(input.id)?.selected ?? [];
  return picked.includes(input.yesLabel)
    ? { confirmed: true }
    : { confirmed: false, reason: 'declined', message: 'the user declined' };
}

export type JobStartOutcome =
  | { readonly ok: true; readonly jobId: string }
  | ServiceFailure<'WF_DSH_SERVICE_UNAVAILABLE' | 'WF_DSH_SERVICE_FAILED'>;

/** Hands background work to `ctx.jobs`, which then owns it (and cancels it with its owner). */
export function startJob(
  jobs: HostJobs | undefined,
  spec: {
    kind: string;
    label: string;
    owner?: HostAgent;
    cancel(reason?: string): void;
    done: Promise<HostJobOutcome>;
    readOutput?(): string;
  },
): JobStartOutcome {
  if (!jobs || typeof jobs.start !== 'function')
    return serviceFailure('unavailable', 'no jobs service is mounted');
  try {
    const jobId = jobs.start({
      kind: spec.kind,
      label: spec.label,
      ...(spec.owner ? { owner: spec.owner } : {}),
      run: () => ({
        cancel: (reason?: string) => spec.cancel(reason),
        done: spec.done,
        ...(spec.readOutput ? { readOutput: spec.readOutput } : {}),
      }),
    });
    return { ok: true, jobId: String(jobId) };
  } catch (error) {
    return serviceFailure('failed', error instanceof Error ? error.message : String(error));
  }
}
