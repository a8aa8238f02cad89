// @wf/restate: durable, distributed execution of @wf runs on Restate. One run is one
// WfRun workflow invocation; its children are WfAgent invocations; the guest runs in @wf/sandbox
// exactly as with the embedded engine.
// First: the SDK reads its log level when it loads, and client.ts loads it through blobs.ts.
import './internal/sdk-setup.js';

export type { RunSubmission, SubmitOptions } from './client.js';
export { awaitRun, submitRun } from './client.js';
export type { RestateErrorCode } from './errors.js';
export { RESTATE_ERROR_CODES, RestateBackendError } from './errors.js';
export {
  AGENT_OBJECT,
  ALLOWANCE_OBJECT,
  agentKey,
  BLOB_OBJECT,
  DEPLOYMENT_KEY,
  JOURNAL_OBJECT,
  RUN_SERVICE,
  SEMAPHORE_OBJECT,
} from './internal/names.js';
export { controlRun } from './internal/control.js';
export type { RunControl } from './internal/journal-object.js';
export { probeAdmin, probeIngress } from './internal/probe.js';
export type { RestateRun } from './runs.js';
export { deleteRun, fetchRun, listRuns, runProgress } from './runs.js';
export type { AgentInvocation, AgentSettings, RunLimits } from './internal/services.js';
export type { RestateWorker, RestateWorkerOptions } from './worker.js';
export {
  DEFAULT_ANSWER_BY_REFERENCE_BYTES,
  DEFAULT_MAX_ANSWER_BYTES,
  deploymentHealth,
  registerDeployment,
  startRestateWorker,
} from './worker.js';

/** The Restate server release this package is tested against (`@restatedev/restate-server`). */
export const RESTATE_SERVER_VERSION = '1.7.12';
