// Admission of one child: the task input checked against the provider's capabilities, the
// manifest and the evidence rules, composed into the AgentRequest, and registered on the run.
import { EngineError } from '../errors.js';
import type { AgentRequest } from '../ports.js';
import type { TaskInput, TaskResult } from '../types.js';
import type { Run, Task } from './run.js';

const AGENT_OPTION_FIELDS = ['provider', 'model', 'maxTokens', 'effort'] as const;
/** Task fields handed to the provider as they are (the prompt is composed separately). */
const PASSED_FIELDS = [
  'phase',
  'subagentType',
  'modelHint',
  'provider',
  'model',
  'maxTokens',
  'effort',
  'isolation',
  'evidenceRefs',
  'verification',
  'outputSchema',
  'terseResult',
] as const;
const EVIDENCE_PREFIXES = ['file:', 'diff:', 'finding:', 'task_id:'];

export function checkTask(
  run: Run,
  input: TaskInput,
  kind: 'task' | 'synthesis',
  replayTaskId?: string,
): AgentRequest {
  const where = `${kind === 'synthesis' ? 'wf.synthesize' : 'task'} "${String(input.name)}"`;
  const invalid = (field: string, message: string) =>
    new EngineError('WF_ENGINE_INVALID_CALL', `${where}: ${field} ${message}`, {
      data: { field },
    });
  const missing = (capability: string, field: string) =>
    new EngineError(
      'WF_ENGINE_CAPABILITY_MISSING',
      `${where} refused before launch: ${field} needs provider capability ${capability}, which "${run.deps.agents.name}" lacks`,
      { data: { field, capability } },
    );
  if (typeof input.name !== 'string' || input.name.length === 0)
    throw invalid('name', 'must be a non-empty string');
  if (typeof input.prompt !== 'string' || input.prompt.length === 0)
    throw invalid('prompt', 'must be a non-empty string');
  const caps = run.deps.agents.capabilities;
  const manifestReadOnly = run.deps.manifest.readOnly;
  if (manifestReadOnly && input.readOnly === false) {
    throw invalid('readOnly', 'is false, but the workflow manifest is readOnly');
  }
  const readOnly = input.readOnly ?? manifestReadOnly;
  if (readOnly && !caps.toolFilter) throw missing('toolFilter', 'readOnly');
  if (input.outputSchema !== undefined) {
    if (!caps.outputSchema) throw missing('outputSchema', 'outputSchema');
    const compiled = run.deps.schemas.compile(input.outputSchema);
    if (!compiled.ok)
      throw invalid('outputSchema', `is not a usable JSON Schema: ${compiled.message}`);
  }
  if (input.isolation === 'worktree' && !caps.worktree)
    throw missing('worktree', 'isolation "worktree"');
  for (const field of AGENT_OPTION_FIELDS) {
    if (input[field] !== undefined && !caps.agentOptions) throw missing('agentOptions', field);
  }
  if (
    input.maxTokens !== undefined &&
    (!Number.isInteger(input.maxTokens) || input.maxTokens <= 0)
  ) {
    throw invalid('maxTokens', `must be a positive integer (got ${input.maxTokens})`);
  }
  for (const ref of input.evidenceRefs ?? []) {
    if (!EVIDENCE_PREFIXES.some((p) => ref.startsWith(p))) {
      throw invalid(
        'evidenceRefs',
        `entry "${ref}" must start with ${EVIDENCE_PREFIXES.join(', ')}`,
      );
    }
    if (ref.startsWith('task_id:') && !run.tasks.has(ref.slice('task_id:'.length))) {
      throw invalid('evidenceRefs', `entry "${ref}" names no task of this run`);
    }
  }
  const taskId = replayTaskId ?? `task-${run.taskSeq + 1}`;
  const parts = [input.prompt];
  if (input.scopeSummary) parts.push(`Scope: ${input.scopeSummary}`);
  if (input.constraints?.length)
    parts.push(`Constraints:\n${input.constraints.map((c) => `- ${c}`).join('\n')}`);
  if (input.evidenceRefs?.length) {
    parts.push(`Evidence references:\n${input.evidenceRefs.map((c) => `- ${c}`).join('\n')}`);
  }
  if (input.isolation === 'worktree')
    parts.push('Isolated workspace: you work in a separate git worktree.');
  if (input.terseResult) parts.push('Return only a terse final result.');
  const request: Record<string, unknown> = {
    runId: run.id,
    taskId,
    kind,
    name: input.name,
    prompt: parts.join('\n\n'),
    readOnly,
  };
  for (const key of PASSED_FIELDS) {
    const value = input[key];
    if (value !== undefined) request[key] = value;
  }
  return request as unknown as AgentRequest;
}

export function register(
  run: Run,
  request: AgentRequest,
  input: TaskInput,
  kind: 'task' | 'synthesis',
): Task {
  const n = Number(request.taskId.slice('task-'.length));
  if (Number.isInteger(n) && n > run.taskSeq) run.taskSeq = n;
  let resolveDone!: (r: TaskResult) => void;
  let resolveReady!: () => void;
  let rejectReady!: (e: unknown) => void;
  const done = new Promise<TaskResult>((r) => {
    resolveDone = r;
  });
  const ready = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => {});
  const task: Task = {
    taskId: request.taskId,
    name: request.name,
    kind,
    input,
    request,
    status: 'queued',
    done,
    resolveDone,
    ready,
    resolveReady,
    rejectReady,
  };
  run.tasks.set(task.taskId, task);
  return task;
}
