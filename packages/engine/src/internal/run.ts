// One run's host-side state and the handlers behind every `wf` call: admission (limits, budget,
// capabilities), scheduling (pause gate, run and deployment semaphores), children (exactly one
// start/end event and one dispose each, invariant 7), structured output and quiescence.
import { EngineError, isRunControlError } from '../errors.js';
import type {
  AgentHandle,
  AgentProvider,
  AgentRequest,
  AgentResult,
  JournalEntry,
  RunCost,
  RunRecorder,
} from '../ports.js';
import type {
  EngineLimits,
  ResolvedWorkflow,
  TaskInput,
  TaskResult,
  TaskSnapshot,
  TaskStatus,
} from '../types.js';
import type { EventLog } from './event-log.js';
import { readWorkspaceFile } from './read-file.js';
import { redactHostMessage } from './redact.js';
import { createSemaphore, type Gate, type Semaphore } from './semaphore.js';
import { extractJson, type SchemaCheck, type SchemaVerdict } from './structured.js';

export interface RunScope {
  /** 0 for the run itself, 1 inside `wf.workflow`. */
  readonly depth: number;
  readonly workflow: string;
}

interface Task {
  readonly taskId: string;
  readonly name: string;
  readonly kind: 'task' | 'synthesis';
  readonly input: TaskInput;
  readonly request: AgentRequest;
  status: 'queued' | 'running' | TaskStatus;
  handle?: AgentHandle;
  result?: TaskResult;
  startedAt?: number;
  stopReason?: string;
  /** Set while the child runs: starts the grace period after a stop. */
  onStop?: () => void;
  readonly done: Promise<TaskResult>;
  resolveDone(result: TaskResult): void;
  /** Resolves once the child is published (spawnAgent's answer); rejects if it never is. */
  readonly ready: Promise<void>;
  resolveReady(): void;
  rejectReady(error: unknown): void;
}

export interface RunDeps {
  readonly runId: string;
  readonly workflow: string;
  readonly manifest: {
    readonly readOnly: boolean;
    readonly maxAgents: number;
    readonly maxConcurrency: number;
    readonly tokenBudget?: number;
  };
  readonly limits: EngineLimits;
  readonly agents: AgentProvider;
  readonly recorder: RunRecorder;
  readonly events: EventLog;
  readonly gate: Gate;
  readonly deployment: Semaphore;
  readonly schemas: SchemaCheck;
  readonly workspace?: string;
  /** Roots `wf.readFile` refuses besides `.dsh/` (run store, catalog). */
  readonly readFileDeny?: readonly string[];
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  /** Runs a nested source workflow in the same run (fresh sandbox, depth 1). */
  readonly runNested: (workflow: ResolvedWorkflow, args: unknown, name: string) => Promise<unknown>;
}

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

export class Run {
  readonly id: string;
  readonly deps: RunDeps;
  readonly abort = new AbortController();
  readonly runSemaphore: Semaphore;
  readonly maxAgents: number;
  readonly budgetTotal: number | null;
  spent = 0;
  reserved = 0;
  /** Children admitted so far (maxAgents counts these). */
  admitted = 0;
  calls = 0;
  fatal: { code: string; message: string } | undefined;
  stopReason: string | undefined;
  private taskSeq = 0;
  readonly tasks = new Map<string, Task>();
  private readonly live = new Set<Promise<unknown>>();
  private readonly cost = {
    started: 0,
    completed: 0,
    cacheHits: 0,
    inputTokens: 0,
    outputTokens: 0,
    active: 0,
    peak: 0,
  };
  private readonly startedAt = Date.now();

  constructor(deps: RunDeps) {
    this.id = deps.runId;
    this.deps = deps;
    const m = deps.manifest;
    this.maxAgents = Math.min(m.maxAgents, deps.limits.maxAgents);
    this.runSemaphore = createSemaphore(
      Math.max(1, Math.min(m.maxConcurrency, deps.limits.maxConcurrency, this.maxAgents)),
    );
    this.budgetTotal = m.tokenBudget ?? null;
  }

  get ended(): boolean {
    return this.fatal !== undefined || this.stopReason !== undefined;
  }

  state(): { spent: number; reserved: number; agents: number } {
    return { spent: this.spent, reserved: this.reserved, agents: this.admitted };
  }

  /** Records a run-control failure (first one wins) and stops everything (invariant 2). */
  fail(error: { code: string; message: string }): void {
    if (this.ended) return;
    this.fatal = { code: error.code, message: error.message };
    this.halt(`run failed: ${error.code}`);
  }

  stop(reason: string): void {
    if (this.ended) return;
    this.stopReason = reason;
    this.halt(reason);
  }

  /** Aborting the run signal closes the sandbox bridge (the VM run's signal) and queued launches. */
  private halt(reason: string): void {
    this.abort.abort(new EngineError('WF_ENGINE_RUN_STOPPED', `the run was stopped: ${reason}`));
    for (const task of this.tasks.values()) this.stopTask(task, reason);
  }

  /** Checks a thrown error; run-control errors fail the run even if the workflow catches them. */
  observe(error: unknown): void {
    if (isRunControlError(error)) {
      const e = error as { code?: unknown; message?: unknown };
      this.fail({
        code: typeof e.code === 'string' ? e.code : 'WF_ENGINE_HOST_ERROR',
        message: typeof e.message === 'string' ? e.message : 'run-control error',
      });
    }
  }

  /** Every accepted call is counted against maxCalls before it has any effect. */
  admitCall(method: string): void {
    if (this.ended) {
      throw new EngineError(
        'WF_ENGINE_RUN_STOPPED',
        `wf.${method} refused: the run has ended (${this.fatal?.code ?? this.stopReason})`,
      );
    }
    this.calls += 1;
    if (this.calls > this.deps.limits.maxCalls) {
      throw new EngineError(
        'WF_ENGINE_INVALID_CALL',
        `wf.${method} refused: the run made more than ${this.deps.limits.maxCalls} wf calls (limit maxCalls)`,
      );
    }
  }

  private logBytes = 0;
  private artifactBytes = 0;

  /** Logs and artifacts land in the run store: a flood of them is cut by a per-run byte limit. */
  private charge(kind: 'log' | 'artifact', bytes: number, method: string = kind): void {
    const limit = kind === 'log' ? this.deps.limits.maxLogBytes : this.deps.limits.maxArtifactBytes;
    const used = (kind === 'log' ? this.logBytes : this.artifactBytes) + bytes;
    if (used > limit) {
      throw new EngineError(
        'WF_ENGINE_OUTPUT_LIMIT',
        `wf.${method} refused: the run would write ${used} bytes of ${kind}s, more than its limit of ${limit} (${kind === 'log' ? 'maxLogBytes' : 'maxArtifactBytes'})`,
      );
    }
    if (kind === 'log') this.logBytes = used;
    else this.artifactBytes = used;
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.live.add(p);
    const drop = () => this.live.delete(p);
    p.then(drop, drop);
    return p;
  }

  /** Invariant 3: resolves when every child and every tracked host effect has settled. */
  async quiesce(): Promise<void> {
    while (this.live.size > 0) await Promise.allSettled([...this.live]);
  }

  costReport(): RunCost {
    const c = this.cost;
    return {
      wallClockDurationMs: Date.now() - this.startedAt,
      agentsStarted: c.started,
      agentsCompleted: c.completed,
      cacheHits: c.cacheHits,
      tokenUsage: {
        inputTokens: c.inputTokens,
        outputTokens: c.outputTokens,
        totalTokens: c.inputTokens + c.outputTokens,
      },
      peakConcurrency: c.peak,
    };
  }

  // ---------------------------------------------------------------- handlers

  /** The engine handlers behind each host call, for one scope (run or nested workflow). */
  handlers(scope: RunScope): Record<string, (input: never) => Promise<unknown>> {
    return {
      spawnAgent: async (input: TaskInput) => {
        const task = this.admit(input, 'task');
        await task.ready;
        return { taskId: task.taskId, name: task.name };
      },
      runAgent: async (input: TaskInput) => {
        const task = this.admit(input, 'task');
        try {
          await task.ready;
        } catch (e) {
          if (isRunControlError(e)) throw e;
        }
        return task.done;
      },
      wait: async (input: { taskId: string; timeoutMs?: number }) => {
        const task = this.need(input.taskId, 'wait');
        if (input.timeoutMs === undefined) return task.done;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new EngineError(
                  'WF_ENGINE_WAIT_TIMEOUT',
                  `wf.wait("${input.taskId}") timed out after ${input.timeoutMs} ms`,
                ),
              ),
            input.timeoutMs,
          );
        });
        try {
          return await Promise.race([task.done, timeout]);
        } finally {
          clearTimeout(timer);
        }
      },
      snapshot: async (input: { taskId: string }) =>
        this.snapshotOf(this.need(input.taskId, 'snapshot')),
      output: async (input: { taskId: string }) =>
        this.snapshotOf(this.need(input.taskId, 'output')),
      send: async (input: { taskId: string; text: string }) => {
        const task = this.need(input.taskId, 'send');
        if (!this.deps.agents.capabilities.steer) {
          throw new EngineError(
            'WF_ENGINE_CAPABILITY_MISSING',
            `wf.send refused: provider "${this.deps.agents.name}" cannot steer a running child (capability steer)`,
          );
        }
        if (task.status !== 'running' || !task.handle?.send) {
          throw new EngineError(
            'WF_ENGINE_STEER_UNAVAILABLE',
            `wf.send("${task.taskId}") refused: the child is ${task.status}, not running`,
          );
        }
        // invariant 6: every sent text is also recorded in the event log (agent-message), so a
        // send flood counts against maxLogBytes like wf.log does.
        this.charge('log', input.text.length, 'send');
        await task.handle.send(input.text);
        this.deps.events.emit('agent-message', {
          taskId: task.taskId,
          name: task.name,
          childId: task.handle.id,
          text: input.text,
        });
        return null;
      },
      stop: async (input: { taskId: string; reason?: string }) => {
        const task = this.need(input.taskId, 'stop');
        const reason = input.reason ?? 'stopped by the workflow';
        // invariant 6: stopping is idempotent; a child already being stopped is not stopped (and
        // logged) again, so repeated stops with long reasons cannot flood the event log.
        if (
          (task.status === 'queued' || task.status === 'running') &&
          task.stopReason === undefined
        ) {
          this.deps.events.emit('workflow-log', {
            message: `stopping ${task.taskId} (${task.name}): ${reason}`,
          });
          this.stopTask(task, reason);
        }
        return null;
      },
      synthesize: async (input: { inputs: unknown; rubric: string }) => {
        const evidence = JSON.stringify(input.inputs ?? null);
        const task = this.admit(
          {
            name: 'synthesis',
            prompt: `Synthesize the supplied evidence using this rubric: ${input.rubric}\n\nEvidence:\n${evidence}`,
            readOnly: true,
            modelHint: 'deep',
          },
          'synthesis',
        );
        this.deps.events.emit('synthesis-started', { taskId: task.taskId });
        try {
          await task.ready;
        } catch (e) {
          if (isRunControlError(e)) throw e;
        }
        const result = await task.done;
        this.deps.events.emit('synthesis-completed', {
          taskId: task.taskId,
          status: result.status,
        });
        if (result.status === 'failed' || result.status === 'stopped') {
          throw new EngineError(
            'WF_ENGINE_SYNTHESIS_FAILED',
            `wf.synthesize: the synthesis child ${result.status}${result.error ? `: ${result.error.message}` : ''}`,
            { data: { taskId: task.taskId } },
          );
        }
        return { text: result.finalText, taskId: task.taskId };
      },
      workflow: async (input: { name: string; args?: unknown }) => {
        if (scope.depth >= 1) {
          throw new EngineError(
            'WF_ENGINE_NESTING_LIMIT',
            `wf.workflow("${input.name}") refused: nested workflow "${scope.workflow}" cannot nest another (one level only)`,
          );
        }
        const resolved = this.deps.resolveWorkflow
          ? await this.deps.resolveWorkflow(input.name)
          : undefined;
        if (!resolved) {
          throw new EngineError(
            'WF_ENGINE_WORKFLOW_NOT_FOUND',
            this.deps.resolveWorkflow
              ? `wf.workflow("${input.name}"): no such workflow in the catalog`
              : `wf.workflow("${input.name}") refused: this engine has no workflow resolver`,
          );
        }
        this.deps.events.emit('nested-started', { workflow: input.name });
        try {
          const value = await this.deps.runNested(resolved, input.args ?? {}, input.name);
          this.deps.events.emit('nested-completed', { workflow: input.name, status: 'completed' });
          return value;
        } catch (e) {
          this.deps.events.emit('nested-completed', {
            workflow: input.name,
            status: 'failed',
            error: errorInfo(e),
          });
          throw e;
        }
      },
      artifact: async (input: { name: string; value: unknown }) => {
        this.charge('artifact', JSON.stringify(input.value ?? null).length + input.name.length);
        const written = await this.deps.recorder.artifact(this.id, input.name, input.value);
        this.deps.events.emit('artifact-written', { name: written.name, ref: written.ref });
        return { name: written.name, path: written.ref, ref: written.ref };
      },
      log: async (input: { message: string; data?: unknown }) => {
        this.charge(
          'log',
          input.message.length + (input.data === undefined ? 0 : JSON.stringify(input.data).length),
        );
        this.deps.events.emit(
          'workflow-log',
          input.data === undefined
            ? { message: input.message }
            : { message: input.message, data: input.data },
        );
        return null;
      },
      readFile: async (input: { path: string }) => {
        if (!this.deps.workspace) {
          throw new EngineError(
            'WF_ENGINE_READ_DENIED',
            'wf.readFile refused: this engine has no workspace root',
          );
        }
        return readWorkspaceFile(
          this.deps.workspace,
          input.path,
          this.deps.limits.readFileMaxBytes,
          this.deps.readFileDeny,
        );
      },
      phase: async (input: { name: string; state: 'started' | 'completed' }) => {
        this.deps.events.emit(input.state === 'started' ? 'phase-started' : 'phase-completed', {
          phase: input.name,
        });
        if (input.state === 'started') this.deps.recorder.update(this.id, { phase: input.name });
        return null;
      },
    } as Record<string, (input: never) => Promise<unknown>>;
  }

  private need(taskId: string, method: string): Task {
    const task = this.tasks.get(taskId);
    if (!task) {
      throw new EngineError(
        'WF_ENGINE_UNKNOWN_TASK',
        `wf.${method}("${taskId}"): no task with that id in this run`,
      );
    }
    return task;
  }

  private snapshotOf(task: Task): TaskSnapshot {
    const r = task.result;
    const lastText = (task.handle ? lastTextOf(task.handle) : undefined) ?? r?.finalText;
    return {
      taskId: task.taskId,
      name: task.name,
      status: task.status,
      ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
      ...(task.handle ? { childId: task.handle.id } : {}),
      ...(lastText !== undefined ? { lastText } : {}),
      ...(r ? { finalText: r.finalText } : {}),
      ...(r && r.structured !== undefined ? { structured: r.structured } : {}),
      ...(task.startedAt !== undefined ? { startedAt: task.startedAt } : {}),
      ...(r ? { endedAt: r.endedAt } : {}),
    };
  }

  // ---------------------------------------------------------------- admission

  /** Checks a task against capabilities and limits, registers it and starts driving it. */
  admit(input: TaskInput, kind: 'task' | 'synthesis', replayTaskId?: string): Task {
    const request = this.checkTask(input, kind, replayTaskId);
    if (replayTaskId === undefined) {
      if (this.admitted >= this.maxAgents) {
        throw new EngineError(
          'WF_ENGINE_AGENT_LIMIT',
          `${kind === 'synthesis' ? 'wf.synthesize' : 'wf.spawnAgent'} "${input.name}" refused: the run already has ${this.admitted} children, its maxAgents is ${this.maxAgents}`,
        );
      }
      this.admitted += 1;
    }
    const task = this.register(request, input, kind);
    this.track(this.drive(task)).catch(() => {});
    return task;
  }

  private checkTask(
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
        `${where} refused before launch: ${field} needs provider capability ${capability}, which "${this.deps.agents.name}" lacks`,
        { data: { field, capability } },
      );
    if (typeof input.name !== 'string' || input.name.length === 0)
      throw invalid('name', 'must be a non-empty string');
    if (typeof input.prompt !== 'string' || input.prompt.length === 0)
      throw invalid('prompt', 'must be a non-empty string');
    const caps = this.deps.agents.capabilities;
    const manifestReadOnly = this.deps.manifest.readOnly;
    if (manifestReadOnly && input.readOnly === false) {
      throw invalid('readOnly', 'is false, but the workflow manifest is readOnly');
    }
    const readOnly = input.readOnly ?? manifestReadOnly;
    if (readOnly && !caps.toolFilter) throw missing('toolFilter', 'readOnly');
    if (input.outputSchema !== undefined) {
      if (!caps.outputSchema) throw missing('outputSchema', 'outputSchema');
      const compiled = this.deps.schemas.compile(input.outputSchema);
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
      if (ref.startsWith('task_id:') && !this.tasks.has(ref.slice('task_id:'.length))) {
        throw invalid('evidenceRefs', `entry "${ref}" names no task of this run`);
      }
    }
    const taskId = replayTaskId ?? `task-${this.taskSeq + 1}`;
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
      runId: this.id,
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

  private register(request: AgentRequest, input: TaskInput, kind: 'task' | 'synthesis'): Task {
    const n = Number(request.taskId.slice('task-'.length));
    if (Number.isInteger(n) && n > this.taskSeq) this.taskSeq = n;
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
    this.tasks.set(task.taskId, task);
    return task;
  }

  private stopTask(task: Task, reason: string): void {
    if (task.status === 'queued') {
      // drive() checks this before launching; a run stop also aborts the run signal it waits on
      task.stopReason = reason;
    } else if (task.status === 'running' && task.handle) {
      task.stopReason = reason;
      Promise.resolve()
        .then(() => task.handle?.stop(reason))
        .catch(() => {});
      task.onStop?.();
    }
  }

  // ---------------------------------------------------------------- driving one child

  private async drive(task: Task): Promise<void> {
    // The run's own signal: queued tasks are cancelled one by one only through stopReason (a
    // workflow never holds the id of an unpublished task), so no per-task controller is needed.
    const signal = this.abort.signal;
    const releases: (() => void)[] = [];
    let allocation = 0;
    const releaseAll = () => {
      for (const r of releases.splice(0).reverse()) r();
    };
    let handle: AgentHandle;
    try {
      // Pause blocks tasks not yet published, including those queued on a semaphore.
      for (;;) {
        await this.deps.gate.wait(signal);
        releases.push(await this.runSemaphore.acquire(signal));
        releases.push(await this.deps.deployment.acquire(signal));
        if (!this.deps.gate.paused) break;
        releaseAll();
      }
      if (task.stopReason !== undefined) {
        throw new EngineError(
          'WF_ENGINE_RUN_STOPPED',
          `${task.taskId} stopped before launch: ${task.stopReason}`,
        );
      }
      allocation = this.reserve(task);
      try {
        handle = await launch(this.deps.agents, task.request, signal);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        throw new EngineError(
          'WF_ENGINE_AGENT_LAUNCH_FAILED',
          `${task.taskId} (${task.name}) could not be launched by provider "${this.deps.agents.name}": ${redactHostMessage(errorInfo(e).message)}`,
          { cause: e },
        );
      }
    } catch (e) {
      releaseAll();
      this.reserved -= allocation;
      const error = errorInfo(e);
      const stopped = task.stopReason !== undefined || this.ended;
      task.status = stopped ? 'stopped' : 'failed';
      const now = Date.now();
      task.result = this.resultOf(
        task,
        {
          status: task.status,
          text: '',
          error:
            stopped && !isRunControlError(e)
              ? { code: 'WF_ENGINE_RUN_STOPPED', message: task.stopReason ?? error.message }
              : error,
        },
        now,
        now,
        undefined,
      );
      if (isRunControlError(e) && !stopped) this.observe(e);
      task.rejectReady(e);
      task.resolveDone(task.result);
      return;
    }

    // Published: exactly one agent-started now, exactly one agent-completed and dispose below.
    task.handle = handle;
    task.status = 'running';
    task.startedAt = Date.now();
    this.cost.started += 1;
    this.cost.active += 1;
    if (this.cost.active > this.cost.peak) this.cost.peak = this.cost.active;
    this.deps.events.emit('agent-started', {
      taskId: task.taskId,
      name: task.name,
      kind: task.kind,
      childId: handle.id,
      provider: this.deps.agents.name,
      ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
    });
    this.deps.recorder.update(this.id, {
      activeAgents: this.cost.active,
      totalSpawned: this.cost.started,
    });
    task.resolveReady();
    if (task.stopReason !== undefined) this.stopTask(task, task.stopReason);

    const raw = await this.awaitResult(task, handle);
    let usage = usageOf(raw);
    let result = raw;
    let repaired = false;
    if (raw.status === 'completed' && task.request.outputSchema !== undefined) {
      const checked = await this.checkStructured(task, raw, signal);
      result = checked.result;
      repaired = checked.repaired;
      usage = addUsage(usage, checked.repairUsage);
    }
    const endedAt = Date.now();
    this.cost.active -= 1;
    this.cost.completed += 1;
    this.cost.inputTokens += usage.inputTokens + usage.cacheReadTokens;
    this.cost.outputTokens += usage.outputTokens;
    this.reserved -= allocation;
    this.spent += usage.totalTokens;
    const status: TaskStatus =
      task.stopReason !== undefined && result.status !== 'completed'
        ? 'stopped'
        : mapStatus(result, task.request);
    task.status = status;
    task.result = this.resultOf(
      task,
      { ...result, status },
      task.startedAt,
      endedAt,
      handle.id,
      usage,
      repaired,
    );
    this.deps.events.emit('agent-completed', {
      taskId: task.taskId,
      name: task.name,
      kind: task.kind,
      childId: handle.id,
      status,
      usage: task.result.usage,
      ...(task.result.error ? { error: task.result.error } : {}),
    });
    // A provider failing (or hanging) to dispose must not hold the run; the child is accounted for.
    await settleWithin(() => handle.dispose(), this.deps.limits.stopGraceMs);
    releaseAll();
    this.deps.recorder.update(this.id, { activeAgents: this.cost.active });
    task.resolveDone(task.result);
  }

  /** The child's result; after a stop, a child that never reports counts as stopped after a grace. */
  private awaitResult(task: Task, handle: AgentHandle): Promise<AgentResult> {
    const grace = this.deps.limits.stopGraceMs;
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;
      const finish = (r: AgentResult) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        delete task.onStop;
        resolve(r);
      };
      task.onStop = () => {
        timer ??= setTimeout(
          () =>
            finish({
              status: 'stopped',
              text: lastTextOf(handle) ?? '',
              error: {
                code: 'WF_ENGINE_RUN_STOPPED',
                message: `${task.taskId} (${task.name}) did not report within ${grace} ms of being stopped`,
              },
            }),
          grace,
        );
      };
      Promise.resolve(handle.result).then(finish, (e: unknown) =>
        finish({ status: 'failed', text: '', error: errorInfo(e) }),
      );
      if (task.stopReason !== undefined) task.onStop();
    });
  }

  private reserve(task: Task): number {
    if (this.budgetTotal === null) return 0;
    const allocation = task.request.maxTokens ?? this.deps.limits.defaultTaskTokens;
    if (this.spent + this.reserved + allocation > this.budgetTotal) {
      throw new EngineError(
        'WF_ENGINE_BUDGET_EXCEEDED',
        `${task.taskId} (${task.name}) refused before launch: reserving ${allocation} tokens would exceed the token budget of ${this.budgetTotal} (spent ${this.spent}, reserved ${this.reserved})`,
      );
    }
    this.reserved += allocation;
    return allocation;
  }

  /** Validates structured output; on failure exactly one tool-free repair child, then gives up. */
  private async checkStructured(
    task: Task,
    raw: AgentResult,
    signal: AbortSignal,
  ): Promise<{ result: AgentResult; repaired: boolean; repairUsage?: ReturnType<typeof usageOf> }> {
    // invariant 6: ajv compiles and validates in a schema worker, under a time and heap bound.
    const attempt = async (r: AgentResult): Promise<SchemaVerdict> => {
      const candidate =
        r.structured !== undefined
          ? { found: true as const, value: r.structured }
          : extractJson(r.text);
      if (!candidate.found)
        return { ok: false, why: 'the answer contains no JSON value', final: false };
      return this.deps.schemas.validate(task.request.outputSchema, candidate.value);
    };
    const first = await attempt(raw);
    if (first.ok) return { result: { ...raw, structured: first.value }, repaired: false };
    // invariant 6: an answer that failed its schema is not delivered (the guest never sees it,
    // so a huge invalid answer costs no crossing, journal or event copies).
    const { structured: _invalidAnswer, ...answered } = raw;
    const invalid = (why: string): AgentResult => ({
      ...answered,
      status: 'failed',
      error: {
        code: 'WF_ENGINE_OUTPUT_INVALID',
        message: `${task.taskId} (${task.name}): structured output does not match outputSchema: ${why}`,
      },
    });
    if (!this.deps.agents.capabilities.toolFilter || signal.aborted || first.final)
      return { result: invalid(first.why), repaired: false };
    // The repair child is tool-free and not counted against maxAgents (at most one per task).
    const repairRequest: AgentRequest = {
      runId: this.id,
      taskId: `${task.taskId}-repair`,
      kind: 'repair',
      name: `${task.name} (repair)`,
      prompt: `Your previous answer did not match the required JSON Schema (${first.why}).\n\nSchema:\n${JSON.stringify(task.request.outputSchema)}\n\nPrevious answer:\n${raw.text.slice(0, 20_000)}\n\nReply with only the corrected JSON value.`,
      readOnly: true,
      toolFree: true,
      outputSchema: task.request.outputSchema as NonNullable<AgentRequest['outputSchema']>,
      ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
    };
    let handle: AgentHandle | undefined;
    try {
      handle = await this.deps.agents.start(repairRequest, signal);
    } catch (e) {
      return {
        result: invalid(`${first.why}; the repair child could not start: ${errorInfo(e).message}`),
        repaired: false,
      };
    }
    this.cost.started += 1;
    this.deps.events.emit('agent-started', {
      taskId: repairRequest.taskId,
      name: repairRequest.name,
      kind: 'repair',
      childId: handle.id,
      provider: this.deps.agents.name,
      repairOf: task.taskId,
    });
    let repaired: AgentResult;
    try {
      repaired = await handle.result;
    } catch (e) {
      repaired = { status: 'failed', text: '', error: errorInfo(e) };
    }
    this.cost.completed += 1;
    const repairUsage = usageOf(repaired);
    this.deps.events.emit('agent-completed', {
      taskId: repairRequest.taskId,
      name: repairRequest.name,
      kind: 'repair',
      childId: handle.id,
      status: repaired.status,
      usage: repairUsage,
    });
    await settleWithin(() => handle.dispose(), this.deps.limits.stopGraceMs);
    if (repaired.status !== 'completed') {
      return {
        result: invalid(`${first.why}; the repair child ${repaired.status}`),
        repaired: false,
        repairUsage,
      };
    }
    const second = await attempt(repaired);
    if (!second.ok)
      return {
        result: invalid(`${first.why}; after one repair: ${second.why}`),
        repaired: false,
        repairUsage,
      };
    return {
      result: { ...raw, text: repaired.text, structured: second.value },
      repaired: true,
      repairUsage,
    };
  }

  private resultOf(
    task: Task,
    r: Pick<AgentResult, 'text' | 'structured' | 'error' | 'verification'> & { status: TaskStatus },
    startedAt: number,
    endedAt: number,
    childId: string | undefined,
    usage = zeroUsage(),
    repaired = false,
  ): TaskResult {
    // Shared by every waiter of the task: frozen at the top so one waiter cannot edit another's view.
    return Object.freeze({
      taskId: task.taskId,
      name: task.name,
      kind: task.kind,
      status: r.status,
      finalText: r.text,
      text: r.text,
      ...(r.structured !== undefined ? { structured: r.structured } : {}),
      ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
      ...(childId !== undefined ? { childId } : {}),
      ...(task.stopReason !== undefined && r.status === 'stopped'
        ? { stopReason: task.stopReason }
        : {}),
      provider: this.deps.agents.name,
      ...(r.error
        ? {
            error: {
              code: safeCode(r.error.code),
              message: redactHostMessage(String(r.error.message)),
            },
          }
        : {}),
      startedAt,
      endedAt,
      durationMs: endedAt - startedAt,
      usage,
      ...(repaired ? { repaired: true } : {}),
      ...(r.verification
        ? { verification: { ok: r.verification.ok, reasons: [...r.verification.reasons] } }
        : {}),
      origin: 'executed',
    });
  }

  // ---------------------------------------------------------------- replay support

  /**
   * At issue time of a journaled call: a call that created a task consumed the next task id and
   * one admission in the recorded run, at this point of the issue order. Live calls issued while
   * replay is still delivering then get the ids the recorded run gave them (invariant 5).
   */
  reserveReplayed(entry: JournalEntry): void {
    if (!entry.outcome.ok) return;
    if (
      entry.method !== 'spawnAgent' &&
      entry.method !== 'runAgent' &&
      entry.method !== 'synthesize'
    )
      return;
    const value = (entry.outcome.value as { value?: { taskId?: unknown } } | null)?.value;
    const taskId = value?.taskId;
    if (typeof taskId !== 'string' || !taskId.startsWith('task-')) return;
    const n = Number(taskId.slice('task-'.length));
    if (Number.isInteger(n) && n > this.taskSeq) this.taskSeq = n;
    this.admitted += 1;
  }

  /** Rebuilds host state from one journaled call being answered from the journal. */
  applyReplay(entry: JournalEntry): void {
    const state = (
      entry.outcome.ok ? (entry.outcome.value as { state?: unknown } | null)?.state : undefined
    ) as { spent?: number; agents?: number } | undefined;
    if (state) {
      if (typeof state.spent === 'number') this.spent = Math.max(this.spent, state.spent);
      if (typeof state.agents === 'number') this.admitted = Math.max(this.admitted, state.agents);
    }
    if (!entry.outcome.ok) return;
    const value = (entry.outcome.value as { value?: unknown } | null)?.value;
    const input = entry.input as TaskInput;
    switch (entry.method) {
      case 'spawnAgent': {
        const v = value as { taskId: string };
        if (!this.tasks.has(v.taskId)) this.registerReplayed(v.taskId, input, 'task');
        break;
      }
      case 'runAgent':
      case 'wait': {
        const r = value as TaskResult;
        if (!r || typeof r.taskId !== 'string') break;
        const task = this.tasks.get(r.taskId) ?? this.registerReplayed(r.taskId, input, 'task');
        this.settleReplayed(task, r);
        break;
      }
      case 'synthesize': {
        const v = value as { taskId?: string; text: string };
        if (typeof v.taskId !== 'string') break;
        const task =
          this.tasks.get(v.taskId) ??
          this.registerReplayed(
            v.taskId,
            { name: 'synthesis', prompt: 'replayed', readOnly: true },
            'synthesis',
          );
        this.settleReplayed(task, {
          ...(task.result ?? {}),
          taskId: v.taskId,
          name: 'synthesis',
          status: 'completed',
          finalText: v.text,
          text: v.text,
        } as TaskResult);
        break;
      }
      // The resumed run's own record gets what the replayed part produced: logs, phases, artifacts.
      case 'log': {
        const v = entry.input as { message?: unknown; data?: unknown };
        this.deps.events.emit('workflow-log', {
          message: v.message,
          ...(v.data !== undefined ? { data: v.data } : {}),
          replayed: true,
        });
        break;
      }
      case 'phase': {
        const v = entry.input as { name?: unknown; state?: unknown };
        this.deps.events.emit(v.state === 'started' ? 'phase-started' : 'phase-completed', {
          phase: v.name,
          replayed: true,
        });
        break;
      }
      case 'artifact': {
        const v = entry.input as { name: string; value: unknown };
        this.track(
          this.deps.recorder.artifact(this.id, v.name, v.value).then((written) => {
            this.deps.events.emit('artifact-written', {
              name: written.name,
              ref: written.ref,
              replayed: true,
            });
          }),
        ).catch(() => {});
        break;
      }
    }
  }

  private registerReplayed(taskId: string, input: TaskInput, kind: 'task' | 'synthesis'): Task {
    let request: AgentRequest;
    try {
      request = this.checkTask(input, kind, taskId);
    } catch {
      request = {
        runId: this.id,
        taskId,
        kind,
        name: String(input?.name ?? taskId),
        prompt: String(input?.prompt ?? ''),
        readOnly: true,
      };
    }
    return this.register(request, input, kind);
  }

  private settleReplayed(task: Task, result: TaskResult): void {
    if (task.result) return;
    task.status = result.status;
    task.result = { ...result, origin: 'replayed' };
    this.cost.cacheHits += 1;
    this.deps.events.emit('cache-hit', {
      taskId: task.taskId,
      name: task.name,
      status: result.status,
    });
    task.resolveReady();
    task.resolveDone(task.result);
  }

  /** After replay: children the journal saw spawned but never saw finish are launched again. */
  relaunchUnfinished(): void {
    for (const task of this.tasks.values()) {
      if (task.status === 'queued' && !task.result) this.track(this.drive(task)).catch(() => {});
    }
  }
}

/**
 * provider.start, but a launch that ignores its abort signal cannot hold the run: it is given up
 * at abort, and a child published afterwards is stopped and disposed once, never used.
 */
function launch(
  provider: AgentProvider,
  request: AgentRequest,
  signal: AbortSignal,
): Promise<AgentHandle> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    let started: Promise<AgentHandle>;
    try {
      started = Promise.resolve(provider.start(request, signal));
    } catch (e) {
      started = Promise.reject(e);
    }
    started.then(
      (handle) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          resolve(handle);
          return;
        }
        Promise.resolve()
          .then(() => handle.stop('launch aborted'))
          .catch(() => {})
          .then(() => handle.dispose())
          .catch(() => {});
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          reject(e);
        }
      },
    );
  });
}

/** Calls a port, waits for its promise but never longer than `ms`; any failure is ignored. */
async function settleWithin(call: () => unknown, ms: number): Promise<void> {
  let value: unknown;
  try {
    value = call();
  } catch {
    return;
  }
  if (typeof (value as { then?: unknown } | null | undefined)?.then !== 'function') return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.resolve(value).catch(() => {}),
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A provider's lastText() that throws or returns a non-string counts as no text. */
function lastTextOf(handle: AgentHandle): string | undefined {
  try {
    const t = handle.lastText?.();
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/** Provider codes are passed on only in the stable shape; anything else becomes a generic one. */
function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{2,63}$/.test(code)
    ? code
    : 'WF_ENGINE_AGENT_FAILED';
}

function mapStatus(r: AgentResult, request: AgentRequest): TaskStatus {
  if (r.status !== 'completed') return r.status;
  if (r.verification && !r.verification.ok) {
    return request.verification?.enforcement === 'hard' ? 'failed' : 'completed_unverified';
  }
  return 'completed';
}

function zeroUsage(): TaskResult['usage'] {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, totalTokens: 0 };
}

function usageOf(r: AgentResult): TaskResult['usage'] {
  const u = r.usage;
  const num = (x: unknown) =>
    typeof x === 'number' && Number.isFinite(x) && x > 0 ? Math.floor(x) : 0;
  const inputTokens = num(u?.inputTokens);
  const outputTokens = num(u?.outputTokens);
  const cacheReadTokens = num(u?.cacheReadTokens);
  return {
    inputTokens,
    outputTokens,
    cacheReadTokens,
    totalTokens: inputTokens + outputTokens + cacheReadTokens,
  };
}

function addUsage(a: TaskResult['usage'], b: TaskResult['usage'] | undefined): TaskResult['usage'] {
  if (!b) return a;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

export function errorInfo(e: unknown): { code: string; message: string } {
  if (typeof e === 'object' && e !== null) {
    const x = e as { code?: unknown; message?: unknown };
    return {
      code: typeof x.code === 'string' ? x.code : 'WF_ENGINE_HOST_ERROR',
      message: typeof x.message === 'string' ? x.message : String(e),
    };
  }
  return { code: 'WF_ENGINE_HOST_ERROR', message: String(e) };
}
