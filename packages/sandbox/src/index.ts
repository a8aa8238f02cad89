// @wf/sandbox: run untrusted JavaScript in QuickJS/WebAssembly worker threads against the
// capabilities you choose. The table of contents of the package.
export { createSandbox } from './sandbox.js';
export { SANDBOX_ERROR_CODES, SandboxError } from './errors.js';
export type { SandboxErrorCode } from './errors.js';
export { DEFAULT_LIMITS } from './default-limits.js';
// Thread CPU clocks (Linux schedstat), for hosts that bound their own helper threads in CPU time.
export { taskCpuMs, threadTaskId } from './internal/cpu-clock.js';
export type {
  Capability,
  CapabilityContext,
  Sandbox,
  SandboxFailureStatus,
  SandboxLimits,
  SandboxOptions,
  SandboxOutcome,
  SandboxOutcomeError,
  SandboxRequest,
  SandboxStats,
} from './types.js';
