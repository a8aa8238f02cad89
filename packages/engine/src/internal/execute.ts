// Executing a run: the start record, preflight, then the Run in the sandbox (source-based) or with
// a host-side wf (trusted-local), quiescence (invariant 3) and the terminal record.
import {
  createGuestPrelude,
  createHostDispatch,
  type HostCall,
  HOST_CALLS,
  parseManifest,
  validateArgs,
} from '@wf/bridge';
import { EngineError, type EngineErrorCode, RUN_CONTROL_CODES } from '../errors.js';
import { sandboxLimits, tighter, WARN_RATIO } from '../limits.js';
import type { JournalEntry, RunCost, RunStartRecord, RunStatus } from '../ports.js';
import type { SharedAllowance } from '../backend.js';
import type { ResolvedWorkflow, RunDone, SandboxLike, StartOptions } from '../types.js';
import {
  type Cap,
  checkSource,
  emptyCost,
  type EngineState,
  issuesText,
  type RunContext,
  recordable,
  safeEmit,
  sandbox,
  sandboxError,
} from './engine-state.js';
import type { EventLog } from './event-log.js';
import { createHostApi } from './host-api.js';
import { childResultRef, isChildResult, Journal } from './journal.js';
import { cloneJson } from './json.js';
import { preflight } from './preflight.js';
import { errorInfo } from './run-agent.js';
import { Run, type RunScope } from './run.js';
import { treeKey } from './run-budget.js';

/** Runs one prepared run to its end; every way it can end goes through finishWith. */
export async function execute(e: EngineState, ctx: RunContext): Promise<RunDone> {
  const { runId, start, prepared, events, gate, wall } = ctx;
  const workflow = start.workflow;
  const source = 'source' in workflow ? workflow.source : undefined;
  const seed = start.seed ?? (Math.random() * 2 ** 31) >>> 0;
  const startTime = start.startTime ?? Date.now();
  // One clock reading for the record and the workflow-started event: durations agree everywhere.
  const startedAt = Date.now();
  const rawName = (workflow.manifest as { name?: unknown } | null)?.name;
  const name = workflow.name ?? (typeof rawName === 'string' ? rawName : 'workflow');
  const record: RunStartRecord = {
    runId,
    workflow: name,
    trust: start.trust,
    manifest: workflow.manifest,
    ...(source !== undefined ? { source } : {}),
    // the record must be storable even when the args are not JSON (preflight refuses them next)
    args: recordable(start.args ?? {}),
    seed,
    startTime,
    startedAt,
    ...(prepared.resumedFromRunId
      ? {
          resumedFromRunId: prepared.resumedFromRunId,
          resumedFrom: { runId: prepared.resumedFromRunId, at: startedAt },
          logicalRunId: prepared.logicalRunId ?? prepared.resumedFromRunId,
        }
      : {}),
    provider: e.agents.name,
    simulated: e.agents.simulated === true,
    ...(start.sourceRunId ? { sourceRunId: start.sourceRunId } : {}),
    ...(start.revisionOf ? { revisionOf: start.revisionOf } : {}),
    ...(start.requires !== undefined ? { requires: start.requires } : {}),
  };
  // The engine's sandbox (its first worker loads QuickJS on another thread) boots while the run is
  // recorded and preflighted instead of after; read once preflight passed, never left unhandled.
  const boxReady = source !== undefined ? sandbox(e) : undefined;
  boxReady?.catch(() => {});
  try {
    await e.recorder.begin(record);
  } catch (thrown) {
    return unrecordedStart(events, errorInfo(thrown));
  }
  events.emit(
    'workflow-started',
    {
      workflow: name,
      trust: start.trust,
      provider: record.provider,
      simulated: record.simulated,
      ...(record.resumedFrom
        ? { resumedFromRunId: record.resumedFrom.runId, resumedFrom: record.resumedFrom }
        : {}),
      ...(e.backend.name !== 'embedded' ? { backend: e.backend.name } : {}),
    },
    startedAt,
  );

  const checked = await preflight(e, ctx, name, source);
  if (!checked.ok) return finishWith(e, runId, undefined, events, checked.end);
  const { manifest, args } = checked;

  const box = boxReady === undefined ? undefined : await boxReady;
  const r: Run = new Run({
    runId,
    // A resumed run is the run it continues, to its guest (wf.runId): a workflow that passes its
    // run id into a call replays those calls unchanged. A nested run on a durable backend sees
    // its parent's id, as it would inside the parent.
    guestRunId: start.nested?.guestRunId ?? record.logicalRunId ?? runId,
    workflow: name,
    manifest,
    limits: {
      ...e.limits,
      maxAgents: Math.min(e.limits.maxAgents, start.limits?.maxAgents ?? e.limits.maxAgents),
      maxConcurrency: Math.min(
        e.limits.maxConcurrency,
        start.limits?.maxConcurrency ?? e.limits.maxConcurrency,
      ),
      tokenBudget: tighter(e.limits.tokenBudget, start.limits?.tokenBudget),
      childWallMs: tighter(e.limits.childWallMs, start.limits?.childWallMs),
    },
    agents: e.agents,
    recorder: e.recorder,
    events,
    gate,
    deployment: e.deployment,
    schemas: e.schemas,
    ...(e.options.workspace !== undefined ? { workspace: e.options.workspace } : {}),
    ...(e.options.readFile?.deny ? { readFileDeny: e.options.readFile.deny } : {}),
    ...(e.options.readFile?.allow ? { readFileAllow: e.options.readFile.allow } : {}),
    ...(e.options.resolveWorkflow ? { resolveWorkflow: e.options.resolveWorkflow } : {}),
    runNested: (nested, nestedArgs, nestedName, callId): Promise<unknown> =>
      runNested(e, r, nested, nestedArgs, nestedName, box, seed, startTime, callId),
  });
  // A nested run on a durable backend numbers its children after the parent's, as it would inside
  // the parent's run.
  if (start.nested) r.taskSeq = start.nested.firstTaskSeq;
  shareAllowance(e, r, start.nested);
  ctx.run = r;
  if (ctx.stopRequest !== undefined) r.stop(ctx.stopRequest);
  wall.start(
    () =>
      r.fail({
        code: 'WF_ENGINE_WALL_TIMEOUT',
        message: `the run exceeded its wall limit of ${wall.limitMs} ms (paused time excluded)`,
      }),
    (usedMs) =>
      r.warn(
        'wallMs',
        usedMs,
        wall.limitMs ?? 0,
        `${Math.round(WARN_RATIO * 100)}% of the run's wall limit of ${wall.limitMs} ms used (paused time excluded)`,
      ),
  );
  if (gate.paused) wall.pause();

  // A durable backend holds the journal: a run continued after its executor was lost replays it.
  const held = e.backend.openJournal
    ? await e.backend.openJournal(runId, (err) => r.fail(err))
    : undefined;
  if (held && held.entries.length > 0 && prepared.replay) {
    throw new EngineError(
      'WF_ENGINE_RESUME_UNAVAILABLE',
      `run ${runId} already has a journal on backend "${e.backend.name}"; resume it under a new run id`,
    );
  }
  const replay = prepared.replay ?? (held && held.entries.length > 0 ? held.entries : undefined);

  // invariant 6: each answer is journaled in full, so re-reading one large answer (wf.snapshot,
  // wf.wait) thousands of times would multiply it on disk; the run's journal is bounded.
  let journalBytes = 0;
  const journal = new Journal({
    record: (delivered, replayed) => {
      // A live answer delivered once the run halted may be shaped by the halt (a stopped child,
      // a refused call): marked, so a resume runs that call again instead of replaying the stop.
      const entry =
        r.ended && !replayed && !genuineAfterHalt(delivered, (id) => journal.referencedStatus(id))
          ? { ...delivered, afterHalt: true as const }
          : delivered;
      // Serialised once: the same text is charged here and stored by the recorder.
      const text = jsonText(entry);
      journalBytes += text?.length ?? 0;
      e.recorder.journal(runId, entry, text);
      held?.append(entry);
      if (journalBytes > e.limits.maxJournalBytes) {
        r.fail({
          code: 'WF_ENGINE_OUTPUT_LIMIT',
          message: `the run journaled more than ${e.limits.maxJournalBytes} bytes of wf call inputs and answers (limit maxJournalBytes)`,
        });
      }
    },
    ...(replay ? { replay } : {}),
    onIssue: (entry) => r.reserveReplayed(entry),
    onReplay: (entry) => r.applyReplay(entry),
    onDrained: () => r.relaunchUnfinished(),
    onDiverged: (error) => r.fail(error),
    divergenceCause: () => divergenceCause(prepared.replayedFrom, source, start.args),
    stallMs: e.limits.replayStallMs,
  });
  // A spawned child's result is journaled when it settles, charged to maxJournalBytes above: a
  // resume then answers a later wf.wait from it instead of launching the child again. At most
  // one record per admitted child, so maxAgents bounds how many there are.
  r.recordChild = (task, result) => journal.recordChild(task.taskId, task.name, result);
  const caps = capabilities(r, { depth: start.nested ? 1 : 0, workflow: name }, journal);

  let outcome:
    | { ok: true; value: unknown }
    | { ok: false; error: { code: string; message: string } };
  try {
    if (source !== undefined && box) {
      const out = await box.run({
        source,
        args: args.args,
        capabilities: caps,
        prelude: createGuestPrelude({
          runId: r.guestRunId,
          args: args.args,
          budgetTotal: start.nested ? start.nested.budgetTotal : r.budgetTotal,
        }),
        limits: sandboxLimits(e.limits, r.maxAgents),
        seed,
        startTime,
        signal: r.abort.signal,
      });
      outcome =
        out.status === 'completed'
          ? { ok: true, value: (out as { value: unknown }).value }
          : {
              ok: false,
              error: sandboxError(
                out.status,
                (out as { error: { code: string; message: string } }).error,
              ),
            };
    } else {
      const fn = (workflow as { run: (wf: unknown, args: unknown) => unknown }).run;
      const wf = createHostApi(caps, {
        runId: r.guestRunId,
        args: args.args,
        budgetTotal: r.budgetTotal,
        signal: r.abort.signal,
        track: (p) => {
          r.track(p).catch(() => {});
        },
      });
      try {
        const value = await fn(wf, wf.args);
        const cloned = cloneJson(value);
        outcome = cloned.ok
          ? { ok: true, value: cloned.value }
          : {
              ok: false,
              error: {
                code: 'WF_ENGINE_RESULT_INVALID',
                message: `the workflow result is not JSON: ${cloned.message}`,
              },
            };
      } catch (thrown) {
        outcome = {
          ok: false,
          error: {
            code: 'WF_ENGINE_WORKFLOW_FAILED',
            message: `the workflow threw: ${errorInfo(thrown).message}`,
          },
        };
      }
    }
    if (outcome.ok && journal.replaying && !r.ended) {
      r.fail({
        code: 'WF_ENGINE_REPLAY_DIVERGED',
        message: `resume diverged: the workflow finished with ${journal.remaining()} journaled calls never issued; ${journal.cause()}`,
      });
    }
    // A workflow that failed can no longer observe its children: stop them, then drain.
    if (!outcome.ok) r.fail(outcome.error);
    // Invariant 3: children spawned and not awaited still finish before the run does.
    await r.quiesce();
  } finally {
    journal.close();
    wall.stop();
  }
  const end: Parameters<typeof finishWith>[4] = r.fatal
    ? { status: 'failed', error: r.fatal }
    : r.stopReason !== undefined
      ? { status: 'stopped', error: { code: 'WF_ENGINE_RUN_STOPPED', message: r.stopReason } }
      : outcome.ok
        ? { status: 'completed', result: outcome.value }
        : { status: 'failed', error: outcome.error };
  const done = await finishWith(e, runId, r, events, end);
  // A nested run's parent continues its task numbering and agent count from these; unlike the
  // cost (this execution's), they include children replayed from the journal.
  return start.nested ? { ...done, nested: { lastTaskSeq: r.taskSeq, agents: r.admitted } } : done;
}

/**
 * Why a resumed guest can call other than it did: what changed since the run was recorded. With
 * the recorded source and args the guest is deterministic (invariant 5), so a divergence then
 * points at what the journal does not carry, not at the workflow.
 */
export function divergenceCause(
  recorded: { readonly source?: string; readonly args: unknown } | undefined,
  source: string | undefined,
  args: unknown,
): string {
  if (recorded === undefined) return 'the workflow no longer makes the calls the run recorded';
  const changed = [
    ...(recorded.source !== source ? ['the source'] : []),
    ...(JSON.stringify(recorded.args ?? {}) !== JSON.stringify(args ?? {}) ? ['the args'] : []),
  ];
  if (changed.length > 0)
    return `${changed.join(' and ')} changed since the run was recorded, and the workflow now makes other calls`;
  return "the source and args are the run's recorded ones, so the workflow read something the journal does not replay (a limit such as its token budget set differently on this resume, another engine or sandbox version), or the run's record was edited";
}

/** `JSON.stringify(value)`, or undefined when it cannot be serialised (charged as 0, as before). */
function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * After a halt, only answers the halt cannot have shaped stay replayable: a child that completed
 * (runAgent, wait, a child-result record) and a synthesis that completed. Anything else runs
 * again on resume.
 */
export function genuineAfterHalt(
  entry: JournalEntry,
  referencedStatus: (taskId: string) => unknown,
): boolean {
  if (!entry.outcome.ok) return false;
  const value = (entry.outcome.value as { value?: unknown } | null)?.value as
    | { status?: unknown; text?: unknown }
    | null
    | undefined;
  // A wait answer stored as a reference to its child-result record has that record's status.
  const ref = entry.method === 'wait' ? childResultRef(value) : undefined;
  if (ref !== undefined) return referencedStatus(ref) === 'completed';
  if (entry.method === 'runAgent' || entry.method === 'wait' || isChildResult(entry))
    return value?.status === 'completed';
  if (entry.method === 'synthesize') return typeof value?.text === 'string';
  return false;
}

/** The capability chain for one scope: run admission -> (journal) -> validated dispatch -> handler. */
export function capabilities(run: Run, scope: RunScope, journal?: Journal): Record<string, Cap> {
  const dispatched = createHostDispatch(
    run.handlers(journal ? { ...scope, journaled: true } : scope),
    {
      taskIds: run.tasks,
      state: () => run.state(),
    },
  ) as Record<HostCall, Cap>;
  const out: Record<string, Cap> = Object.create(null);
  for (const method of HOST_CALLS) {
    const admitted: Cap = (input, ctx) => {
      try {
        run.admitCall(method);
      } catch (e) {
        return Promise.reject(e);
      }
      return dispatched[method](input, ctx);
    };
    const journaled = journal ? journal.wrap(method, admitted) : admitted;
    out[method] = (input, ctx) =>
      journaled(input, ctx).catch((e: unknown) => {
        run.observe(e);
        throw e;
      });
  }
  return out;
}

export async function runNested(
  e: EngineState,
  run: Run,
  nested: ResolvedWorkflow,
  nestedArgs: unknown,
  name: string,
  box: SandboxLike | undefined,
  seed: number,
  startTime: number,
  callId: number,
): Promise<unknown> {
  const parsed = parseManifest(nested.manifest);
  if (!parsed.ok) {
    throw new EngineError(
      'WF_ENGINE_INVALID_CALL',
      `wf.workflow("${name}"): its manifest is invalid: ${issuesText(parsed.issues)}`,
    );
  }
  const args = validateArgs(parsed.manifest, nestedArgs);
  if (!args.ok) {
    throw new EngineError(
      'WF_ENGINE_INVALID_CALL',
      `wf.workflow("${name}"): invalid args: ${issuesText(args.issues)}`,
    );
  }
  const checked = await checkSource(e, nested.source);
  if (!checked.ok) {
    throw new EngineError(
      'WF_ENGINE_WORKFLOW_FAILED',
      `wf.workflow("${name}"): its source breaks the source contract`,
    );
  }
  if (e.backend.nested)
    return runNestedOnBackend(e, run, nested, args.args, name, seed, startTime, callId);
  const sb = box ?? (await sandbox(e));
  const out = await sb.run({
    source: nested.source,
    args: args.args,
    capabilities: capabilities(run, { depth: 1, workflow: name }),
    prelude: createGuestPrelude({
      runId: run.guestRunId,
      args: args.args,
      budgetTotal: run.budgetTotal,
    }),
    limits: sandboxLimits(e.limits, run.maxAgents),
    seed,
    startTime,
    signal: run.abort.signal,
  });
  if (out.status === 'completed') return (out as { value: unknown }).value;
  const error = (out as { error: { code: string; message: string } }).error;
  throw new EngineError(
    'WF_ENGINE_WORKFLOW_FAILED',
    `wf.workflow("${name}") ${out.status}: ${error.code}: ${error.message}`,
  );
}

/**
 * A run on a durable backend with an allowance keeps its tokens there when it has a budget (its
 * children may run on other machines), and a nested run draws from its tree's from its start.
 */
function shareAllowance(e: EngineState, run: Run, nested: StartOptions['nested']): void {
  const open = e.backend.allowance;
  if (!open) return;
  if (nested?.allowance !== undefined) {
    run.shared = open({
      root: nested.allowance,
      budget: nested.budgetTotal,
      maxAgents: nested.maxAgents ?? run.maxAgents,
    });
    run.sharesAgents = true;
  } else if (run.budgetTotal !== null) {
    run.shared = open({ root: run.id, budget: run.budgetTotal, maxAgents: run.maxAgents });
  }
}

/** The root run's shared allowance once it starts a nested run (its children so far seeded). */
async function startSharing(e: EngineState, run: Run): Promise<SharedAllowance | undefined> {
  const open = e.backend.allowance;
  if (!open) return undefined;
  run.shared ??= open({ root: run.id, budget: run.budgetTotal, maxAgents: run.maxAgents });
  if (!run.sharesAgents) {
    // Synchronously with the switch: children admitted before it are seeded, those after it are
    // admitted there as they start (Task.sharedAdmit), none twice.
    run.sharesAgents = true;
    run.seeded = run.shared.seed([...run.tasks.keys()].map((id) => treeKey(run, id)));
  }
  await run.seeded;
  return run.shared;
}

/**
 * A durable backend runs the nested workflow as its own run (a parent continued elsewhere
 * re-attaches to it); its children and tokens then count against the parent as if they had run
 * inside it (maxAgents and the token budget are shared, as in the embedded engine).
 */
async function runNestedOnBackend(
  e: EngineState,
  run: Run,
  nested: ResolvedWorkflow,
  args: unknown,
  name: string,
  seed: number,
  startTime: number,
  callId: number,
): Promise<unknown> {
  const nestedRun = e.backend.nested as NonNullable<typeof e.backend.nested>;
  // From now on the run's children are admitted into the tree's shared allowance too, with those
  // of every nested run, each as it starts (invariant 6: one agent count for the tree).
  const shared = await startSharing(e, run);
  const left = run.budgetTotal === null ? undefined : run.budgetTotal - run.spent - run.reserved;
  const done = await nestedRun({
    parentRunId: run.id,
    callId,
    name,
    workflow: nested,
    args,
    seed,
    startTime,
    scope: {
      guestRunId: run.guestRunId,
      firstTaskSeq: run.taskSeq,
      budgetTotal: run.budgetTotal,
      ...(shared ? { allowance: shared.ledger, maxAgents: run.maxAgents } : {}),
    },
    limits: shared
      ? {
          maxAgents: run.maxAgents,
          ...(run.budgetTotal !== null ? { tokenBudget: run.budgetTotal } : {}),
        }
      : {
          // Without a shared allowance the nested run gets what the parent has left at its start.
          maxAgents: Math.max(0, run.maxAgents - run.admitted),
          ...(left !== undefined ? { tokenBudget: Math.max(1, left) } : {}),
        },
    signal: run.abort.signal,
  });
  const c = done.cost;
  // after a failover the nested run's cost counts only its last execution: ids and agents come
  // from its own count, which includes children replayed from its journal
  const tasks = done.nested ?? {
    lastTaskSeq: run.taskSeq + c.agentsStarted,
    agents: c.agentsStarted,
  };
  run.admitted += tasks.agents;
  run.taskSeq = Math.max(run.taskSeq, tasks.lastTaskSeq);
  run.cost.started += c.agentsStarted;
  run.cost.completed += c.agentsCompleted;
  run.cost.cacheHits += c.cacheHits;
  run.cost.inputTokens += c.tokenUsage.inputTokens;
  run.cost.outputTokens += c.tokenUsage.outputTokens;
  run.cost.peak = Math.max(run.cost.peak, c.peakConcurrency);
  run.allowance.add(c.tokenUsage.totalTokens);
  run.checkSpent();
  if (done.status === 'completed') return done.result;
  const error = done.error ?? { code: 'WF_ENGINE_WORKFLOW_FAILED', message: done.status };
  // A limit the nested run hit (maxAgents, budget, nesting...) fails the parent too, as it does
  // when the nested workflow runs inside the parent's run (invariant 2).
  if ((RUN_CONTROL_CODES as readonly string[]).includes(error.code)) {
    throw new EngineError(error.code as EngineErrorCode, error.message);
  }
  throw new EngineError(
    'WF_ENGINE_WORKFLOW_FAILED',
    `wf.workflow("${name}") ${done.status}: ${error.code}: ${error.message}`,
  );
}

export async function finishWith(
  e: EngineState,
  runId: string,
  run: Run | undefined,
  events: EventLog,
  end: { status: RunDone['status']; result?: unknown; error?: { code: string; message: string } },
): Promise<RunDone> {
  // The run's duration is its own record's (bridge runSpan): the workflow-started event to this
  // terminal event, whose time is also run.json's endedAt and the cost's wall-clock duration.
  const recorded = events.all();
  const startedAt = recorded[0]?.time;
  const endedAt = Math.max(Date.now(), recorded.at(-1)?.time ?? 0);
  const cost: RunCost = {
    ...(run?.costReport() ?? emptyCost()),
    wallClockDurationMs: startedAt === undefined ? 0 : Math.max(0, endedAt - startedAt),
  };
  const done: RunDone = {
    status: end.status,
    ...(end.result !== undefined ? { result: end.result } : {}),
    ...(end.error ? { error: end.error } : {}),
    cost,
  };
  const type =
    end.status === 'completed'
      ? 'workflow-completed'
      : end.status === 'failed'
        ? 'workflow-failed'
        : 'workflow-stopped';
  // Invariant 12: the terminal event is recorded now but reaches readers only once the run's end
  // is: nobody sees the run completed before its terminal record and result are durable.
  events.hold();
  safeEmit(
    events,
    type,
    {
      status: end.status,
      ...(end.error ? { error: end.error } : {}),
      cost,
    },
    endedAt,
  );
  events.close();
  let unrecorded: RunDone['unrecorded'];
  try {
    await e.recorder.finish(runId, {
      status: end.status as Exclude<RunStatus, 'running' | 'paused'>,
      ...(end.result !== undefined ? { result: end.result } : {}),
      ...(end.error ? { error: end.error } : {}),
      cost,
      endedAt,
    });
  } catch (thrown) {
    // The run's outcome stands; that it is not recorded is part of it.
    unrecorded = { stage: 'finish', ...errorInfo(thrown) };
  } finally {
    events.release();
  }
  return unrecorded ? { ...done, unrecorded } : done;
}

/**
 * The end of a run whose start could not be recorded (a full disk, a run id taken): nothing ran
 * and nothing is recorded. Readers get a terminal event all the same, so they stop waiting.
 */
function unrecordedStart(events: EventLog, error: { code: string; message: string }): RunDone {
  const cost = emptyCost();
  safeEmit(events, 'workflow-failed', { status: 'failed', error, cost });
  events.close();
  return { status: 'failed', error, cost, unrecorded: { stage: 'begin', ...error } };
}
