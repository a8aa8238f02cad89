// @wf/bridge: the wf capability API contract (capsule/manifest/args schemas, wf methods, author types).
// It imports only the @wf/errors kit: it describes the contract, it does not run code.

export type {
  CapsuleDraft,
  CapsuleInputs,
  CapsuleIntent,
  CapsuleProvenance,
  CapsuleRequires,
  ParseCapsuleOptions,
  ParseCapsuleResult,
  WorkflowCapsule,
} from './capsule.js';
export { createCapsule, parseCapsule } from './capsule.js';
export type { ValidateArgsResult } from './args.js';
export { validateArgs } from './args.js';
export type { EnvironmentRequirement, IsolationMode, ModelHint, PatternId } from './constants.js';
export {
  CAPSULE_FORMAT,
  CAPSULE_VERSION,
  DOCUMENT_LIMITS,
  ENVIRONMENT_REQUIREMENTS,
  ISOLATION_MODES,
  MODEL_HINTS,
  PATTERN_IDS,
  WORKFLOW_API_VERSION,
  WORKFLOW_NAME_PATTERN,
} from './constants.js';
export type { BridgeErrorCode, BridgeErrorIssue, WorkflowApiCode } from './errors.js';
export {
  BRIDGE_ERROR_CODES,
  BridgeError,
  bridgeErrorFromIssues,
  WORKFLOW_API_CODES,
} from './errors.js';
export type {
  InputArraySchema,
  InputObjectSchema,
  InputSchema,
  InputStringSchema,
} from './input-schema.js';
export { INPUT_SCHEMA_TYPES } from './input-schema.js';
export type { JsonValue } from './json-value.js';
export type {
  ManifestLimits,
  ParseManifestOptions,
  ParseManifestResult,
  WorkflowManifest,
} from './manifest.js';
export {
  DEFAULTED_MANIFEST_FIELDS,
  manifestSchema,
  parseManifest,
  withManifestDefaults,
} from './manifest.js';
export type {
  ArtifactRef,
  EvidenceRef,
  JsonSchemaObject,
  LogEvent,
  ParallelOptions,
  PipelineStage,
  SynthesizeInput,
  TaskFailure,
  TaskHandle,
  TaskInput,
  TaskResult,
  TaskSnapshot,
  TaskStatus,
  TaskUsage,
  TaskVerification,
  TaskVerificationOutcome,
  WaitOptions,
  WorkflowApi,
  WorkflowBudget,
  WorkflowErrorInfo,
  WorkflowRun,
} from './api.js';
export type { CallContext, HostCallName, ValidateCallResult } from './calls.js';
export {
  CALL_LIMITS,
  CALL_SCHEMAS,
  EVIDENCE_PREFIXES,
  taskInputSchema,
  validateCall,
} from './calls.js';
export type { WfMethod, WfMethodKind, WfMethodName } from './methods.js';
export { WF_HOST_CALLS, WF_METHODS } from './methods.js';
export type {
  CallSignal,
  CallValidation,
  HostCall,
  HostCallContext,
  HostCapability,
  HostDispatchOptions,
  HostEnvelope,
  HostHandler,
  HostHandlers,
  HostRunState,
} from './dispatch/dispatch.js';
export { createHostDispatch, HOST_CALLS } from './dispatch/dispatch.js';
export type { GuestPreludeInit } from './prelude/prelude.js';
export type { RunControlData } from './run-control.js';
export {
  isRunControlError,
  RUN_CONTROL_CHECK_SOURCE,
  withRunControlData,
} from './run-control.js';
export { createGuestPrelude } from './prelude/prelude.js';
export type {
  JournalEntry,
  RunCost,
  RunEvent,
  RunEventType,
  RunFinishRecord,
  RunRecorder,
  RunStartRecord,
  RunStatus,
  TerminalRunStatus,
  Trust,
} from './run-records.js';
export type { RunSpan } from './run-span.js';
export { isTerminalEventType, runSpan } from './run-span.js';
export type { TerminalTextLayout } from './terminal-text.js';
export { terminalText } from './terminal-text.js';
export type { ValidationIssue } from './validation-issue.js';
