// The sandbox's error codes (one table, CODE -> CODE) and its one error class. Outcomes of guest
// behaviour are data (`SandboxOutcome`); SandboxError is thrown only for bad host input or a closed sandbox.
import { WfError } from '@wf/errors';

export const SANDBOX_ERROR_CODES = {
  // Thrown to the host caller.
  /** `createSandbox()` received an invalid option. */
  WF_SANDBOX_INVALID_OPTIONS: 'WF_SANDBOX_INVALID_OPTIONS',
  /** `run()` received an invalid request. */
  WF_SANDBOX_INVALID_REQUEST: 'WF_SANDBOX_INVALID_REQUEST',
  /** The run arguments cannot cross the boundary as JSON. */
  WF_SANDBOX_ARGS_NOT_JSON: 'WF_SANDBOX_ARGS_NOT_JSON',
  /** The sandbox was closed. */
  WF_SANDBOX_CLOSED: 'WF_SANDBOX_CLOSED',
  // Outcome error codes.
  /** The guest run() threw or rejected. */
  WF_SANDBOX_GUEST_ERROR: 'WF_SANDBOX_GUEST_ERROR',
  /** The guest source failed to compile or its top level threw. */
  WF_SANDBOX_COMPILE_ERROR: 'WF_SANDBOX_COMPILE_ERROR',
  /** The guest source defines no run function. */
  WF_SANDBOX_NO_RUN: 'WF_SANDBOX_NO_RUN',
  /** The trusted prelude failed to compile or threw. */
  WF_SANDBOX_PRELUDE_ERROR: 'WF_SANDBOX_PRELUDE_ERROR',
  /** The value run() returned cannot be serialized as JSON. */
  WF_SANDBOX_RESULT_NOT_JSON: 'WF_SANDBOX_RESULT_NOT_JSON',
  /** The value run() returned exceeds maxResultBytes. */
  WF_SANDBOX_RESULT_TOO_LARGE: 'WF_SANDBOX_RESULT_TOO_LARGE',
  /** The value run() returned nests deeper than maxJsonDepth. */
  WF_SANDBOX_RESULT_TOO_DEEP: 'WF_SANDBOX_RESULT_TOO_DEEP',
  /** One synchronous guest slice used more than cpuSliceMs of CPU. */
  WF_SANDBOX_CPU_SLICE: 'WF_SANDBOX_CPU_SLICE',
  /** The run used more than cpuMs of CPU in total. */
  WF_SANDBOX_CPU_BUDGET: 'WF_SANDBOX_CPU_BUDGET',
  /** The run exceeded wallMs. */
  WF_SANDBOX_WALL_TIMEOUT: 'WF_SANDBOX_WALL_TIMEOUT',
  /** The guest heap exceeded memoryBytes. */
  WF_SANDBOX_MEMORY_LIMIT: 'WF_SANDBOX_MEMORY_LIMIT',
  /** The guest exhausted its stack. */
  WF_SANDBOX_STACK_OVERFLOW: 'WF_SANDBOX_STACK_OVERFLOW',
  /** Run() can never settle. */
  WF_SANDBOX_DEADLOCK: 'WF_SANDBOX_DEADLOCK',
  /** The caller aborted the run. */
  WF_SANDBOX_ABORTED: 'WF_SANDBOX_ABORTED',
  /** The guest made more than maxHostCalls host calls. */
  WF_SANDBOX_HOST_CALL_LIMIT: 'WF_SANDBOX_HOST_CALL_LIMIT',
  /** The guest had more than maxOutstandingCalls host calls in flight. */
  WF_SANDBOX_OUTSTANDING_LIMIT: 'WF_SANDBOX_OUTSTANDING_LIMIT',
  /** A capability input exceeded maxArgBytes. */
  WF_SANDBOX_ARGUMENT_TOO_LARGE: 'WF_SANDBOX_ARGUMENT_TOO_LARGE',
  /** A capability input nested deeper than maxJsonDepth. */
  WF_SANDBOX_ARGUMENT_TOO_DEEP: 'WF_SANDBOX_ARGUMENT_TOO_DEEP',
  /** The QuickJS engine faulted; its module was replaced. */
  WF_SANDBOX_ENGINE_FAULT: 'WF_SANDBOX_ENGINE_FAULT',
  /** The worker thread running the run died or was replaced. */
  WF_SANDBOX_WORKER_LOST: 'WF_SANDBOX_WORKER_LOST',
  /** An internal sandbox invariant failed. */
  WF_SANDBOX_INTERNAL: 'WF_SANDBOX_INTERNAL',
  // Codes the guest sees on rejected capability calls.
  /** A capability threw an error without a valid code. */
  WF_SANDBOX_HOST_ERROR: 'WF_SANDBOX_HOST_ERROR',
  /** A capability returned a value that cannot cross as JSON. */
  WF_SANDBOX_HOST_RESULT_INVALID: 'WF_SANDBOX_HOST_RESULT_INVALID',
  /** A host call was made after run() returned or the run ended. */
  WF_SANDBOX_BRIDGE_CLOSED: 'WF_SANDBOX_BRIDGE_CLOSED',
  /** A host call named a capability that does not exist. */
  WF_SANDBOX_UNKNOWN_CAPABILITY: 'WF_SANDBOX_UNKNOWN_CAPABILITY',
  /** A host call was malformed. */
  WF_SANDBOX_BAD_CALL: 'WF_SANDBOX_BAD_CALL',
} as const;

export type SandboxErrorCode = keyof typeof SANDBOX_ERROR_CODES;

/** Thrown to the host caller; `SandboxError.is` recognises it across package copies and realms. */
export class SandboxError extends WfError<SandboxErrorCode> {
  static override readonly brand: string = '@wf/sandbox';
}
