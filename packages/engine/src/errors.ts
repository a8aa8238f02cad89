// The engine's error codes and its one error class. Run-control codes fail the whole run; the
// others are ordinary failures a workflow can observe and handle. The run-control marker itself
// (`data.runControl`) is defined once, in @wf/bridge.
import { isRunControlError, type RunControlData } from '@wf/bridge';
import { WfError } from '@wf/errors';

export { isRunControlError };

export const ENGINE_ERROR_CODES = {
  /** `engine.start` / `engine.resume` got options it cannot run (shape, trust class). */
  WF_ENGINE_INVALID_START: 'WF_ENGINE_INVALID_START',
  /** The manifest failed validation (preflight). */
  WF_ENGINE_INVALID_MANIFEST: 'WF_ENGINE_INVALID_MANIFEST',
  /** The args failed the manifest's inputSchema (preflight). */
  WF_ENGINE_INVALID_ARGS: 'WF_ENGINE_INVALID_ARGS',
  /** The source failed the static contract (`checkWorkflowSource`). */
  WF_ENGINE_SOURCE_REJECTED: 'WF_ENGINE_SOURCE_REJECTED',
  /** A `wf` call's input is semantically invalid (run control). */
  WF_ENGINE_INVALID_CALL: 'WF_ENGINE_INVALID_CALL',
  /** More children than the run's maxAgents (run control). */
  WF_ENGINE_AGENT_LIMIT: 'WF_ENGINE_AGENT_LIMIT',
  /** A reservation would exceed the token budget (run control). */
  WF_ENGINE_BUDGET_EXCEEDED: 'WF_ENGINE_BUDGET_EXCEEDED',
  /** `wf.workflow` called from a nested workflow (run control). */
  WF_ENGINE_NESTING_LIMIT: 'WF_ENGINE_NESTING_LIMIT',
  /** The capsule requires a git repository, and the workspace is not in one (preflight). */
  WF_ENGINE_REQUIRES_GIT_REPO: 'WF_ENGINE_REQUIRES_GIT_REPO',
  /** The capsule requires worktree isolation, which the agent provider lacks (preflight). */
  WF_ENGINE_REQUIRES_WORKTREE: 'WF_ENGINE_REQUIRES_WORKTREE',
  /** The capsule requires a tool, MCP server or skill the host does not offer (preflight). */
  WF_ENGINE_REQUIRES_TOOL: 'WF_ENGINE_REQUIRES_TOOL',
  /** The capsule requires a model tier the deployment does not route (preflight). */
  WF_ENGINE_REQUIRES_MODEL_TIER: 'WF_ENGINE_REQUIRES_MODEL_TIER',
  /** The capsule requires user interaction, and nobody can answer (preflight). */
  WF_ENGINE_REQUIRES_USER_INTERACTION: 'WF_ENGINE_REQUIRES_USER_INTERACTION',
  /** A task needs a provider capability the provider lacks (run control). */
  WF_ENGINE_CAPABILITY_MISSING: 'WF_ENGINE_CAPABILITY_MISSING',
  /** On resume, the workflow issued a call that differs from the journal (run control). */
  WF_ENGINE_REPLAY_DIVERGED: 'WF_ENGINE_REPLAY_DIVERGED',
  /** The run was stopped; further calls are refused (run control). */
  WF_ENGINE_RUN_STOPPED: 'WF_ENGINE_RUN_STOPPED',
  /** The run's optional wall limit elapsed (paused time excluded). */
  WF_ENGINE_WALL_TIMEOUT: 'WF_ENGINE_WALL_TIMEOUT',
  /** A child ran longer than the per-child wall limit (`childWallMs`) and was stopped. */
  WF_ENGINE_CHILD_TIMEOUT: 'WF_ENGINE_CHILD_TIMEOUT',
  /** `wf.wait` timed out. */
  WF_ENGINE_WAIT_TIMEOUT: 'WF_ENGINE_WAIT_TIMEOUT',
  /** A task id that this run never created. */
  WF_ENGINE_UNKNOWN_TASK: 'WF_ENGINE_UNKNOWN_TASK',
  /** `wf.send` to a child that is not running or whose provider cannot steer. */
  WF_ENGINE_STEER_UNAVAILABLE: 'WF_ENGINE_STEER_UNAVAILABLE',
  /** A child's structured output failed its schema, even after the one repair child. */
  WF_ENGINE_OUTPUT_INVALID: 'WF_ENGINE_OUTPUT_INVALID',
  /** The synthesis child of `wf.synthesize` failed or was stopped. */
  WF_ENGINE_SYNTHESIS_FAILED: 'WF_ENGINE_SYNTHESIS_FAILED',
  /** A child failed and its provider gave no stable error code. */
  WF_ENGINE_AGENT_FAILED: 'WF_ENGINE_AGENT_FAILED',
  /** The run wrote more log or artifact bytes than its limit (run control). */
  WF_ENGINE_OUTPUT_LIMIT: 'WF_ENGINE_OUTPUT_LIMIT',
  /** The provider could not launch a child. */
  WF_ENGINE_AGENT_LAUNCH_FAILED: 'WF_ENGINE_AGENT_LAUNCH_FAILED',
  /** `wf.workflow` named a workflow the resolver does not know, or no resolver is configured. */
  WF_ENGINE_WORKFLOW_NOT_FOUND: 'WF_ENGINE_WORKFLOW_NOT_FOUND',
  /** `wf.artifact` with a name already written in this run. */
  WF_ENGINE_ARTIFACT_EXISTS: 'WF_ENGINE_ARTIFACT_EXISTS',
  /** `wf.readFile` refused: no workspace, path escapes it, symlink, not a file, too large. */
  WF_ENGINE_READ_DENIED: 'WF_ENGINE_READ_DENIED',
  /** `wf.readFile` of the run store or the catalog: `.dsh/` or a configured `readFile.deny` root. */
  WF_ENGINE_READ_PROTECTED: 'WF_ENGINE_READ_PROTECTED',
  /** The workflow's result is not JSON (cycles, functions, non-finite numbers, too deep). */
  WF_ENGINE_RESULT_INVALID: 'WF_ENGINE_RESULT_INVALID',
  /** `engine.resume` could not find or use the run's record. */
  WF_ENGINE_RESUME_UNAVAILABLE: 'WF_ENGINE_RESUME_UNAVAILABLE',
  /** `engine.resume` of a run recorded with real agents on simulated ones, or the reverse. */
  WF_ENGINE_RESUME_PROVIDER_MISMATCH: 'WF_ENGINE_RESUME_PROVIDER_MISMATCH',
  /** The workflow itself threw or the sandbox ended it (memory, CPU, deadlock...). */
  WF_ENGINE_WORKFLOW_FAILED: 'WF_ENGINE_WORKFLOW_FAILED',
  /** An unexpected host-side failure (a bug or a misbehaving port). */
  WF_ENGINE_HOST_ERROR: 'WF_ENGINE_HOST_ERROR',
} as const;

export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[keyof typeof ENGINE_ERROR_CODES];

/** Codes that fail the whole run even when the workflow catches them (invariant 2). */
export const RUN_CONTROL_CODES: readonly EngineErrorCode[] = Object.freeze([
  'WF_ENGINE_INVALID_CALL',
  'WF_ENGINE_AGENT_LIMIT',
  'WF_ENGINE_BUDGET_EXCEEDED',
  'WF_ENGINE_NESTING_LIMIT',
  'WF_ENGINE_CAPABILITY_MISSING',
  'WF_ENGINE_REPLAY_DIVERGED',
  'WF_ENGINE_RUN_STOPPED',
  'WF_ENGINE_OUTPUT_LIMIT',
]);

export class EngineError extends WfError<EngineErrorCode> {
  static override readonly brand: string = '@wf/engine';

  /** JSON copied onto the guest error by the sandbox; `runControl` marks run-control errors. */
  readonly data: RunControlData;

  constructor(
    code: EngineErrorCode,
    message: string,
    options: { cause?: unknown; hint?: string; data?: { readonly [key: string]: unknown } } = {},
  ) {
    super(code, message, options);
    this.data = { ...options.data, runControl: RUN_CONTROL_CODES.includes(code) };
  }
}
