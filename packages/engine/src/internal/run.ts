// One run's host-side state: admission (limits, budget, capabilities), run control (fail, stop,
// observe), output charges and quiescence. The handlers behind every `wf` call, child admission,
// driving (invariant 7) and replay live in the run-*.ts modules, which take the Run first.
import { RunAllowance } from '../allowance.js';
import type { DeploymentSemaphore, SharedAllowance } from '../backend.js';
import { EngineError, isRunControlError } from '../errors.js';
import type {
  AgentHandle,
  AgentProvider,
  AgentRequest,
  JournalEntry,
  RunCost,
  RunRecorder,
} from '../ports.js';
import type {
  EngineLimits,
  ResolvedWorkflow,
  TaskInput,
  TaskResult,
  TaskStatus,
} from '../types.js';
import { tighter, WARN_RATIO } from '../limits.js';
import type { EventLog } from './event-log.js';
import { checkTask, register } from './run-admission.js';
import { drive } from './run-drive.js';
import { createRunHandlers } from './run-handlers.js';
import { applyReplay, relaunchUnfinished, reserveReplayed } from './run-replay.js';
import { createSemaphore, type Gate, type Semaphore } from './semaphore.js';
import type { SchemaCheck } from './structured.js';

export interface RunScope {
  /** 0 for the run itself, 1 inside `wf.workflow`. */
  readonly depth: number;
  readonly workflow: string;
  /** The scope's calls go through the run's journal (not a nested workflow run inside it). */
  readonly journaled?: boolean;
}

export interface Task {
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
  /** Set when a per-child limit stopped the child: it ends failed with this error. */
  limitError?: { code: string; message: string };
  /** Admitted while the run shares its agent count with a tree (a durable backend's nesting). */
  sharedAdmit?: boolean;
  /**
   * A wf.spawnAgent child of a journaled scope: its result is journaled when it settles (a
   * `child-result` record), since the guest may wait for it only after a stop or crash.
   */
  journalResult?: boolean;
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
  /** The run id the guest sees (wf.runId): a resumed run's logical run, a nested run's parent. */
  readonly guestRunId: string;
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
  readonly deployment: DeploymentSemaphore;
  readonly schemas: SchemaCheck;
  readonly workspace?: string;
  /** Roots `wf.readFile` refuses besides `.dsh/` (run store, catalog). */
  readonly readFileDeny?: readonly string[];
  /** Subtrees of `.dsh/` the app wrote for workflows to read (never inside a deny root). */
  readonly readFileAllow?: readonly string[];
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  /** Runs a nested source workflow in the same run (fresh sandbox, depth 1), or on the backend. */
  readonly runNested: (
    workflow: ResolvedWorkflow,
    args: unknown,
    name: string,
    callId: number,
  ) => Promise<unknown>;
}

export class Run {
  readonly id: string;
  /** The id the guest sees as wf.runId (RunDeps.guestRunId). */
  readonly guestRunId: string;
  readonly deps: RunDeps;
  readonly abort = new AbortController();
  readonly runSemaphore: Semaphore;
  readonly maxAgents: number;
  readonly budgetTotal: number | null;
  /** This run's tokens: reservations, charges as children spend, the budget's gate. */
  readonly allowance: RunAllowance;
  /** The run tree's allowance on a durable backend (its budget, or its nesting's agent count). */
  shared: SharedAllowance | undefined;
  /** Children are also admitted into `shared` (the run is, or has started, a nested run). */
  sharesAgents = false;
  /** The seeding of `shared` with the children admitted before sharing began. */
  seeded: Promise<void> | undefined;
  /** Children admitted so far (maxAgents counts these). */
  admitted = 0;
  calls = 0;
  fatal: { code: string; message: string } | undefined;
  stopReason: string | undefined;
  /** The highest task number issued (live or replayed): the next id is task-<taskSeq + 1>. */
  taskSeq = 0;
  readonly tasks = new Map<string, Task>();
  /** Journals a spawned child's result when it settles live (set by the journaled execution). */
  recordChild: ((task: Task, result: TaskResult) => void) | undefined;
  /** Replayed child results whose spawnAgent answer has not been replayed yet (run-replay.ts). */
  readonly pendingChildResults = new Map<string, TaskResult>();
  private readonly live = new Set<Promise<unknown>>();
  /** Child and token counters (costReport); updated by run-drive.ts and run-replay.ts. */
  readonly cost = {
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
    this.guestRunId = deps.guestRunId;
    this.deps = deps;
    const m = deps.manifest;
    this.maxAgents = Math.min(m.maxAgents, deps.limits.maxAgents);
    this.runSemaphore = createSemaphore(
      Math.max(1, Math.min(m.maxConcurrency, deps.limits.maxConcurrency, this.maxAgents)),
    );
    // The manifest's own budget and the deployment's default budget: the tighter applies.
    this.budgetTotal = tighter(m.tokenBudget, deps.limits.tokenBudget);
    this.allowance = new RunAllowance({ budget: this.budgetTotal });
  }

  /** Tokens charged so far (children ended and running, nested runs, a resume's replayed part). */
  get spent(): number {
    return this.allowance.spent();
  }

  /** What running children still hold of their reservations. */
  get reserved(): number {
    return this.allowance.reserved();
  }

  private readonly warned = new Set<string>();

  /** One `limit-warning` event per limit, the first time WARN_RATIO of it is used. */
  warn(limit: 'tokenBudget' | 'wallMs', used: number, max: number, message: string): void {
    if (this.warned.has(limit) || this.ended) return;
    this.warned.add(limit);
    this.deps.events.emit('limit-warning', {
      limit,
      used,
      max,
      ratio: WARN_RATIO,
      message,
    });
  }

  /** Called whenever `spent` grows: warns at WARN_RATIO of the token budget. */
  checkSpent(): void {
    const total = this.budgetTotal;
    if (total !== null && this.spent >= total * WARN_RATIO) {
      this.warn(
        'tokenBudget',
        this.spent,
        total,
        `${this.spent} of the run's token budget of ${total} tokens spent (${Math.floor((this.spent / total) * 100)}%)`,
      );
    }
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
    // A child that is still running is refused its next model call, whatever its provider does
    // with the stop below. (A durable backend closes its shared allowance itself, once the run's
    // end is final: a halt may only end one attempt, which the backend retries.)
    this.allowance.close({
      code: this.fatal?.code ?? 'WF_ENGINE_RUN_STOPPED',
      message: `the run ended (${this.fatal ? this.fatal.message : reason}): no further model call`,
    });
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
  charge(kind: 'log' | 'artifact', bytes: number, method: string = kind): void {
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

  /** The engine handlers behind each host call, for one scope (run or nested workflow). */
  handlers(scope: RunScope): Record<string, (input: never) => Promise<unknown>> {
    return createRunHandlers(this, scope);
  }

  // ---------------------------------------------------------------- admission

  /** Checks a task against capabilities and limits, registers it and starts driving it. */
  admit(input: TaskInput, kind: 'task' | 'synthesis', replayTaskId?: string): Task {
    const request = checkTask(this, input, kind, replayTaskId);
    if (replayTaskId === undefined) {
      if (this.admitted >= this.maxAgents) {
        throw new EngineError(
          'WF_ENGINE_AGENT_LIMIT',
          `${kind === 'synthesis' ? 'wf.synthesize' : 'wf.spawnAgent'} "${input.name}" refused: the run already has ${this.admitted} children, its maxAgents is ${this.maxAgents}`,
        );
      }
      this.admitted += 1;
    }
    const task = register(this, request, input, kind);
    if (this.sharesAgents && replayTaskId === undefined) task.sharedAdmit = true;
    this.track(drive(this, task)).catch(() => {});
    return task;
  }

  /** Stops one child: by the run's halt, the wf.stop handler, or drive() for a late stop. */
  stopTask(task: Task, reason: string): void {
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

  /** Called by drive() once a child's result is final, before any waiter sees it. */
  childSettled(task: Task, result: TaskResult): void {
    if (task.journalResult) this.recordChild?.(task, result);
  }

  // ---------------------------------------------------------------- replay support (run-replay.ts)

  /** Called by the journal at issue time of a journaled call. */
  reserveReplayed(entry: JournalEntry): void {
    reserveReplayed(this, entry);
  }

  /** Called by the journal when a journaled call is answered from it. */
  applyReplay(entry: JournalEntry): void {
    applyReplay(this, entry);
  }

  /** Called by the journal once replay has drained. */
  relaunchUnfinished(): void {
    relaunchUnfinished(this);
  }
}
