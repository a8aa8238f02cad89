// @wf/report: a run as people read it. The fold of a run's event log (phases, one record per
// agent, tokens, concurrency), the number and duration formats, and the self-contained HTML run
// report that `wf report` and the DSH plugin's `/workflow report` both write.
export { duration, grouped, utcMinute } from './format.js';
export {
  type RunReportInput,
  type RunReportOptions,
  renderRunReport,
} from './render.js';
export {
  type AgentOutcome,
  type AgentSpan,
  agentCounts,
  applyRunEvent,
  createRunModel,
  errorOf,
  foldRunEvents,
  isRecord,
  type LogLine,
  type PhaseSpan,
  type PhaseStats,
  phaseStats,
  type RunEventLike,
  type RunModel,
  runningAgents,
  type TokenCount,
} from './run-model.js';
