// @wf/dsh-adapter: the engine's ports over the DSH host, read structurally (no runtime
// `@deepseek-ai/*` imports). See README.md for guarantees and non-guarantees.
export { DSH_ERROR_CODES, DshAdapterError, type DshErrorCode } from './errors.js';
export type {
  HostAgent,
  HostApproval,
  HostApprovalOutcome,
  HostContentBlock,
  HostJobOutcome,
  HostJobs,
  HostQuestion,
  HostSandboxPolicy,
  HostSession,
  HostSessionEvent,
  HostSubagentCapabilities,
  HostSubagentProvider,
  HostSubagentResult,
  HostSubagentRun,
  HostSubagentStartRequest,
  HostRequestHooks,
  HostSubagents,
  HostTools,
  HostUserMessage,
  HostUserQuestions,
  SandboxMode,
} from './host.js';
export {
  type ChildActivity,
  type ChildToolCall,
  type ChildUsage,
  detectEventsAccessor,
  type EventsAccessor,
  readSessionEvents,
  type SessionEventsRead,
  summarizeChildEvents,
  textOfBlocks,
} from './session-events.js';
export {
  createNativeRunEvents,
  NATIVE_EVENT_FIELDS,
  NATIVE_EVENT_TYPES,
  type NativeAgentOutcome,
  type NativeRunEvents,
  type NativeStopReason,
  nativeStopReason,
} from './native-events.js';
export {
  type ApprovalMode,
  askUser,
  confirmWithUser,
  createDshApprover,
  type DshApproverOptions,
  type JobStartOutcome,
  needsApproval,
  type QuestionFailureReason,
  type QuestionOutcome,
  type ServiceFailure,
  resolveSandboxMode,
  type SandboxModeRead,
  startJob,
} from './services.js';
export {
  collectEvidence,
  type Evidence,
  evaluateVerification,
  fingerprintWorkspace,
  MUTATION_TOOLS,
  READ_TOOLS,
  type VerificationOutcome,
  type WorkspaceFingerprint,
} from './verification.js';
export {
  detectHostFacts,
  detectUserInteraction,
  type HostFactsOptions,
} from './host-facts.js';
export {
  countModelCalls,
  createDshAgentProvider,
  DEFAULT_READ_ONLY_TOOLS,
  dshEstimateTokens,
  type DshAgentProvider,
  type DshAgentProviderOptions,
  MAX_VERIFICATION_REPAIRS,
  readOnlyAllowList,
  type TierRoute,
} from './provider.js';
