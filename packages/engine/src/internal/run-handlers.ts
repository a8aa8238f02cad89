// The engine handlers behind each `wf` host call, for one scope (the run, or a nested workflow):
// they admit children, answer waits and snapshots, steer and stop, and write logs and artifacts.
import { EngineError, isRunControlError } from '../errors.js';
import type { HostCallContext, TaskInput, TaskSnapshot } from '../types.js';
import { readWorkspaceFile } from './read-file.js';
import { errorInfo, lastTextOf } from './run-agent.js';
import type { Run, RunScope, Task } from './run.js';

/** The engine handlers behind each host call, for one scope (run or nested workflow). */
export function createRunHandlers(
  run: Run,
  scope: RunScope,
): Record<string, (input: never) => Promise<unknown>> {
  return {
    spawnAgent: async (input: TaskInput) => {
      const task = run.admit(input, 'task');
      // Its driving has not reached a settled result yet (admission only queues it).
      if (scope.journaled) task.journalResult = true;
      await task.ready;
      return { taskId: task.taskId, name: task.name };
    },
    runAgent: async (input: TaskInput) => {
      const task = run.admit(input, 'task');
      try {
        await task.ready;
      } catch (e) {
        if (isRunControlError(e)) throw e;
      }
      return task.done;
    },
    wait: async (input: { taskId: string; timeoutMs?: number }) => {
      const task = need(run, input.taskId, 'wait');
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
    snapshot: async (input: { taskId: string }) => snapshotOf(need(run, input.taskId, 'snapshot')),
    output: async (input: { taskId: string }) => snapshotOf(need(run, input.taskId, 'output')),
    send: async (input: { taskId: string; text: string }) => {
      const task = need(run, input.taskId, 'send');
      if (!run.deps.agents.capabilities.steer) {
        throw new EngineError(
          'WF_ENGINE_CAPABILITY_MISSING',
          `wf.send refused: provider "${run.deps.agents.name}" cannot steer a running child (capability steer)`,
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
      run.charge('log', input.text.length, 'send');
      await task.handle.send(input.text);
      run.deps.events.emit('agent-message', {
        taskId: task.taskId,
        name: task.name,
        childId: task.handle.id,
        text: input.text,
      });
      return null;
    },
    stop: async (input: { taskId: string; reason?: string }) => {
      const task = need(run, input.taskId, 'stop');
      const reason = input.reason ?? 'stopped by the workflow';
      // invariant 6: stopping is idempotent; a child already being stopped is not stopped (and
      // logged) again, so repeated stops with long reasons cannot flood the event log.
      if (
        (task.status === 'queued' || task.status === 'running') &&
        task.stopReason === undefined
      ) {
        run.deps.events.emit('workflow-log', {
          message: `stopping ${task.taskId} (${task.name}): ${reason}`,
        });
        run.stopTask(task, reason);
      }
      return null;
    },
    synthesize: async (input: { inputs: unknown; rubric: string }) => {
      const evidence = JSON.stringify(input.inputs ?? null);
      const task = run.admit(
        {
          name: 'synthesis',
          prompt: `Synthesize the supplied evidence using this rubric: ${input.rubric}\n\nEvidence:\n${evidence}`,
          readOnly: true,
          modelHint: 'deep',
        },
        'synthesis',
      );
      run.deps.events.emit('synthesis-started', { taskId: task.taskId });
      try {
        await task.ready;
      } catch (e) {
        if (isRunControlError(e)) throw e;
      }
      const result = await task.done;
      run.deps.events.emit('synthesis-completed', {
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
    workflow: async (input: { name: string; args?: unknown }, ctx?: HostCallContext) => {
      if (scope.depth >= 1) {
        throw new EngineError(
          'WF_ENGINE_NESTING_LIMIT',
          `wf.workflow("${input.name}") refused: nested workflow "${scope.workflow}" cannot nest another (one level only)`,
        );
      }
      const resolved = run.deps.resolveWorkflow
        ? await run.deps.resolveWorkflow(input.name)
        : undefined;
      if (!resolved) {
        throw new EngineError(
          'WF_ENGINE_WORKFLOW_NOT_FOUND',
          run.deps.resolveWorkflow
            ? `wf.workflow("${input.name}"): no such workflow in the catalog`
            : `wf.workflow("${input.name}") refused: this engine has no workflow resolver`,
        );
      }
      run.deps.events.emit('nested-started', { workflow: input.name });
      try {
        const value = await run.deps.runNested(
          resolved,
          input.args ?? {},
          input.name,
          ctx?.callId ?? 0,
        );
        run.deps.events.emit('nested-completed', { workflow: input.name, status: 'completed' });
        return value;
      } catch (e) {
        run.deps.events.emit('nested-completed', {
          workflow: input.name,
          status: 'failed',
          error: errorInfo(e),
        });
        throw e;
      }
    },
    artifact: async (input: { name: string; value: unknown }) => {
      run.charge('artifact', JSON.stringify(input.value ?? null).length + input.name.length);
      const written = await run.deps.recorder.artifact(run.id, input.name, input.value);
      run.deps.events.emit('artifact-written', { name: written.name, ref: written.ref });
      return { name: written.name, path: written.ref, ref: written.ref };
    },
    log: async (input: { message: string; data?: unknown }) => {
      run.charge(
        'log',
        input.message.length + (input.data === undefined ? 0 : JSON.stringify(input.data).length),
      );
      run.deps.events.emit(
        'workflow-log',
        input.data === undefined
          ? { message: input.message }
          : { message: input.message, data: input.data },
      );
      return null;
    },
    readFile: async (input: { path: string }) => {
      if (!run.deps.workspace) {
        throw new EngineError(
          'WF_ENGINE_READ_DENIED',
          'wf.readFile refused: this engine has no workspace root',
        );
      }
      return readWorkspaceFile(
        run.deps.workspace,
        input.path,
        run.deps.limits.readFileMaxBytes,
        run.deps.readFileDeny,
        run.deps.readFileAllow,
      );
    },
    phase: async (input: { name: string; state: 'started' | 'completed' }) => {
      run.deps.events.emit(input.state === 'started' ? 'phase-started' : 'phase-completed', {
        phase: input.name,
      });
      if (input.state === 'started') run.deps.recorder.update(run.id, { phase: input.name });
      return null;
    },
  } as Record<string, (input: never) => Promise<unknown>>;
}

function need(run: Run, taskId: string, method: string): Task {
  const task = run.tasks.get(taskId);
  if (!task) {
    throw new EngineError(
      'WF_ENGINE_UNKNOWN_TASK',
      `wf.${method}("${taskId}"): no task with that id in this run`,
    );
  }
  return task;
}

function snapshotOf(task: Task): TaskSnapshot {
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
