// The sandbox's error codes (one table) and its one Error subclass. Outcomes of guest behaviour
// are data (`SandboxOutcome`); SandboxError is thrown only for bad host input or a closed sandbox.

export const SANDBOX_ERROR_CODES = {
  // Thrown to the host caller.
  WF_SANDBOX_INVALID_OPTIONS: 'createSandbox() received an invalid option',
  WF_SANDBOX_INVALID_REQUEST: 'run() received an invalid request',
  WF_SANDBOX_ARGS_NOT_JSON: 'the run arguments cannot cross the boundary as JSON',
  WF_SANDBOX_CLOSED: 'the sandbox was closed',
  // Outcome error codes.
  WF_SANDBOX_GUEST_ERROR: 'the guest run() threw or rejected',
  WF_SANDBOX_COMPILE_ERROR: 'the guest source failed to compile or its top level threw',
  WF_SANDBOX_NO_RUN: 'the guest source defines no run function',
  WF_SANDBOX_PRELUDE_ERROR: 'the trusted prelude failed to compile or threw',
  WF_SANDBOX_RESULT_NOT_JSON: 'the value run() returned cannot be serialized as JSON',
  WF_SANDBOX_RESULT_TOO_LARGE: 'the value run() returned exceeds maxResultBytes',
  WF_SANDBOX_RESULT_TOO_DEEP: 'the value run() returned nests deeper than maxJsonDepth',
  WF_SANDBOX_CPU_SLICE: 'one synchronous guest slice used more than cpuSliceMs of CPU',
  WF_SANDBOX_CPU_BUDGET: 'the run used more than cpuMs of CPU in total',
  WF_SANDBOX_WALL_TIMEOUT: 'the run exceeded wallMs',
  WF_SANDBOX_MEMORY_LIMIT: 'the guest heap exceeded memoryBytes',
  WF_SANDBOX_STACK_OVERFLOW: 'the guest exhausted its stack',
  WF_SANDBOX_DEADLOCK: 'run() can never settle',
  WF_SANDBOX_ABORTED: 'the caller aborted the run',
  WF_SANDBOX_HOST_CALL_LIMIT: 'the guest made more than maxHostCalls host calls',
  WF_SANDBOX_OUTSTANDING_LIMIT: 'the guest had more than maxOutstandingCalls host calls in flight',
  WF_SANDBOX_ARGUMENT_TOO_LARGE: 'a capability input exceeded maxArgBytes',
  WF_SANDBOX_ARGUMENT_TOO_DEEP: 'a capability input nested deeper than maxJsonDepth',
  WF_SANDBOX_ENGINE_FAULT: 'the QuickJS engine faulted; its module was replaced',
  WF_SANDBOX_WORKER_LOST: 'the worker thread running the run died or was replaced',
  WF_SANDBOX_INTERNAL: 'an internal sandbox invariant failed',
  // Codes the guest sees on rejected capability calls.
  WF_SANDBOX_HOST_ERROR: 'a capability threw an error without a valid code',
  WF_SANDBOX_HOST_RESULT_INVALID: 'a capability returned a value that cannot cross as JSON',
  WF_SANDBOX_BRIDGE_CLOSED: 'a host call was made after run() returned or the run ended',
  WF_SANDBOX_UNKNOWN_CAPABILITY: 'a host call named a capability that does not exist',
  WF_SANDBOX_BAD_CALL: 'a host call was malformed',
} as const;

export type SandboxErrorCode = keyof typeof SANDBOX_ERROR_CODES;

const BRAND = Symbol.for('@wf/sandbox.error');

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  override readonly cause?: unknown;
  readonly [BRAND] = true;

  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'SandboxError';
    this.code = code;
    if (options?.cause !== undefined) this.cause = options.cause;
  }

  /** Realm-safe check (the brand survives where `instanceof` does not). */
  static is(value: unknown): value is SandboxError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[BRAND] === true
    );
  }
}
