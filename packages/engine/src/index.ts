// @wf/engine: runs. Lifecycle, scheduling, limits, budget, events, journal replay; simulated
// agents (the embedded default provider) and an in-memory recorder.

export type {
  AllowanceChild,
  AllowanceRefusal,
  AllowanceState,
} from './allowance.js';
export { estimateTokens, RunAllowance } from './allowance.js';
export type {
  BackendJournal,
  DeploymentSemaphore,
  ExecutionBackend,
  NestedRunCall,
  NestedScope,
  SharedAllowance,
} from './backend.js';
export { createEngine, DEFAULT_ENGINE_LIMITS } from './engine.js';
export type { EngineErrorCode } from './errors.js';
export { ENGINE_ERROR_CODES, EngineError, isRunControlError, RUN_CONTROL_CODES } from './errors.js';
export type { MemoryRecorder, RecordedRun } from './memory-recorder.js';
export { createMemoryRecorder } from './memory-recorder.js';
export type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
  AgentUsage,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  JournalEntry,
  JsonSchema,
  MeterRefusal,
  ModelTier,
  ProviderCapabilities,
  RunCost,
  RunEvent,
  RunEventType,
  RunFinishRecord,
  RunRecorder,
  RunStartRecord,
  RunStatus,
  Trust,
  VerificationRequest,
} from './ports.js';
export type {
  SimulatedAgentStats,
  SimulatedAgents,
  SimulatedAgentsOptions,
  SimulatedResponse,
} from './simulated-agents.js';
export {
  createSimulatedAgents,
  SIMULATED_ANSWER_LIMITS,
  sampleFromSchema,
  simulatedTokens,
} from './simulated-agents.js';
export type { SmokeOptions, SmokeResult } from './smoke.js';
export { smokeRun } from './smoke.js';
export type {
  Engine,
  EngineLimits,
  EngineOptions,
  HostCallContext,
  HostFacts,
  HostWorkflowApi,
  ResolvedWorkflow,
  ResumeOptions,
  RunDone,
  RunHandle,
  SandboxLike,
  SourceCheck,
  StartOptions,
  TaskFailure,
  TaskInput,
  TaskResult,
  TaskSnapshot,
  TaskStatus,
  WorkflowInput,
} from './types.js';
