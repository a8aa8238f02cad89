// The Restate services one worker serves: WfRun (one workflow invocation per @wf run, keyed by
// run id), WfAgent (one virtual-object invocation per child, keyed `<runId>/<taskId>`),
// WfJournal (a run's durable journal), WfSemaphore (the deployment-wide child cap) and
// WfAllowance (a run tree's agents and tokens).
import './sdk-setup.js';
import * as restate from '@restatedev/restate-sdk';
import type {
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
  EngineLimits,
  ExecutionBackend,
  NestedScope,
  ResolvedWorkflow,
  RunDone,
  RunHandle,
  RunRecorder,
  SandboxLike,
  SharedAllowance,
  Trust,
} from '@wf/engine';
import { createEngine, createMemoryRecorder } from '@wf/engine';
import { allowanceObject, remoteMeter, restateAllowance } from './allowance.js';
import { type BlobPolicy, type BlobRef, blobObject, toRef } from './blobs.js';
import { createControlWatcher } from './control.js';
import { journalObject, type RunControl } from './journal-object.js';
import { type DurableRecord, openRestateJournal } from './journal-store.js';
import { createNestedRuns } from './nested.js';
import { createRemoteAgents } from './remote-agents.js';
import {
  AGENT_OBJECT,
  RUN_SERVICE,
  SEMAPHORE_OBJECT,
  shardCapacities,
  shardKey,
  shardOf,
} from './names.js';

/** What `submitRun` sends: everything a worker needs to execute (and re-execute) the run. */
export interface RunSubmission {
  readonly workflow: {
    readonly manifest: unknown;
    readonly source: string;
    readonly name?: string;
  };
  readonly args?: unknown;
  readonly trust: Exclude<Trust, 'trusted-local'>;
  /** Fixed at submission so every attempt replays the same guest (invariant 5). */
  readonly seed: number;
  readonly startTime: number;
  /** Set for a nested `wf.workflow` run (nested.ts): what its guest sees of the parent. */
  readonly nested?: NestedScope;
  /**
   * The run's own limits, as the embedded engine's per-run limits (the tighter of these and the
   * manifest's apply); `maxAgents` also lifts the worker's default cap, as `wf run --max-agents`
   * does. For a nested run: what its parent had left.
   */
  readonly limits?: RunLimits;
  /**
   * Settings of the run's children, the same for every child whichever worker runs it: the
   * worker's `agentsFor` builds its provider from them (the CLI's simulated agents: seed, delay).
   */
  readonly agentSettings?: AgentSettings;
}

/** A submission's per-run limits (absent: the worker's). */
export interface RunLimits {
  readonly maxAgents?: number;
  readonly tokenBudget?: number;
  readonly wallMs?: number;
  readonly childWallMs?: number;
}

/** JSON settings a run carries to the provider of its children. */
export type AgentSettings = { readonly [key: string]: string | number | boolean | null };

/**
 * What a WfAgent invocation is given: the child's request, its run's agent settings, and the
 * run tree's allowance it meters against when the run has a token budget (allowance.ts).
 */
export interface AgentInvocation {
  readonly request: AgentRequest;
  readonly settings?: AgentSettings;
  readonly allowance?: { readonly ledger: string; readonly child: string };
}

export interface ServicesOptions {
  readonly ingress: string;
  /** Runs the children this worker is handed (simulated agents, a DSH provider...). */
  readonly agents: AgentProvider;
  /** The provider for a run whose submission carries agent settings; default `agents`. */
  readonly agentsFor?: (settings: AgentSettings) => AgentProvider;
  /** Root directory for `wf.readFile`; without it readFile is refused. */
  readonly workspace?: string;
  /** `wf.readFile` never reads these roots (the engine's `readFile.deny`). */
  readonly readFileDeny?: readonly string[];
  readonly sandbox: SandboxLike;
  readonly recorder?: RunRecorder;
  readonly limits?: Partial<EngineLimits>;
  /** Resolves `wf.workflow(name)` on the worker executing the parent. */
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  readonly deploymentConcurrency: number;
  /** WfSemaphore keys the cap is split over (names.ts shardCapacities); 1 = exact. */
  readonly semaphoreShards: number;
  /** Longest a run or a child may go without a Restate command; longer than the longest child. */
  readonly inactivityTimeoutMs: number;
  /** Answers, journal entries and results above `thresholdBytes` go by reference (blobs.ts). */
  readonly largeAnswers: { readonly thresholdBytes: number; readonly maxBytes: number };
}

type Waiter = { holder: string; awakeableId: string };

/**
 * The run store mirror as one attempt's engine sees it. Restate re-executes a run after its
 * executor was lost, possibly on a worker whose store already holds it (restarted in place by a
 * supervisor, or sharing the directory): that attempt continues the recorded run
 * (`beginOrContinue`), never fails on a second begin. Once an attempt ends (the server lost it)
 * nothing more it produces is the run's: no event, no finish (the run is detached, the next
 * attempt records its end); and a continued attempt leaves out what its replay re-emits of the
 * recorded part (phases, logs and artifacts marked `replayed`), which the log already holds.
 */
function attemptMirror(inner: RunRecorder, begun: Set<string>, attempt: AbortSignal): RunRecorder {
  let continued = false;
  const over = () => attempt.aborted;
  return {
    begin: async (run) => {
      if (inner.beginOrContinue) {
        continued = (await inner.beginOrContinue(run)).continued;
      } else if (begun.has(run.runId)) {
        continued = true;
        return;
      } else await inner.begin(run);
      begun.add(run.runId);
      attempt.addEventListener('abort', () => void inner.detach?.(run.runId).catch(() => {}), {
        once: true,
      });
    },
    event: (e) => {
      if (over()) return;
      if (continued && (e.data as { replayed?: unknown } | undefined)?.replayed === true) return;
      inner.event(e);
    },
    journal: (runId, entry, text) => {
      if (!over()) inner.journal(runId, entry, text);
    },
    artifact: (runId, name, value) =>
      continued
        ? inner.artifact(runId, name, value).catch((e: unknown) => {
            // written by an earlier attempt: the same artifact
            if ((e as { code?: unknown })?.code === 'WF_CATALOG_RUN_ARTIFACT_EXISTS')
              return { name, ref: '' };
            throw e;
          })
        : inner.artifact(runId, name, value),
    update: (runId, patch) => {
      if (!over()) inner.update(runId, patch);
    },
    finish: async (runId, record) => {
      if (!over()) await inner.finish(runId, record);
    },
    ...(inner.load
      ? { load: (runId: string) => inner.load?.(runId) ?? Promise.resolve(undefined) }
      : {}),
  };
}

/**
 * The engine's recorder on Restate: the run's durable record in Restate (start, events, finish:
 * one view of the run whichever workers execute it) beside this worker's run store mirror.
 */
function withRecord(local: RunRecorder, durable: DurableRecord): RunRecorder {
  return {
    begin: async (run) => {
      durable.begin(run);
      await local.begin(run);
    },
    event: (e) => {
      durable.event(e);
      local.event(e);
    },
    journal: (runId, entry, text) => local.journal(runId, entry, text),
    artifact: (runId, name, value) => local.artifact(runId, name, value),
    update: (runId, patch) => local.update(runId, patch),
    finish: async (runId, record) => {
      durable.finish(record);
      await local.finish(runId, record);
    },
    ...(local.load
      ? { load: (runId: string) => local.load?.(runId) ?? Promise.resolve(undefined) }
      : {}),
  };
}

export function createServices(o: ServicesOptions) {
  const blobs: BlobPolicy = { ingress: o.ingress, ...o.largeAnswers };
  const control = createControlWatcher(o.ingress);
  const providerFor = (settings: AgentSettings | undefined): AgentProvider =>
    settings && o.agentsFor ? o.agentsFor(settings) : o.agents;
  // Runs this process has begun recording: a later attempt here continues them.
  const begun = new Set<string>();
  // Long children and long runs make no Restate command for minutes: without these the server
  // would suspend, abort and retry them, and a child longer than the timeout would never complete.
  const timeouts = {
    inactivityTimeout: o.inactivityTimeoutMs,
    abortTimeout: o.inactivityTimeoutMs,
  };

  const capacities = shardCapacities(o.deploymentConcurrency, o.semaphoreShards);
  const semaphore = restate.object({
    name: SEMAPHORE_OBJECT,
    handlers: {
      acquire: async (
        ctx: restate.ObjectContext,
        input: { holder: string; awakeableId: string; capacity: number },
      ) => {
        ctx.set('capacity', input.capacity);
        const held = (await ctx.get<string[]>('held')) ?? [];
        const queue = (await ctx.get<Waiter[]>('queue')) ?? [];
        // A retried acquire (its caller re-ran) is granted again, never counted twice.
        if (held.includes(input.holder)) {
          ctx.resolveAwakeable(input.awakeableId);
          return;
        }
        if (held.length < input.capacity) {
          held.push(input.holder);
          ctx.set('held', held);
          ctx.resolveAwakeable(input.awakeableId);
          return;
        }
        if (!queue.some((w) => w.holder === input.holder)) {
          queue.push({ holder: input.holder, awakeableId: input.awakeableId });
          ctx.set('queue', queue);
        }
      },
      release: async (ctx: restate.ObjectContext, input: { holder: string }) => {
        const capacity = (await ctx.get<number>('capacity')) ?? 1;
        const held = ((await ctx.get<string[]>('held')) ?? []).filter((h) => h !== input.holder);
        const queue = ((await ctx.get<Waiter[]>('queue')) ?? []).filter(
          (w) => w.holder !== input.holder,
        );
        while (held.length < capacity && queue.length > 0) {
          const next = queue.shift() as Waiter;
          held.push(next.holder);
          ctx.resolveAwakeable(next.awakeableId);
        }
        ctx.set('held', held);
        ctx.set('queue', queue);
      },
      state: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => ({
        held: (await ctx.get<string[]>('held')) ?? [],
        queued: ((await ctx.get<Waiter[]>('queue')) ?? []).length,
      })),
    },
  });

  const agent = restate.object({
    name: AGENT_OBJECT,
    handlers: {
      run: async (
        ctx: restate.ObjectContext,
        input: AgentInvocation,
      ): Promise<AgentResult | BlobRef> => {
        const { request, settings, allowance } = input;
        const holder = ctx.key;
        const shard = shardOf(holder, capacities.length);
        const slot = ctx.awakeable();
        ctx
          .objectSendClient(semaphore, shardKey(shard))
          .acquire({ holder, awakeableId: slot.id, capacity: capacities[shard] as number });
        await slot.promise;
        // The child's result is this invocation's output, journaled together with the release in
        // the one response that follows the child: once it is stored no attempt runs the child
        // again; a worker lost while it runs re-runs it (at-least-once, README). Not a `ctx.run`:
        // in request-response mode that cost one more round trip (suspend for the run's ack, then
        // replay) while the child held its slot, for the same durability point. A large answer is
        // stored first (content-addressed, so a re-run stores the same blob) and only its
        // reference is returned.
        // Metered against its tree's allowance: asked before each model call, its usage charged
        // as it spends and at its end (before its result is returned).
        const meter = allowance ? remoteMeter(o.ingress, allowance) : undefined;
        const answer = await runChild(
          providerFor(settings),
          request,
          (stop) =>
            // wf stop, or its orchestrator stopping it (wf.stop, a child wall limit): it stops here.
            control.watch(request.runId, (c) => {
              if (c.run === 'stopping' || c.stopped.includes(request.taskId)) stop();
            }),
          meter,
        );
        await meter?.end(answer.usage);
        const result = await toRef(
          blobs,
          answer,
          `the answer of ${holder}`,
          undefined,
          request.runId,
        );
        ctx.objectSendClient(semaphore, shardKey(shard)).release({ holder });
        return result;
      },
    },
    options: timeouts,
  });

  const run = restate.workflow({
    name: RUN_SERVICE,
    handlers: {
      run: async (ctx: restate.WorkflowContext, input: RunSubmission): Promise<RunDone> => {
        const runId = ctx.key;
        // Aborted when this attempt ends (server lost, worker restarting): the engine stops,
        // nothing more is journaled and the next attempt continues from the stored journal.
        const attempt = ctx.request().attemptCompletedSignal;
        // Loaded before the engine starts: a server that cannot answer yet fails this attempt
        // (Restate retries it), never the run.
        let failRun: (error: { code: string; message: string }) => void = () => {};
        const journal = await openRestateJournal(
          o.ingress,
          runId,
          attempt,
          (error) => failRun(error),
          blobs,
        );
        const agents = providerFor(input.agentSettings);
        let tree$: SharedAllowance | undefined;
        const backend: ExecutionBackend = {
          name: 'restate',
          openJournal: async (_id, fail) => {
            failRun = fail;
            return journal;
          },
          agents: createRemoteAgents({
            ingress: o.ingress,
            name: `restate:${agents.name}`,
            simulated: agents.simulated === true,
            estimateTokens: agents.estimateTokens?.bind(agents),
            capabilities: agents.capabilities,
            signal: attempt,
            answers: blobs,
            ...(input.agentSettings ? { settings: input.agentSettings } : {}),
          }),
          // The cap is the WfSemaphore each WfAgent invocation takes (shared by all workers).
          deployment: { acquire: async () => () => {} },
          nested: createNestedRuns({
            ingress: o.ingress,
            trust: input.trust,
            signal: attempt,
            answers: blobs,
            ...(input.agentSettings ? { agentSettings: input.agentSettings } : {}),
          }),
          // One budget and one agent count for the run and its nested runs, on any worker.
          allowance: (tree) => {
            tree$ = restateAllowance(o.ingress, tree, attempt);
            return tree$;
          },
        };
        const engine = createEngine({
          agents,
          backend,
          sandbox: o.sandbox,
          recorder: withRecord(
            // Without a run store, the engine's own in-memory one, as on the embedded engine.
            o.recorder ? attemptMirror(o.recorder, begun, attempt) : createMemoryRecorder(),
            journal.recorder,
          ),
          ...engineLimits(o.limits, input.limits),
          ...(o.resolveWorkflow ? { resolveWorkflow: o.resolveWorkflow } : {}),
          ...(o.workspace ? { workspace: o.workspace } : {}),
          ...(o.readFileDeny ? { readFile: { deny: o.readFileDeny } } : {}),
        });
        let handle: Awaited<ReturnType<typeof engine.start>>;
        try {
          handle = await engine.start({
            workflow: input.workflow,
            args: input.args,
            trust: input.trust,
            runId,
            seed: input.seed,
            startTime: input.startTime,
            signal: attempt,
            ...(input.nested ? { nested: input.nested } : {}),
            ...(input.limits ? { limits: input.limits } : {}),
          });
        } catch (e) {
          // A start the engine refuses will be refused on every attempt: do not retry it.
          throw new restate.TerminalError(String((e as Error)?.message ?? e));
        }
        // wf pause / resume / stop, read now (a continued run keeps what was asked) and polled.
        const unwatch = control.watch(runId, (c) => applyControl(handle, c), { now: true });
        const done = await handle.done;
        unwatch();
        // An attempt that lost the server or its journal is not the run's outcome: the next
        // attempt continues from the journal that was kept.
        if (attempt.aborted || journal.broken()) {
          throw new Error(
            `attempt of ${runId} ended early (${done.error?.code ?? done.status}); Restate retries it`,
          );
        }
        await journal.flushed();
        // The root run's end is final here: children of its tree still running on workers (a
        // nested run's, a stopped child's) are refused their next model call.
        if (tree$ && !input.nested && done.status !== 'completed')
          await tree$.close({
            code: done.error?.code ?? 'WF_ENGINE_RUN_STOPPED',
            message: `the run ${runId} ended ${done.status}: no further model call`,
          });
        // A large result goes by reference too (awaitRun and a nesting parent fetch it).
        return done.result === undefined
          ? done
          : {
              ...done,
              result: await toRef(blobs, done.result, `the result of ${runId}`, attempt, runId),
            };
      },
    },
    options: timeouts,
  });

  return [run, agent, journalObject, semaphore, blobObject, allowanceObject] as const;
}

/**
 * The engine's limits for one run: the worker's, with the run's `maxAgents` as the cap (as
 * `wf run --max-agents` sets the embedded engine's), up to a cap the worker itself was given.
 */
function engineLimits(
  worker: Partial<EngineLimits> | undefined,
  run: RunLimits | undefined,
): { limits?: Partial<EngineLimits> } {
  const asked = run?.maxAgents;
  if (asked === undefined) return worker ? { limits: worker } : {};
  const maxAgents = worker?.maxAgents === undefined ? asked : Math.min(asked, worker.maxAgents);
  return { limits: { ...worker, maxAgents } };
}

function applyControl(handle: RunHandle, control: RunControl): void {
  if (control.run === 'stopping')
    handle.stop(control.reason ?? 'stopped through Restate (wf stop)');
  else if (control.run === 'paused') handle.pause();
  else handle.resume();
}

async function runChild(
  agents: AgentProvider,
  request: AgentRequest,
  watch: (stop: () => void) => () => void,
  meter: AgentMeter | undefined,
): Promise<AgentResult> {
  // Failures are data (the engine's AgentResult contract): a thrown launch must not make Restate
  // retry the child forever.
  try {
    const handle = await agents.start(request, new AbortController().signal, meter);
    let result: AgentResult;
    const unwatch = watch(
      () => void Promise.resolve(handle.stop('stopped by its run')).catch(() => {}),
    );
    try {
      result = await handle.result;
    } catch (e) {
      result = {
        status: 'failed',
        text: '',
        error: { code: 'WF_ENGINE_AGENT_FAILED', message: String((e as Error)?.message ?? e) },
      };
    }
    unwatch();
    try {
      await handle.dispose();
    } catch {
      // the result stands
    }
    return JSON.parse(JSON.stringify(result)) as AgentResult;
  } catch (e) {
    return {
      status: 'failed',
      text: '',
      error: { code: 'WF_ENGINE_AGENT_LAUNCH_FAILED', message: String((e as Error)?.message ?? e) },
    };
  }
}
