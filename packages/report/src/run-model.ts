// Folds a run's event log into the picture both the HTML report and the live progress draw:
// phases with their spans, one record per agent, token totals and concurrency over time.
// Event data is untrusted input (it comes from disk and from guest code): every field is read
// defensively and a malformed event is skipped, never thrown on.

/** The shape of one event-log line (structurally the engine's `RunEvent`). */
export interface RunEventLike {
  readonly seq: number;
  readonly runId?: string;
  readonly type: string;
  readonly time: number;
  readonly data?: { readonly [key: string]: unknown };
}

export type AgentOutcome = 'running' | 'completed' | 'failed' | 'stopped' | 'cached';

export interface TokenCount {
  input: number;
  output: number;
  total: number;
}

export interface AgentSpan {
  readonly taskId: string;
  name: string;
  kind: string;
  phase: string | undefined;
  /** The phase instance the agent ran in (PhaseSpan.id): a name can be entered many times. */
  phaseId: string | undefined;
  startedAt: number;
  endedAt: number | undefined;
  outcome: AgentOutcome;
  tokens: TokenCount;
  error: { code: string; message: string } | undefined;
}

export interface PhaseSpan {
  /** One id per time a phase is entered: the engine's `phaseId`, else `p<seq>` of its start. */
  readonly id: string;
  readonly name: string;
  readonly depth: number;
  readonly startedAt: number;
  endedAt: number | undefined;
}

export interface LogLine {
  readonly time: number;
  readonly message: string;
}

export interface RunModel {
  runId: string | undefined;
  workflow: string | undefined;
  status: string;
  startedAt: number | undefined;
  endedAt: number | undefined;
  lastTime: number | undefined;
  phases: PhaseSpan[];
  /** In start order. */
  agents: AgentSpan[];
  tokens: TokenCount;
  logs: LogLine[];
  /** Step points (time, agents running from that time on), first at run start. */
  concurrency: { time: number; active: number }[];
  peakConcurrency: number;
  currentPhase: string | undefined;
  result: unknown;
  error: { code: string; message: string } | undefined;
  eventCount: number;
  skippedEvents: number;
}

const TERMINAL: Record<string, string> = {
  'workflow-completed': 'completed',
  'workflow-failed': 'failed',
  'workflow-stopped': 'stopped',
};

export function createRunModel(): RunModel {
  return {
    runId: undefined,
    workflow: undefined,
    status: 'running',
    startedAt: undefined,
    endedAt: undefined,
    lastTime: undefined,
    phases: [],
    agents: [],
    tokens: { input: 0, output: 0, total: 0 },
    logs: [],
    concurrency: [],
    peakConcurrency: 0,
    currentPhase: undefined,
    result: undefined,
    error: undefined,
    eventCount: 0,
    skippedEvents: 0,
  };
}

/** Folds a whole log; events are ordered by `seq` first so a shuffled file still draws right. */
export function foldRunEvents(events: readonly unknown[]): RunModel {
  const model = createRunModel();
  const valid = events.filter(isEventLike);
  model.skippedEvents = events.length - valid.length;
  const sorted = [...valid].sort((a, b) => a.seq - b.seq);
  for (const event of sorted) applyRunEvent(model, event);
  return model;
}

const indexes = new WeakMap<RunModel, Map<string, AgentSpan>>();

/** Applies one event in place (the live progress calls this per event). */
export function applyRunEvent(model: RunModel, event: RunEventLike): void {
  const index = agentIndex(model);
  if (!isEventLike(event)) {
    model.skippedEvents += 1;
    return;
  }
  const time = finite(event.time) ?? model.lastTime ?? 0;
  const data = isRecord(event.data) ? event.data : {};
  model.eventCount += 1;
  model.runId ??= str(event.runId);
  model.startedAt ??= time;
  model.lastTime = Math.max(model.lastTime ?? time, time);

  switch (event.type) {
    case 'workflow-started':
      model.workflow = str(data.workflow) ?? str(data.name) ?? model.workflow;
      model.startedAt = Math.min(model.startedAt, time);
      model.status = 'running';
      pushConcurrency(model, time);
      break;
    case 'workflow-paused':
      model.status = 'paused';
      break;
    case 'workflow-resumed':
      model.status = 'running';
      break;
    case 'workflow-completed':
    case 'workflow-failed':
    case 'workflow-stopped': {
      model.status = TERMINAL[event.type] ?? model.status;
      model.endedAt = time;
      if ('result' in data) model.result = data.result;
      const error = errorOf(data.error);
      if (error) model.error = error;
      closeOpen(model, time, event.type === 'workflow-completed' ? 'completed' : 'stopped');
      break;
    }
    case 'phase-started': {
      const name = str(data.name) ?? str(data.phase) ?? 'phase';
      const depth = model.phases.filter((p) => p.endedAt === undefined).length;
      const id = str(data.phaseId) ?? `p${event.seq}`;
      model.phases.push({ id, name, depth, startedAt: time, endedAt: undefined });
      model.currentPhase = name;
      break;
    }
    case 'phase-completed': {
      const name = str(data.name) ?? str(data.phase);
      for (let i = model.phases.length - 1; i >= 0; i -= 1) {
        const phase = model.phases[i];
        if (phase && phase.endedAt === undefined && (name === undefined || phase.name === name)) {
          phase.endedAt = time;
          break;
        }
      }
      const open = model.phases.filter((p) => p.endedAt === undefined);
      model.currentPhase = open[open.length - 1]?.name;
      break;
    }
    case 'agent-started':
    case 'cache-hit': {
      const taskId = str(data.taskId) ?? str(data.id);
      if (taskId === undefined) break;
      let agent = index.get(taskId);
      if (!agent) {
        const instance = phaseInstance(model, str(data.phaseId), str(data.phase));
        agent = {
          taskId,
          name: str(data.name) ?? str(data.label) ?? taskId,
          kind: str(data.kind) ?? 'task',
          phase: str(data.phase) ?? instance?.name,
          phaseId: instance?.id,
          startedAt: time,
          endedAt: undefined,
          outcome: 'running',
          tokens: { input: 0, output: 0, total: 0 },
          error: undefined,
        };
        index.set(taskId, agent);
        model.agents.push(agent);
      }
      if (event.type === 'cache-hit') {
        // One that ended in an earlier attempt of this run (the log of a run a durable engine
        // continued holds both) keeps how it ended, and its tokens are counted once.
        if (agent.endedAt !== undefined) break;
        // A replayed child never ran this time: it is drawn, but not counted as concurrent.
        agent.outcome = 'cached';
        agent.endedAt = time;
        addTokens(model, agent, data);
      } else {
        pushConcurrency(model, time);
      }
      break;
    }
    case 'agent-completed': {
      const taskId = str(data.taskId) ?? str(data.id);
      const agent = taskId === undefined ? undefined : index.get(taskId);
      if (!agent || agent.endedAt !== undefined) break;
      agent.endedAt = time;
      agent.outcome = outcomeOf(data.status, data.error);
      agent.error = errorOf(data.error);
      if (str(data.name) && agent.name === agent.taskId) agent.name = str(data.name) as string;
      addTokens(model, agent, data);
      pushConcurrency(model, time);
      break;
    }
    case 'workflow-log': {
      const message = str(data.message) ?? (typeof data.data === 'string' ? data.data : undefined);
      if (message !== undefined) model.logs.push({ time, message });
      break;
    }
    default:
      break;
  }
}

/**
 * The phase instance an agent starts in: the one the event names by id, else the innermost open
 * instance of the agent's phase name (a nested workflow's phase of the same name is inner), else,
 * for an agent without a phase name, the innermost open instance.
 */
function phaseInstance(
  model: RunModel,
  id: string | undefined,
  name: string | undefined,
): PhaseSpan | undefined {
  if (id !== undefined) {
    const byId = model.phases.find((p) => p.id === id);
    if (byId) return byId;
  }
  for (let i = model.phases.length - 1; i >= 0; i -= 1) {
    const phase = model.phases[i];
    if (phase && phase.endedAt === undefined && (name === undefined || phase.name === name))
      return phase;
  }
  return undefined;
}

/** One phase instance's own numbers: agents attributed to it, not to a phase nested inside. */
export interface PhaseStats {
  readonly phase: PhaseSpan;
  readonly durationMs: number | undefined;
  readonly agents: number;
  readonly failed: number;
  readonly tokens: number;
}

/**
 * Statistics per phase instance, in start order. Each agent counts in exactly one row (its own
 * instance), so the rows plus the agents outside any phase add up to the run's totals, however
 * often a phase is entered and however deeply workflows nest.
 */
export function phaseStats(model: RunModel): PhaseStats[] {
  const own = new Map<string, AgentSpan[]>();
  for (const agent of model.agents) {
    if (agent.phaseId === undefined) continue;
    const list = own.get(agent.phaseId);
    if (list) list.push(agent);
    else own.set(agent.phaseId, [agent]);
  }
  return model.phases.map((phase) => {
    const agents = own.get(phase.id) ?? [];
    return {
      phase,
      durationMs: phase.endedAt === undefined ? undefined : phase.endedAt - phase.startedAt,
      agents: agents.length,
      failed: agents.filter((a) => a.outcome === 'failed').length,
      tokens: agents.reduce((sum, a) => sum + a.tokens.total, 0),
    };
  });
}

function agentIndex(model: RunModel): Map<string, AgentSpan> {
  let index = indexes.get(model);
  if (!index) {
    index = new Map(model.agents.map((a) => [a.taskId, a]));
    indexes.set(model, index);
  }
  return index;
}

/**
 * The run's agents by outcome: the one count every surface prints (the report's header, the
 * plugin's run summary), so two views of one run never disagree.
 */
export function agentCounts(model: RunModel): Record<AgentOutcome, number> {
  const counts: Record<AgentOutcome, number> = {
    running: 0,
    completed: 0,
    failed: 0,
    stopped: 0,
    cached: 0,
  };
  for (const agent of model.agents) counts[agent.outcome] += 1;
  return counts;
}

export function runningAgents(model: RunModel): number {
  let n = 0;
  for (const agent of model.agents) if (agent.outcome === 'running') n += 1;
  return n;
}

function pushConcurrency(model: RunModel, time: number): void {
  const active = runningAgents(model);
  const last = model.concurrency[model.concurrency.length - 1];
  if (last && last.time === time) last.active = active;
  else if (!last || last.active !== active) model.concurrency.push({ time, active });
  if (active > model.peakConcurrency) model.peakConcurrency = active;
}

function closeOpen(model: RunModel, time: number, how: 'completed' | 'stopped'): void {
  for (const phase of model.phases) if (phase.endedAt === undefined) phase.endedAt = time;
  let changed = false;
  for (const agent of model.agents) {
    if (agent.endedAt === undefined) {
      agent.endedAt = time;
      agent.outcome = how === 'completed' ? 'completed' : 'stopped';
      changed = true;
    }
  }
  if (changed || model.concurrency.length > 0) pushConcurrency(model, time);
  model.currentPhase = undefined;
}

function addTokens(model: RunModel, agent: AgentSpan, data: Record<string, unknown>): void {
  const usage = isRecord(data.usage) ? data.usage : isRecord(data.tokens) ? data.tokens : undefined;
  if (!usage) return;
  const input = nonNegative(usage.inputTokens ?? usage.input);
  const output = nonNegative(usage.outputTokens ?? usage.output);
  const total = nonNegative(usage.totalTokens ?? usage.total) || input + output;
  agent.tokens = { input, output, total };
  model.tokens.input += input;
  model.tokens.output += output;
  model.tokens.total += total;
}

function outcomeOf(status: unknown, error: unknown): AgentOutcome {
  if (status === 'failed' || status === 'stopped' || status === 'completed') return status;
  if (typeof status === 'string' && status.startsWith('completed')) return 'completed';
  return error ? 'failed' : 'completed';
}

export function errorOf(value: unknown): { code: string; message: string } | undefined {
  if (!isRecord(value))
    return typeof value === 'string' ? { code: 'ERROR', message: value } : undefined;
  return { code: str(value.code) ?? 'ERROR', message: str(value.message) ?? '' };
}

function isEventLike(value: unknown): value is RunEventLike {
  return (
    isRecord(value) &&
    typeof value.type === 'string' &&
    typeof value.seq === 'number' &&
    Number.isFinite(value.seq)
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function nonNegative(value: unknown): number {
  const n = finite(value);
  return n !== undefined && n > 0 ? n : 0;
}
