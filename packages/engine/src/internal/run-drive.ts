// Driving one child: pause gate and semaphores, budget reservation, launch, exactly one
// agent-started / agent-completed / dispose (invariant 7), structured output with one repair.
import { EngineError, isRunControlError } from '../errors.js';
import type { AgentHandle, AgentRequest, AgentResult } from '../ports.js';
import type { TaskResult, TaskStatus } from '../types.js';
import {
  addUsage,
  errorInfo,
  lastTextOf,
  launch,
  mapStatus,
  safeCode,
  settleWithin,
  usageOf,
  zeroUsage,
} from './run-agent.js';
import type { Run, Task } from './run.js';
import { endChild, meterFor, releaseChild, reserveChild } from './run-budget.js';
import { redactHostMessage } from './redact.js';
import { extractJson, type SchemaVerdict } from './structured.js';

export async function drive(run: Run, task: Task): Promise<void> {
  // The run's own signal: queued tasks are cancelled one by one only through stopReason (a
  // workflow never holds the id of an unpublished task), so no per-task controller is needed.
  const signal = run.abort.signal;
  const releases: (() => void)[] = [];
  let reserved = false;
  const what = `${task.taskId} (${task.name})`;
  const releaseAll = () => {
    for (const r of releases.splice(0).reverse()) r();
  };
  let handle: AgentHandle;
  try {
    // Pause blocks tasks not yet published, including those queued on a semaphore.
    for (;;) {
      await run.deps.gate.wait(signal);
      releases.push(await run.runSemaphore.acquire(signal));
      releases.push(await run.deps.deployment.acquire(signal));
      if (!run.deps.gate.paused) break;
      releaseAll();
    }
    if (task.stopReason !== undefined) {
      throw new EngineError(
        'WF_ENGINE_RUN_STOPPED',
        `${task.taskId} stopped before launch: ${task.stopReason}`,
      );
    }
    await reserveChild(run, task.taskId, task.request, what, task.sharedAdmit === true);
    reserved = true;
    try {
      handle = await launch(
        run.deps.agents,
        task.request,
        signal,
        meterFor(run, task.taskId, what),
      );
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new EngineError(
        'WF_ENGINE_AGENT_LAUNCH_FAILED',
        `${task.taskId} (${task.name}) could not be launched by provider "${run.deps.agents.name}": ${redactHostMessage(errorInfo(e).message)}`,
        { cause: e },
      );
    }
  } catch (e) {
    releaseAll();
    if (reserved) {
      // A child given up during its launch may already have spent (and reported) tokens: they
      // are in the run's cost, counted as input (the report does not tell the split).
      run.cost.inputTokens += run.allowance.chargedOf(task.taskId);
      releaseChild(run, task.taskId);
    }
    const error = errorInfo(e);
    const stopped = task.stopReason !== undefined || run.ended;
    task.status = stopped ? 'stopped' : 'failed';
    const now = Date.now();
    task.result = resultOf(
      run,
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
    if (isRunControlError(e) && !stopped) run.observe(e);
    task.rejectReady(e);
    run.childSettled(task, task.result);
    task.resolveDone(task.result);
    return;
  }

  // Published: exactly one agent-started now, exactly one agent-completed and dispose below.
  task.handle = handle;
  task.status = 'running';
  task.startedAt = Date.now();
  run.cost.started += 1;
  run.cost.active += 1;
  if (run.cost.active > run.cost.peak) run.cost.peak = run.cost.active;
  run.deps.events.emit('agent-started', {
    taskId: task.taskId,
    name: task.name,
    kind: task.kind,
    childId: handle.id,
    provider: run.deps.agents.name,
    ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
  });
  run.deps.recorder.update(run.id, {
    activeAgents: run.cost.active,
    totalSpawned: run.cost.started,
  });
  task.resolveReady();
  if (task.stopReason !== undefined) run.stopTask(task, task.stopReason);
  // A per-child wall limit: a child stuck in a retry loop is stopped and ends failed.
  const childWall = run.deps.limits.childWallMs;
  const childTimer =
    childWall === null
      ? undefined
      : setTimeout(() => {
          if (task.status !== 'running' || task.stopReason !== undefined) return;
          const message = `${task.taskId} (${task.name}) ran longer than the per-child wall limit of ${childWall} ms (limit childWallMs) and was stopped`;
          task.limitError = { code: 'WF_ENGINE_CHILD_TIMEOUT', message };
          run.stopTask(task, message);
        }, childWall);

  const raw = await awaitResult(run, task, handle);
  clearTimeout(childTimer);
  let usage = usageOf(raw);
  // Charged now, before a repair child reserves: what it spent is spent whatever comes next.
  endChild(run, task.taskId, usage);
  let result = raw;
  let repaired = false;
  if (raw.status === 'completed' && task.request.outputSchema !== undefined) {
    const checked = await checkStructured(run, task, raw, signal);
    result = checked.result;
    repaired = checked.repaired;
    usage = addUsage(usage, checked.repairUsage);
  }
  const endedAt = Date.now();
  run.cost.active -= 1;
  run.cost.completed += 1;
  run.cost.inputTokens += usage.inputTokens + usage.cacheReadTokens;
  run.cost.outputTokens += usage.outputTokens;
  // A child the budget stopped fails the run with that code, also when a backend ran it elsewhere.
  if (raw.error?.code === 'WF_ENGINE_BUDGET_EXCEEDED') run.fail(raw.error);
  if (task.limitError !== undefined && result.status !== 'completed') {
    result = { ...result, status: 'failed', error: task.limitError };
  }
  const status: TaskStatus =
    task.stopReason !== undefined && task.limitError === undefined && result.status !== 'completed'
      ? 'stopped'
      : mapStatus(result, task.request);
  task.status = status;
  task.result = resultOf(
    run,
    task,
    { ...result, status },
    task.startedAt,
    endedAt,
    handle.id,
    usage,
    repaired,
  );
  run.deps.events.emit('agent-completed', {
    taskId: task.taskId,
    name: task.name,
    kind: task.kind,
    childId: handle.id,
    status,
    usage: task.result.usage,
    ...(task.result.error ? { error: task.result.error } : {}),
  });
  run.checkSpent();
  // A provider failing (or hanging) to dispose must not hold the run; the child is accounted for.
  await settleWithin(() => handle.dispose(), run.deps.limits.stopGraceMs);
  releaseAll();
  run.deps.recorder.update(run.id, { activeAgents: run.cost.active });
  run.childSettled(task, task.result);
  task.resolveDone(task.result);
}

/** The child's result; after a stop, a child that never reports counts as stopped after a grace. */
export function awaitResult(run: Run, task: Task, handle: AgentHandle): Promise<AgentResult> {
  const grace = run.deps.limits.stopGraceMs;
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

/** Validates structured output; on failure exactly one tool-free repair child, then gives up. */
export async function checkStructured(
  run: Run,
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
    // Charged to this run: its validations take turns with other runs' in the worker queue.
    return run.deps.schemas.validate(task.request.outputSchema, candidate.value, run);
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
  if (!run.deps.agents.capabilities.toolFilter || signal.aborted || first.final)
    return { result: invalid(first.why), repaired: false };
  // The repair child is tool-free and not counted against maxAgents (at most one per task).
  const repairRequest: AgentRequest = {
    runId: run.id,
    taskId: `${task.taskId}-repair`,
    kind: 'repair',
    name: `${task.name} (repair)`,
    prompt: `Your previous answer did not match the required JSON Schema (${first.why}).\n\nSchema:\n${JSON.stringify(task.request.outputSchema)}\n\nPrevious answer:\n${raw.text.slice(0, 20_000)}\n\nReply with only the corrected JSON value.`,
    readOnly: true,
    toolFree: true,
    outputSchema: task.request.outputSchema as NonNullable<AgentRequest['outputSchema']>,
    ...(task.request.phase !== undefined ? { phase: task.request.phase } : {}),
  };
  const repairWhat = `${repairRequest.taskId} (${repairRequest.name})`;
  // The repair child draws on the budget like any child: reserved before it starts, metered.
  try {
    await reserveChild(run, repairRequest.taskId, repairRequest, repairWhat, false);
  } catch (e) {
    run.observe(e);
    return {
      result: invalid(`${first.why}; the repair child was refused: ${errorInfo(e).message}`),
      repaired: false,
    };
  }
  let handle: AgentHandle | undefined;
  try {
    handle = await run.deps.agents.start(
      repairRequest,
      signal,
      meterFor(run, repairRequest.taskId, repairWhat),
    );
  } catch (e) {
    releaseChild(run, repairRequest.taskId);
    return {
      result: invalid(`${first.why}; the repair child could not start: ${errorInfo(e).message}`),
      repaired: false,
    };
  }
  run.cost.started += 1;
  run.deps.events.emit('agent-started', {
    taskId: repairRequest.taskId,
    name: repairRequest.name,
    kind: 'repair',
    childId: handle.id,
    provider: run.deps.agents.name,
    repairOf: task.taskId,
  });
  // The per-child wall limit holds for the repair child too (it could loop like any child).
  const childWall = run.deps.limits.childWallMs;
  let timedOut = false;
  const repairTimer =
    childWall === null
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          Promise.resolve()
            .then(() => handle?.stop(`the repair child ran longer than ${childWall} ms`))
            .catch(() => {});
        }, childWall);
  let repaired: AgentResult;
  try {
    repaired = await handle.result;
  } catch (e) {
    repaired = { status: 'failed', text: '', error: errorInfo(e) };
  }
  clearTimeout(repairTimer);
  if (timedOut && repaired.status !== 'completed')
    repaired = {
      ...repaired,
      status: 'failed',
      error: {
        code: 'WF_ENGINE_CHILD_TIMEOUT',
        message: `${repairRequest.taskId} ran longer than the per-child wall limit of ${childWall} ms (limit childWallMs) and was stopped`,
      },
    };
  run.cost.completed += 1;
  const repairUsage = usageOf(repaired);
  endChild(run, repairRequest.taskId, repairUsage);
  if (repaired.error?.code === 'WF_ENGINE_BUDGET_EXCEEDED') run.fail(repaired.error);
  run.deps.events.emit('agent-completed', {
    taskId: repairRequest.taskId,
    name: repairRequest.name,
    kind: 'repair',
    childId: handle.id,
    status: repaired.status,
    usage: repairUsage,
  });
  await settleWithin(() => handle.dispose(), run.deps.limits.stopGraceMs);
  if (repaired.status !== 'completed') {
    return {
      result: invalid(
        `${first.why}; the repair child ${repaired.status}${timedOut ? ` (stopped at the per-child wall limit of ${childWall} ms)` : ''}`,
      ),
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

export function resultOf(
  run: Run,
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
    provider: run.deps.agents.name,
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
