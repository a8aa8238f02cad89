// createEngine: preflight (manifest, args, source contract, approval), then one Run per start,
// executed in the sandbox (source-based) or with a host-side wf (trusted-local), finished only at
// quiescence (invariant 3), recorded through the RunRecorder port.
import { randomUUID } from 'node:crypto';
import {
  createGuestPrelude,
  createHostDispatch,
  type HostCall,
  HOST_CALLS,
  parseManifest,
  validateArgs,
  type WorkflowManifest,
} from '@wf/bridge';
import { createSandbox } from '@wf/sandbox';
import { checkWorkflowSource } from '@wf/source-contract';
import { EngineError } from './errors.js';
import { createEventLog, type EventLog } from './internal/event-log.js';
import { createHostApi } from './internal/host-api.js';
import { Journal } from './internal/journal.js';
import { cloneJson } from './internal/json.js';
import { errorInfo, Run, type RunScope } from './internal/run.js';
import { createGate, createSemaphore } from './internal/semaphore.js';
import { createSchemaCheck } from './internal/structured.js';
import { createMemoryRecorder } from './memory-recorder.js';
import type { JournalEntry, RunRecorder, RunStartRecord, RunStatus } from './ports.js';
import type {
  Engine,
  EngineLimits,
  EngineOptions,
  HostCallContext,
  ResolvedWorkflow,
  ResumeOptions,
  RunDone,
  RunHandle,
  SandboxLike,
  StartOptions,
} from './types.js';

export const DEFAULT_ENGINE_LIMITS: EngineLimits = Object.freeze({
  maxAgents: 100,
  maxConcurrency: 8,
  deploymentConcurrency: 16,
  wallMs: null,
  defaultTaskTokens: 16_000,
  maxCalls: 10_000,
  readFileMaxBytes: 1024 * 1024,
  maxLogBytes: 1024 * 1024,
  maxArtifactBytes: 16 * 1024 * 1024,
  maxJournalBytes: 128 * 1024 * 1024,
  replayStallMs: 10_000,
  stopGraceMs: 10_000,
  sandbox: Object.freeze({}),
});

type Cap = (input: unknown, ctx: HostCallContext) => Promise<unknown>;

interface Prepared {
  readonly runId: string;
  readonly options: StartOptions;
  readonly replay?: readonly JournalEntry[];
  readonly resumedFromRunId?: string;
}

export function createEngine(options: EngineOptions): Engine {
  if (!options || typeof options.agents?.start !== 'function') {
    throw new EngineError(
      'WF_ENGINE_INVALID_START',
      'createEngine needs { agents: AgentProvider }',
    );
  }
  const limits: EngineLimits = resolveLimits(options.limits);
  const recorder: RunRecorder = guardRecorder(options.recorder ?? createMemoryRecorder());
  const deployment = createSemaphore(limits.deploymentConcurrency);
  const schemas = createSchemaCheck();
  const active = new Map<string, { stop(reason: string): void; done: Promise<RunDone> }>();
  let ownSandbox: Promise<SandboxLike> | undefined;

  const sandbox = async (): Promise<SandboxLike> => {
    if (options.sandbox) return options.sandbox;
    ownSandbox ??= createSandbox();
    return ownSandbox;
  };

  // Invariant 4: the static contract is defence in depth; the sandbox still contains everything.
  const checkSource = async (source: string) => {
    if (options.checkSource === false) return { ok: true as const };
    if (options.checkSource) return options.checkSource(source);
    return checkWorkflowSource(source);
  };

  const begin = (prepared: Prepared): RunHandle => {
    const { runId, options: start } = prepared;
    const events = createEventLog(runId, recorder);
    const gate = createGate();
    let run: Run | undefined;
    let stopRequest: string | undefined;
    const wall = createWallClock(start.limits?.wallMs ?? limits.wallMs);
    // Aborts a pending approval when the run is stopped during preflight.
    const preflight = new AbortController();

    const done = execute().catch(async (e: unknown) => {
      // A host-side failure (a port threw, the sandbox crashed): stop and drain, then report it.
      const error = errorInfo(e);
      if (run) {
        run.fail({
          code: 'WF_ENGINE_HOST_ERROR',
          message: `the run failed on the host: ${error.message}`,
        });
        await run.quiesce();
      }
      return finishWith(runId, run, events, { status: 'failed', error: run?.fatal ?? error });
    });
    active.set(runId, { stop: (r) => handle.stop(r), done });
    done.finally(() => active.delete(runId)).catch(() => {});

    const handle: RunHandle = {
      runId,
      events: events.iterable,
      done,
      pause() {
        if (gate.paused || run?.ended) return;
        gate.pause();
        wall.pause();
        safeEmit(events, 'workflow-paused', {});
        recorder.update(runId, { status: 'paused' });
      },
      resume() {
        if (!gate.paused) return;
        gate.resume();
        wall.resume();
        safeEmit(events, 'workflow-resumed', {});
        recorder.update(runId, { status: 'running' });
      },
      stop(reason = 'stopped by the user') {
        stopRequest ??= reason;
        preflight.abort();
        run?.stop(reason);
      },
    };
    if (start.signal) {
      if (start.signal.aborted) handle.stop('aborted by the caller signal');
      else
        start.signal.addEventListener('abort', () => handle.stop('aborted by the caller signal'), {
          once: true,
        });
    }
    return handle;

    async function execute(): Promise<RunDone> {
      const workflow = start.workflow;
      const source = 'source' in workflow ? workflow.source : undefined;
      const seed = start.seed ?? (Math.random() * 2 ** 31) >>> 0;
      const startTime = start.startTime ?? Date.now();
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
        startedAt: Date.now(),
        ...(prepared.resumedFromRunId ? { resumedFromRunId: prepared.resumedFromRunId } : {}),
        ...(start.sourceRunId ? { sourceRunId: start.sourceRunId } : {}),
        ...(start.revisionOf ? { revisionOf: start.revisionOf } : {}),
      };
      await recorder.begin(record);
      events.emit('workflow-started', {
        workflow: name,
        trust: start.trust,
        ...(prepared.resumedFromRunId ? { resumedFromRunId: prepared.resumedFromRunId } : {}),
      });

      // Preflight: nothing launches before it passes.
      const parsed = parseManifest(workflow.manifest);
      if (!parsed.ok) {
        return finishWith(runId, undefined, events, {
          status: 'failed',
          error: {
            code: 'WF_ENGINE_INVALID_MANIFEST',
            message: `invalid manifest: ${issuesText(parsed.issues)}`,
          },
        });
      }
      const manifest = parsed.manifest;
      const args = validateArgs(manifest, start.args ?? {});
      if (!args.ok) {
        return finishWith(runId, undefined, events, {
          status: 'failed',
          error: {
            code: 'WF_ENGINE_INVALID_ARGS',
            message: `invalid args for ${manifest.name}: ${issuesText(args.issues)}`,
          },
        });
      }
      if (source !== undefined) {
        const checked = await checkSource(source);
        if (!checked.ok) {
          return finishWith(runId, undefined, events, {
            status: 'failed',
            error: {
              code: 'WF_ENGINE_SOURCE_REJECTED',
              message: `the source of ${manifest.name} breaks the workflow source contract: ${checked.errors
                .slice(0, 5)
                .map((d) => `${d.line ?? '?'}:${d.column ?? '?'} ${d.code} ${d.message}`)
                .join('; ')}`,
            },
          });
        }
      }
      if (options.approver) {
        const decision = await options.approver
          .request(
            {
              runId,
              workflow: name,
              trust: start.trust,
              summary: summaryOf(manifest, start.trust),
            },
            preflight.signal,
          )
          .catch(() => 'unavailable' as const);
        if (decision !== 'allowed') {
          return finishWith(runId, undefined, events, {
            status: 'denied',
            error: {
              code: 'WF_ENGINE_RUN_STOPPED',
              message: `approval ${decision}: no child was started`,
            },
          });
        }
      }
      if (stopRequest !== undefined) {
        return finishWith(runId, undefined, events, {
          status: 'stopped',
          error: { code: 'WF_ENGINE_RUN_STOPPED', message: stopRequest },
        });
      }

      const box = source !== undefined ? await sandbox() : undefined;
      const r: Run = new Run({
        runId,
        workflow: name,
        manifest,
        limits: {
          ...limits,
          maxAgents: Math.min(limits.maxAgents, start.limits?.maxAgents ?? limits.maxAgents),
          maxConcurrency: Math.min(
            limits.maxConcurrency,
            start.limits?.maxConcurrency ?? limits.maxConcurrency,
          ),
        },
        agents: options.agents,
        recorder,
        events,
        gate,
        deployment,
        schemas,
        ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
        ...(options.readFile?.deny ? { readFileDeny: options.readFile.deny } : {}),
        ...(options.resolveWorkflow ? { resolveWorkflow: options.resolveWorkflow } : {}),
        runNested: (nested, nestedArgs, nestedName): Promise<unknown> =>
          runNested(r, nested, nestedArgs, nestedName, box, seed, startTime),
      });
      run = r;
      if (stopRequest !== undefined) r.stop(stopRequest);
      wall.start(() =>
        r.fail({
          code: 'WF_ENGINE_WALL_TIMEOUT',
          message: `the run exceeded its wall limit of ${wall.limitMs} ms (paused time excluded)`,
        }),
      );
      if (gate.paused) wall.pause();

      // invariant 6: each answer is journaled in full, so re-reading one large answer (wf.snapshot,
      // wf.wait) thousands of times would multiply it on disk; the run's journal is bounded.
      let journalBytes = 0;
      const journal = new Journal({
        record: (entry) => {
          journalBytes += jsonSize(entry);
          recorder.journal(runId, entry);
          if (journalBytes > limits.maxJournalBytes) {
            r.fail({
              code: 'WF_ENGINE_OUTPUT_LIMIT',
              message: `the run journaled more than ${limits.maxJournalBytes} bytes of wf call inputs and answers (limit maxJournalBytes)`,
            });
          }
        },
        ...(prepared.replay ? { replay: prepared.replay } : {}),
        onIssue: (entry) => r.reserveReplayed(entry),
        onReplay: (entry) => r.applyReplay(entry),
        onDrained: () => r.relaunchUnfinished(),
        onDiverged: (error) => r.fail(error),
        stallMs: limits.replayStallMs,
      });
      const caps = capabilities(r, { depth: 0, workflow: name }, journal);

      let outcome:
        | { ok: true; value: unknown }
        | { ok: false; error: { code: string; message: string } };
      try {
        if (source !== undefined && box) {
          const out = await box.run({
            source,
            args: args.args,
            capabilities: caps,
            prelude: createGuestPrelude({ runId, args: args.args, budgetTotal: r.budgetTotal }),
            limits: sandboxLimits(limits, r.maxAgents),
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
            runId,
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
          } catch (e) {
            outcome = {
              ok: false,
              error: {
                code: 'WF_ENGINE_WORKFLOW_FAILED',
                message: `the workflow threw: ${errorInfo(e).message}`,
              },
            };
          }
        }
        if (outcome.ok && journal.replaying && !r.ended) {
          r.fail({
            code: 'WF_ENGINE_REPLAY_DIVERGED',
            message: `resume diverged: the workflow finished with ${journal.remaining()} journaled calls never issued; the source or args changed since the run was recorded`,
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
      if (r.fatal) return finishWith(runId, r, events, { status: 'failed', error: r.fatal });
      if (r.stopReason !== undefined) {
        return finishWith(runId, r, events, {
          status: 'stopped',
          error: { code: 'WF_ENGINE_RUN_STOPPED', message: r.stopReason },
        });
      }
      if (!outcome.ok)
        return finishWith(runId, r, events, { status: 'failed', error: outcome.error });
      return finishWith(runId, r, events, { status: 'completed', result: outcome.value });
    }
  };

  /** The capability chain for one scope: run admission -> (journal) -> validated dispatch -> handler. */
  function capabilities(run: Run, scope: RunScope, journal?: Journal): Record<string, Cap> {
    const dispatched = createHostDispatch(run.handlers(scope), {
      taskIds: run.tasks,
      state: () => run.state(),
    }) as Record<HostCall, Cap>;
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

  async function runNested(
    run: Run,
    nested: ResolvedWorkflow,
    nestedArgs: unknown,
    name: string,
    box: SandboxLike | undefined,
    seed: number,
    startTime: number,
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
    const checked = await checkSource(nested.source);
    if (!checked.ok) {
      throw new EngineError(
        'WF_ENGINE_WORKFLOW_FAILED',
        `wf.workflow("${name}"): its source breaks the source contract`,
      );
    }
    const sb = box ?? (await sandbox());
    const out = await sb.run({
      source: nested.source,
      args: args.args,
      capabilities: capabilities(run, { depth: 1, workflow: name }),
      prelude: createGuestPrelude({ runId: run.id, args: args.args, budgetTotal: run.budgetTotal }),
      limits: sandboxLimits(limits, run.maxAgents),
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

  async function finishWith(
    runId: string,
    run: Run | undefined,
    events: EventLog,
    end: { status: RunDone['status']; result?: unknown; error?: { code: string; message: string } },
  ): Promise<RunDone> {
    const cost = run?.costReport() ?? {
      wallClockDurationMs: 0,
      agentsStarted: 0,
      agentsCompleted: 0,
      cacheHits: 0,
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      peakConcurrency: 0,
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
    safeEmit(events, type, {
      status: end.status,
      ...(end.error ? { error: end.error } : {}),
      cost,
    });
    events.close();
    try {
      await recorder.finish(runId, {
        status: end.status as Exclude<RunStatus, 'running' | 'paused'>,
        ...(end.result !== undefined ? { result: end.result } : {}),
        ...(end.error ? { error: end.error } : {}),
        cost,
        endedAt: Date.now(),
      });
    } catch {
      // The run's outcome stands even when the recorder cannot store it.
    }
    return done;
  }

  const startRun = async (
    start: StartOptions,
    extra: Omit<Prepared, 'runId' | 'options'> = {},
  ): Promise<RunHandle> => {
    checkStart(start);
    const runId = start.runId ?? `run-${randomUUID()}`;
    if (active.has(runId))
      throw new EngineError('WF_ENGINE_INVALID_START', `run ${runId} is already active`);
    return begin({ runId, options: start, ...extra });
  };

  return {
    limits,
    start: (start) => startRun(start),
    async resume(previousRunId: string, resumeOptions: ResumeOptions = {}) {
      if (!recorder.load) {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: the recorder has no load()`,
        );
      }
      if (active.has(previousRunId)) {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: it is still running on this engine`,
        );
      }
      const loaded = await recorder.load(previousRunId);
      if (!loaded)
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: no such run in the recorder`,
        );
      const { start, journal } = loaded;
      if (start.source === undefined || start.trust === 'trusted-local') {
        throw new EngineError(
          'WF_ENGINE_RESUME_UNAVAILABLE',
          `cannot resume ${previousRunId}: only source-based runs are deterministic enough to replay (this one is ${start.trust})`,
        );
      }
      return startRun(
        {
          workflow: { manifest: start.manifest, source: start.source, name: start.workflow },
          args: start.args,
          trust: start.trust,
          seed: start.seed,
          startTime: start.startTime,
          ...(resumeOptions.runId ? { runId: resumeOptions.runId } : {}),
          ...(resumeOptions.signal ? { signal: resumeOptions.signal } : {}),
          ...(resumeOptions.limits ? { limits: resumeOptions.limits } : {}),
          ...(start.sourceRunId ? { sourceRunId: start.sourceRunId } : {}),
          ...(start.revisionOf ? { revisionOf: start.revisionOf } : {}),
        },
        { replay: journal, resumedFromRunId: previousRunId },
      );
    },
    active: () => [...active.keys()],
    async close() {
      const runs = [...active.values()];
      for (const r of runs) r.stop('engine closed');
      await Promise.allSettled(runs.map((r) => r.done));
      if (ownSandbox) await (await ownSandbox).close();
    },
  };
}

/**
 * `event`, `journal` and `update` must not block or break a run: a recorder that throws there is
 * ignored for that call (the run's in-memory events stay complete). The async methods keep their
 * failures: `begin` failing fails the run, `artifact` failing is the workflow's ordinary error.
 */
function guardRecorder(inner: RunRecorder): RunRecorder {
  const quiet =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args);
      } catch {
        // see above
      }
    };
  return {
    begin: (run) => inner.begin(run),
    event: quiet((e) => inner.event(e)),
    journal: quiet((runId, entry) => inner.journal(runId, entry)),
    artifact: (runId, name, value) => inner.artifact(runId, name, value),
    update: quiet((runId, patch) => inner.update(runId, patch)),
    finish: (runId, record) => inner.finish(runId, record),
    ...(inner.load
      ? { load: (runId: string) => inner.load?.(runId) ?? Promise.resolve(undefined) }
      : {}),
  };
}

const POSITIVE_LIMITS = [
  'maxAgents',
  'maxConcurrency',
  'deploymentConcurrency',
  'defaultTaskTokens',
  'maxCalls',
  'readFileMaxBytes',
  'maxLogBytes',
  'maxArtifactBytes',
  'maxJournalBytes',
  'replayStallMs',
  'stopGraceMs',
] as const;

function resolveLimits(patch: Partial<EngineLimits> | undefined): EngineLimits {
  const out: Record<string, unknown> = { ...DEFAULT_ENGINE_LIMITS };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_ENGINE_LIMITS)) {
      throw new EngineError(
        'WF_ENGINE_INVALID_START',
        `createEngine: limits.${key} is not a known limit`,
      );
    }
    out[key] = value;
  }
  for (const key of POSITIVE_LIMITS) {
    const v = out[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      throw new EngineError(
        'WF_ENGINE_INVALID_START',
        `createEngine: limits.${key} must be a positive integer (got ${String(v)})`,
      );
    }
  }
  const wall = out.wallMs;
  if (wall !== null && (typeof wall !== 'number' || !Number.isSafeInteger(wall) || wall <= 0)) {
    throw new EngineError(
      'WF_ENGINE_INVALID_START',
      `createEngine: limits.wallMs must be null or a positive integer (got ${String(wall)})`,
    );
  }
  return Object.freeze(out) as unknown as EngineLimits;
}

function recordable(value: unknown): unknown {
  const cloned = cloneJson(value);
  return cloned.ok ? cloned.value : null;
}

function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

function checkStart(start: StartOptions): void {
  const bad = (message: string) => new EngineError('WF_ENGINE_INVALID_START', message);
  if (!start || typeof start !== 'object') throw bad('engine.start needs an options object');
  const w = start.workflow as unknown as
    | { manifest?: unknown; source?: unknown; run?: unknown }
    | undefined;
  if (!w || typeof w !== 'object' || !('manifest' in w))
    throw bad('engine.start: workflow must be { manifest, source } or { manifest, run }');
  const hasSource = typeof w.source === 'string';
  const hasRun = typeof w.run === 'function';
  if (hasSource === hasRun)
    throw bad('engine.start: workflow needs exactly one of source (string) or run (function)');
  if (!['trusted-package', 'capability-generated', 'trusted-local'].includes(start.trust)) {
    throw bad(
      `engine.start: trust must be trusted-package, capability-generated or trusted-local (got ${String(start.trust)})`,
    );
  }
  if (hasRun && start.trust !== 'trusted-local') {
    throw bad(
      `engine.start: a host function (workflow.run) is trusted-local code, but trust is ${start.trust}`,
    );
  }
  if (hasSource && start.trust === 'trusted-local') {
    throw bad(
      'engine.start: source-based workflows run sandboxed; trust trusted-local needs workflow.run',
    );
  }
  if (start.runId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(start.runId)) {
    throw bad(
      `engine.start: runId "${start.runId}" must be 1-128 characters of letters, digits, . _ -`,
    );
  }
}

/**
 * The sandbox's own wall limit is lifted to ~23 days (below the timer maximum, which the sandbox adds grace to): the engine keeps the run's wall
 * limit itself, because only it knows about pause (a paused run does not time out). Outstanding
 * calls may exceed the sandbox default when a workflow fans out wider than its concurrency.
 */
function sandboxLimits(limits: EngineLimits, maxAgents: number): { [key: string]: number } {
  return {
    wallMs: 2_000_000_000,
    maxOutstandingCalls: Math.max(256, maxAgents * 2 + 64),
    maxHostCalls: Math.max(limits.maxCalls + 1, 1),
    ...limits.sandbox,
  };
}

function sandboxError(
  status: string,
  error: { code: string; message: string },
): { code: string; message: string } {
  if (status === 'failed') return { code: error.code, message: error.message };
  return {
    code: error.code,
    message: `the workflow ended with sandbox status ${status}: ${error.message}`,
  };
}

function issuesText(issues: readonly { path: string; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ');
}

function summaryOf(m: WorkflowManifest, trust: string): string {
  return `${trust} workflow ${m.name}: up to ${m.maxAgents} agents, ${m.maxConcurrency} at a time, ${m.readOnly ? 'read-only' : 'may modify files'}${m.tokenBudget ? `, token budget ${m.tokenBudget}` : ''}`;
}

function safeEmit(
  events: EventLog,
  type: Parameters<EventLog['emit']>[0],
  data: Record<string, unknown>,
): void {
  try {
    events.emit(type, data);
  } catch {
    // the log is closed: the run has finished
  }
}

/** The optional per-run wall limit, counting only unpaused time. */
function createWallClock(limitMs: number | null) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let remaining = limitMs ?? 0;
  let since = 0;
  let onExpire: (() => void) | undefined;
  let running = false;
  const arm = () => {
    if (limitMs === null || !onExpire) return;
    since = Date.now();
    timer = setTimeout(() => onExpire?.(), Math.max(0, remaining));
    running = true;
  };
  const disarm = () => {
    if (!running) return;
    clearTimeout(timer);
    remaining -= Date.now() - since;
    running = false;
  };
  return {
    limitMs,
    start(fn: () => void) {
      onExpire = fn;
      arm();
    },
    pause: disarm,
    resume() {
      if (!running) arm();
    },
    stop() {
      disarm();
      onExpire = undefined;
    },
  };
}
