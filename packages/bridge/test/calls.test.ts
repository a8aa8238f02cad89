// validateCall: every host call's input, accepted and refused, with messages naming method and field.
import { describe, expect, it } from 'vitest';
import {
  CALL_SCHEMAS,
  createHostDispatch,
  HOST_CALLS,
  type TaskInput,
  validateCall,
  WF_HOST_CALLS,
  WF_METHODS,
} from '../src/index.js';

function refused(method: string, input: unknown, context?: Parameters<typeof validateCall>[2]) {
  const result = validateCall(method, input, context);
  if (result.ok) throw new Error(`expected wf.${method} to be refused`);
  return result.issues;
}

const task: TaskInput = { name: 'reviewer-1', prompt: 'Review the parser.' };

describe('WF_METHODS', () => {
  it('lists every member once, with a kind', () => {
    const names = WF_METHODS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([
      'runId',
      'args',
      'budget',
      'phase',
      'runAgent',
      'spawnAgent',
      'wait',
      'snapshot',
      'output',
      'send',
      'stop',
      'parallel',
      'pipeline',
      'synthesize',
      'workflow',
      'artifact',
      'log',
      'readFile',
      'lastFailure',
    ]);
    expect(WF_METHODS.filter((m) => m.kind === 'agent').map((m) => m.name)).toEqual([
      'runAgent',
      'spawnAgent',
      'synthesize',
      'workflow',
    ]);
    expect(Object.isFrozen(WF_METHODS)).toBe(true);
    expect(Object.isFrozen(WF_METHODS[0])).toBe(true);
  });

  it('has exactly one input schema per host call', () => {
    expect([...WF_HOST_CALLS].sort()).toEqual(Object.keys(CALL_SCHEMAS).sort());
  });

  it('agrees with the capabilities the host dispatcher builds', () => {
    expect([...HOST_CALLS].sort()).toEqual([...WF_HOST_CALLS].sort());
    expect(Object.keys(createHostDispatch({})).sort()).toEqual([...WF_HOST_CALLS].sort());
  });
});

describe('validateCall: method names', () => {
  it('refuses an unknown method, listing the host calls', () => {
    expect(refused('spawn', task)).toEqual([
      {
        path: 'method',
        message:
          'wf.spawn is not a wf method (host calls: phase, runAgent, spawnAgent, wait, snapshot, output, send, stop, synthesize, workflow, artifact, log, readFile)',
      },
    ]);
  });

  it('refuses a member answered inside the sandbox', () => {
    expect(refused('parallel', {})).toEqual([
      { path: 'method', message: 'wf.parallel is answered inside the sandbox, not by a host call' },
    ]);
  });

  it('does not treat inherited names as methods', () => {
    expect(refused('toString', {})[0]?.path).toBe('method');
    expect(refused('__proto__', {})[0]?.path).toBe('method');
  });
});

describe('validateCall: task input (spawnAgent, runAgent)', () => {
  it('accepts the minimal and the full task and returns a copy', () => {
    const full: TaskInput = {
      ...task,
      phase: 'review',
      scopeSummary: 'src/parser',
      constraints: ['cite lines'],
      readOnly: false,
      subagentType: 'spawn',
      modelHint: 'deep',
      provider: 'deepseek',
      model: 'deepseek-reasoner',
      isolation: 'worktree',
      effort: 'high',
      maxTokens: 384_000,
      evidenceRefs: ['file:src/a.ts', 'diff:HEAD~1', 'finding:F-1', 'task_id:task-1'],
      verification: {
        enforcement: 'hard',
        requiresMutation: true,
        requiredChangedPaths: ['src/a.ts'],
        requiredReadPaths: ['src/b.ts'],
        minFinalTextChars: 0,
        rejectPreparatoryFinalText: true,
      },
      outputSchema: {
        type: 'object',
        properties: { finding: { type: 'string' } },
        required: ['finding'],
      },
      terseResult: true,
    };
    for (const method of ['spawnAgent', 'runAgent']) {
      const result = validateCall(method, full);
      expect(result).toEqual({ ok: true, value: full });
      if (result.ok) expect(result.value).not.toBe(full);
    }
    expect(validateCall('runAgent', task)).toEqual({ ok: true, value: task });
  });

  it.each([
    [
      { ...task, modelHint: 'powerful' },
      'input.modelHint',
      'must be one of fast, balanced, deep (got "powerful")',
    ],
    [
      { ...task, isolation: 'container' },
      'input.isolation',
      'must be one of shared-cwd, worktree (got "container")',
    ],
    [{ ...task, maxTokens: 0 }, 'input.maxTokens', 'must be a positive integer (got 0)'],
    [{ ...task, maxTokens: 1.5 }, 'input.maxTokens', 'must be a positive integer (got 1.5)'],
    [{ ...task, readOnly: 'yes' }, 'input.readOnly', 'must be a boolean (got "yes")'],
    [{ ...task, terseResult: 1 }, 'input.terseResult', 'must be a boolean (got 1)'],
    [{ ...task, name: '' }, 'input.name', 'must not be empty or blank'],
    [{ ...task, name: 'x'.repeat(201) }, 'input.name', 'must be at most 200 characters (got 201)'],
    [{ ...task, prompt: 42 }, 'input.prompt', 'must be a string (got 42)'],
    [
      { ...task, constraints: 'be brief' },
      'input.constraints',
      'must be an array (got "be brief")',
    ],
    [{ ...task, constraints: ['ok', ''] }, 'input.constraints[1]', 'must not be empty or blank'],
    [
      { ...task, evidenceRefs: ['src/a.ts'] },
      'input.evidenceRefs[0]',
      'must start with file:, diff:, finding:, task_id: followed by a reference (got "src/a.ts")',
    ],
    [
      { ...task, evidenceRefs: ['file:'] },
      'input.evidenceRefs[0]',
      'must start with file:, diff:, finding:, task_id: followed by a reference (got "file:")',
    ],
    [
      { ...task, verification: { enforcement: 'strict' } },
      'input.verification.enforcement',
      'must be one of hard, warn (got "strict")',
    ],
    [
      { ...task, verification: { minFinalTextChars: -1 } },
      'input.verification.minFinalTextChars',
      'must be a non-negative integer (got -1)',
    ],
    [
      { ...task, verification: { requiredReadPaths: [3] } },
      'input.verification.requiredReadPaths[0]',
      'must be a string (got 3)',
    ],
    [
      { ...task, verification: { mustPass: true } },
      'input.verification.mustPass',
      'is not a known field (allowed: enforcement, requiresMutation, requiredChangedPaths, requiredReadPaths, minFinalTextChars, rejectPreparatoryFinalText)',
    ],
    [
      { ...task, outputSchema: { type: 'array' } },
      'input.outputSchema',
      'must have type "object" at the root (got type "array")',
    ],
    [
      { ...task, outputSchema: { properties: {} } },
      'input.outputSchema',
      'must have type "object" at the root (got type undefined)',
    ],
    [
      { ...task, outputSchema: 'object' },
      'input.outputSchema',
      'must be a JSON Schema object (got "object")',
    ],
    [
      { ...task, target: { agentId: 'a' } },
      'input.target',
      'is not a known field (allowed: name, prompt, phase, scopeSummary, constraints, readOnly, subagentType, modelHint, provider, model, isolation, effort, maxTokens, evidenceRefs, verification, outputSchema, terseResult)',
    ],
  ])('refuses %j at %s', (input, path, message) => {
    expect(refused('runAgent', input)).toEqual([
      { path, message: `wf.runAgent: ${path} ${message}` },
    ]);
  });

  it('names the required fields and every problem at once', () => {
    expect(refused('spawnAgent', { modelHint: 'huge', extra: 1 })).toEqual([
      { path: 'input.name', message: 'wf.spawnAgent: input.name is required' },
      { path: 'input.prompt', message: 'wf.spawnAgent: input.prompt is required' },
      {
        path: 'input.modelHint',
        message: 'wf.spawnAgent: input.modelHint must be one of fast, balanced, deep (got "huge")',
      },
      expect.objectContaining({ path: 'input.extra' }),
    ]);
  });

  it('refuses a non-object input', () => {
    expect(refused('runAgent', 'do it')).toEqual([
      { path: 'input', message: 'wf.runAgent: input must be an object (got "do it")' },
    ]);
    expect(refused('runAgent', [task])).toEqual([
      { path: 'input', message: 'wf.runAgent: input must be an object (got an array of 1)' },
    ]);
  });

  it('checks task_id refs against the run when the context knows its tasks', () => {
    const taskIds = new Set(['task-1']);
    const input = { ...task, evidenceRefs: ['task_id:task-1', 'file:x', 'task_id:task-9'] };
    expect(refused('runAgent', input, { taskIds })).toEqual([
      {
        path: 'input.evidenceRefs[2]',
        message:
          'wf.runAgent: input.evidenceRefs[2] must name a task of this run (no task "task-9")',
      },
    ]);
    expect(
      validateCall('runAgent', { ...task, evidenceRefs: ['task_id:task-1'] }, { taskIds }).ok,
    ).toBe(true);
  });

  it('refuses non-JSON values in any field', () => {
    expect(refused('runAgent', { ...task, maxTokens: Number.NaN })).toEqual([
      {
        path: 'input.maxTokens',
        message: 'wf.runAgent: input.maxTokens must be a finite number (got NaN)',
      },
    ]);
    expect(
      refused('runAgent', { ...task, outputSchema: { type: 'object', default: () => 1 } }),
    ).toEqual([
      {
        path: 'input.outputSchema.default',
        message: 'wf.runAgent: input.outputSchema.default must be a JSON value (got a function)',
      },
    ]);
  });
});

describe('validateCall: the other host calls', () => {
  it.each([
    ['phase', { name: 'review', state: 'started' }],
    ['phase', { name: 'review', state: 'completed' }],
    ['wait', { taskId: 'task-1' }],
    ['wait', { taskId: 'task-1', timeoutMs: 60_000 }],
    ['snapshot', { taskId: 'task-1' }],
    ['output', { taskId: 'task-1' }],
    ['send', { taskId: 'task-1', text: 'focus on tests' }],
    ['stop', { taskId: 'task-1' }],
    ['stop', { taskId: 'task-1', reason: 'enough findings' }],
    ['synthesize', { inputs: [{ a: 1 }, null], rubric: 'merge' }],
    ['synthesize', { inputs: null, rubric: 'merge' }],
    ['workflow', { name: 'parallel-investigation' }],
    ['workflow', { name: 'parallel-investigation', args: { question: 'why?' } }],
    ['artifact', { name: 'review-evidence', value: { findings: [] } }],
    ['log', { message: 'round 1 done' }],
    ['log', { message: '', data: { round: 1 } }],
    ['readFile', { path: 'docs/brief.md' }],
  ])('accepts %s %j', (method, input) => {
    expect(validateCall(method, input)).toEqual({ ok: true, value: input });
  });

  it.each([
    ['phase', { name: 'review' }, 'input.state', 'is required'],
    [
      'phase',
      { name: 'review', state: 'begin' },
      'input.state',
      'must be one of started, completed (got "begin")',
    ],
    ['phase', { name: '', state: 'started' }, 'input.name', 'must not be empty or blank'],
    [
      'wait',
      { taskId: 'task-1', timeoutMs: 0 },
      'input.timeoutMs',
      'must be a positive integer (got 0)',
    ],
    [
      'wait',
      { taskId: 'task-1', timeoutMs: 2 ** 31 },
      'input.timeoutMs',
      'must be at most 2147483647 (got 2147483648)',
    ],
    [
      'wait',
      { taskId: 'task-1', timeout: 5 },
      'input.timeout',
      'is not a known field (allowed: taskId, timeoutMs)',
    ],
    ['wait', {}, 'input.taskId', 'is required'],
    ['snapshot', { taskId: 7 }, 'input.taskId', 'must be a string (got 7)'],
    ['output', { taskId: ' ' }, 'input.taskId', 'must not be empty or blank'],
    ['send', { taskId: 'task-1' }, 'input.text', 'is required'],
    ['send', { taskId: 'task-1', text: '' }, 'input.text', 'must not be empty or blank'],
    ['stop', { taskId: 'task-1', reason: 5 }, 'input.reason', 'must be a string (got 5)'],
    ['synthesize', { inputs: [] }, 'input.rubric', 'is required'],
    ['synthesize', { rubric: 'merge' }, 'input.inputs', 'is required'],
    [
      'workflow',
      { name: 'Bad Name' },
      'input.name',
      'must be a workflow name (kebab-case, 1-64 characters) (got "Bad Name")',
    ],
    ['artifact', { name: 'a' }, 'input.value', 'is required'],
    ['log', { message: 3 }, 'input.message', 'must be a string (got 3)'],
    [
      'log',
      { message: 'x', level: 'info' },
      'input.level',
      'is not a known field (allowed: message, data)',
    ],
    ['readFile', { path: '' }, 'input.path', 'must not be empty or blank'],
    ['readFile', { path: 'a\0b' }, 'input.path', 'must not contain a NUL character'],
  ])('refuses %s %j at %s', (method, input, path, message) => {
    expect(refused(method, input)).toEqual([{ path, message: `wf.${method}: ${path} ${message}` }]);
  });

  it('refuses non-JSON payloads in free-form fields', () => {
    expect(refused('artifact', { name: 'a', value: { big: 10n } })).toEqual([
      {
        path: 'input.value.big',
        message: 'wf.artifact: input.value.big must be a JSON value (got a bigint)',
      },
    ]);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(refused('synthesize', { inputs: cyclic, rubric: 'r' })).toEqual([
      {
        path: 'input.inputs[0]',
        message: 'wf.synthesize: input.inputs[0] must not contain a cycle',
      },
    ]);
  });
});
