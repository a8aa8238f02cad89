// Replay support (invariant 5): journaled calls reserve the task ids and admissions the recorded
// run gave them, rebuild host state as they are answered, spawned children settle from their
// child-result records, and children that never settled relaunch.
import type { AgentRequest, JournalEntry } from '../ports.js';
import type { TaskInput, TaskResult } from '../types.js';
import { CHILD_RESULT } from './journal.js';
import { checkTask, register } from './run-admission.js';
import { drive } from './run-drive.js';
import type { Run, Task } from './run.js';

/**
 * At issue time of a journaled call: a call that created a task consumed the next task id and
 * one admission in the recorded run, at this point of the issue order. Live calls issued while
 * replay is still delivering then get the ids the recorded run gave them (invariant 5).
 */
export function reserveReplayed(run: Run, entry: JournalEntry): void {
  if (!entry.outcome.ok) return;
  if (entry.method !== 'spawnAgent' && entry.method !== 'runAgent' && entry.method !== 'synthesize')
    return;
  const value = (entry.outcome.value as { value?: { taskId?: unknown } } | null)?.value;
  const taskId = value?.taskId;
  if (typeof taskId !== 'string' || !taskId.startsWith('task-')) return;
  const n = Number(taskId.slice('task-'.length));
  if (Number.isInteger(n) && n > run.taskSeq) run.taskSeq = n;
  run.admitted += 1;
}

/** Rebuilds host state from one journaled call being answered from the journal. */
export function applyReplay(run: Run, entry: JournalEntry): void {
  const state = (
    entry.outcome.ok ? (entry.outcome.value as { state?: unknown } | null)?.state : undefined
  ) as { spent?: number; agents?: number } | undefined;
  if (state) {
    if (typeof state.spent === 'number') run.allowance.atLeast(state.spent);
    if (typeof state.agents === 'number') run.admitted = Math.max(run.admitted, state.agents);
  }
  if (!entry.outcome.ok) return;
  const value = (entry.outcome.value as { value?: unknown } | null)?.value;
  const input = entry.input as TaskInput;
  switch (entry.method) {
    case 'spawnAgent': {
      const v = value as { taskId: string };
      if (run.tasks.has(v.taskId)) break;
      const task = registerReplayed(run, v.taskId, input, 'task');
      // Relaunched after replay, it journals its result again when it settles.
      task.journalResult = true;
      const recorded = run.pendingChildResults.get(v.taskId);
      if (recorded) {
        run.pendingChildResults.delete(v.taskId);
        settleReplayed(run, task, recorded);
      }
      break;
    }
    case CHILD_RESULT: {
      // The child settled in the recorded run, whether or not the guest had waited for it: it
      // is answered from here, never launched again (its tokens were spent once).
      const r = value as TaskResult;
      if (!r || typeof r.taskId !== 'string') break;
      const task = run.tasks.get(r.taskId);
      if (task) settleReplayed(run, task, r);
      // Recorded before its spawnAgent answer: applied when that answer is replayed.
      else if (run.pendingChildResults.size < run.maxAgents)
        run.pendingChildResults.set(r.taskId, r);
      break;
    }
    case 'runAgent':
    case 'wait': {
      const r = value as TaskResult;
      if (!r || typeof r.taskId !== 'string') break;
      const task = run.tasks.get(r.taskId) ?? registerReplayed(run, r.taskId, input, 'task');
      settleReplayed(run, task, r);
      break;
    }
    case 'synthesize': {
      const v = value as { taskId?: string; text: string };
      if (typeof v.taskId !== 'string') break;
      const task =
        run.tasks.get(v.taskId) ??
        registerReplayed(
          run,
          v.taskId,
          { name: 'synthesis', prompt: 'replayed', readOnly: true },
          'synthesis',
        );
      settleReplayed(run, task, {
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
      run.deps.events.emit('workflow-log', {
        message: v.message,
        ...(v.data !== undefined ? { data: v.data } : {}),
        replayed: true,
      });
      break;
    }
    case 'phase': {
      const v = entry.input as { name?: unknown; state?: unknown };
      run.deps.events.emit(v.state === 'started' ? 'phase-started' : 'phase-completed', {
        phase: v.name,
        replayed: true,
      });
      break;
    }
    case 'artifact': {
      const v = entry.input as { name: string; value: unknown };
      run
        .track(
          run.deps.recorder.artifact(run.id, v.name, v.value).then((written) => {
            run.deps.events.emit('artifact-written', {
              name: written.name,
              ref: written.ref,
              replayed: true,
            });
          }),
        )
        .catch(() => {});
      break;
    }
  }
}

export function registerReplayed(
  run: Run,
  taskId: string,
  input: TaskInput,
  kind: 'task' | 'synthesis',
): Task {
  let request: AgentRequest;
  try {
    request = checkTask(run, input, kind, taskId);
  } catch {
    request = {
      runId: run.id,
      taskId,
      kind,
      name: String(input?.name ?? taskId),
      prompt: String(input?.prompt ?? ''),
      readOnly: true,
    };
  }
  return register(run, request, input, kind);
}

export function settleReplayed(run: Run, task: Task, result: TaskResult): void {
  if (task.result) return;
  task.status = result.status;
  task.result = { ...result, origin: 'replayed' };
  run.cost.cacheHits += 1;
  run.deps.events.emit('cache-hit', {
    taskId: task.taskId,
    name: task.name,
    status: result.status,
  });
  task.resolveReady();
  task.resolveDone(task.result);
}

/**
 * After replay: children the journal saw spawned but never saw settle (no wait, runAgent or
 * child-result record) are launched again.
 */
export function relaunchUnfinished(run: Run): void {
  run.pendingChildResults.clear();
  for (const task of run.tasks.values()) {
    if (task.status === 'queued' && !task.result) run.track(drive(run, task)).catch(() => {});
  }
}
