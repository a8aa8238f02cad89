// The Restate services one worker serves: WfRun (one workflow invocation per @wf run, keyed by
// run id), WfAgent (one virtual-object invocation per child, keyed `<runId>/<taskId>`),
// WfJournal (a run's durable journal) and WfSemaphore (the deployment-wide child cap).
import './sdk-setup.js';
import * as restate from '@restatedev/restate-sdk';
import type {
  AgentProvider,
  AgentRequest,
  AgentResult,
  EngineLimits,
  ExecutionBackend,
  JournalEntry,
  NestedScope,
  ResolvedWorkflow,
  RunDone,
  RunRecorder,
  SandboxLike,
  Trust,
} from '@wf/engine';
import { createEngine } from '@wf/engine';
import { type BlobPolicy, type BlobRef, blobObject, toRef } from './blobs.js';
import { openRestateJournal } from './journal-store.js';
import { createNestedRuns } from './nested.js';
import { createRemoteAgents } from './remote-agents.js';
import {
  AGENT_OBJECT,
  JOURNAL_OBJECT,
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
  /** Set for a nested run: what its parent had left. */
  readonly limits?: { readonly maxAgents: number; readonly tokenBudget?: number };
}

export interface ServicesOptions {
  readonly ingress: string;
  /** Runs the children this worker is handed (simulated agents, a DSH provider...). */
  readonly agents: AgentProvider;
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
 * The run store mirror as one attempt's engine sees it. Restate retries a run on the worker that
 * served it before (after a server restart, say): the retry's start must not be refused because
 * this process already began that run in its mirror (a disk store or a memory recorder would
 * refuse a second begin and the run would fail for a reason that is not its own).
 */
function retryTolerantMirror(inner: RunRecorder, begun: Set<string>): RunRecorder {
  return {
    begin: async (run) => {
      if (begun.has(run.runId)) return;
      await inner.begin(run);
      begun.add(run.runId);
    },
    event: (e) => inner.event(e),
    journal: (runId, entry, text) => inner.journal(runId, entry, text),
    artifact: (runId, name, value) => inner.artifact(runId, name, value),
    update: (runId, patch) => inner.update(runId, patch),
    finish: (runId, record) => inner.finish(runId, record),
    ...(inner.load
      ? { load: (runId: string) => inner.load?.(runId) ?? Promise.resolve(undefined) }
      : {}),
  };
}

export function createServices(o: ServicesOptions) {
  const blobs: BlobPolicy = { ingress: o.ingress, ...o.largeAnswers };
  const begun = new Set<string>();
  const mirror = o.recorder ? retryTolerantMirror(o.recorder, begun) : undefined;
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
        request: AgentRequest,
      ): Promise<AgentResult | BlobRef> => {
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
        const result = await toRef(
          blobs,
          await runChild(o.agents, request),
          `the answer of ${holder}`,
        );
        ctx.objectSendClient(semaphore, shardKey(shard)).release({ holder });
        return result;
      },
    },
    options: timeouts,
  });

  const journal = restate.object({
    name: JOURNAL_OBJECT,
    handlers: {
      /** Appends consecutive deliveries, keeping those before the first refused one. */
      append: async (ctx: restate.ObjectContext, batch: JournalEntry[]) => {
        let count = (await ctx.get<number>('count')) ?? 0;
        let refused = false;
        for (const entry of batch) {
          if (entry.settleSeq <= count) {
            // The same delivery again (a retried request) is fine; a different one conflicts.
            const stored = await ctx.get<JournalEntry>(`e${entry.settleSeq}`);
            if (JSON.stringify(stored) === JSON.stringify(entry)) continue;
            refused = true;
            break;
          }
          if (entry.settleSeq !== count + 1) {
            refused = true;
            break;
          }
          ctx.set(`e${entry.settleSeq}`, entry);
          count = entry.settleSeq;
        }
        ctx.set('count', count);
        return { ok: !refused, count };
      },
      /** Entries from `from` on, up to ~8 MiB of JSON (a reply must stay below the limit). */
      page: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext, input: { from: number }) => {
          const count = (await ctx.get<number>('count')) ?? 0;
          const out: JournalEntry[] = [];
          let bytes = 0;
          let i = Math.max(1, Math.floor(Number(input?.from) || 1));
          for (; i <= count && bytes < 8 * 1024 * 1024; i += 1) {
            const e = await ctx.get<JournalEntry>(`e${i}`);
            if (!e) continue;
            out.push(e);
            bytes += JSON.stringify(e).length;
          }
          return { entries: out, more: i <= count };
        },
      ),
      entries: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => {
        const count = (await ctx.get<number>('count')) ?? 0;
        const out: JournalEntry[] = [];
        for (let i = 1; i <= count; i += 1) {
          const e = await ctx.get<JournalEntry>(`e${i}`);
          if (e) out.push(e);
        }
        return out;
      }),
    },
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
        const backend: ExecutionBackend = {
          name: 'restate',
          openJournal: async (_id, fail) => {
            failRun = fail;
            return journal;
          },
          agents: createRemoteAgents({
            ingress: o.ingress,
            name: `restate:${o.agents.name}`,
            capabilities: o.agents.capabilities,
            signal: attempt,
            answers: blobs,
          }),
          // The cap is the WfSemaphore each WfAgent invocation takes (shared by all workers).
          deployment: { acquire: async () => () => {} },
          nested: createNestedRuns({
            ingress: o.ingress,
            trust: input.trust,
            signal: attempt,
            answers: blobs,
          }),
        };
        const engine = createEngine({
          agents: o.agents,
          backend,
          sandbox: o.sandbox,
          ...(mirror ? { recorder: mirror } : {}),
          ...(o.limits ? { limits: o.limits } : {}),
          ...(o.resolveWorkflow ? { resolveWorkflow: o.resolveWorkflow } : {}),
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
        const done = await handle.done;
        // An attempt that lost the server or its journal is not the run's outcome: the next
        // attempt continues from the journal that was kept.
        if (attempt.aborted || journal.broken()) {
          throw new Error(
            `attempt of ${runId} ended early (${done.error?.code ?? done.status}); Restate retries it`,
          );
        }
        await journal.flushed();
        // A large result goes by reference too (awaitRun and a nesting parent fetch it).
        return done.result === undefined
          ? done
          : { ...done, result: await toRef(blobs, done.result, `the result of ${runId}`, attempt) };
      },
    },
    options: timeouts,
  });

  return [run, agent, journal, semaphore, blobObject] as const;
}

async function runChild(agents: AgentProvider, request: AgentRequest): Promise<AgentResult> {
  // Failures are data (the engine's AgentResult contract): a thrown launch must not make Restate
  // retry the child forever.
  try {
    const handle = await agents.start(request, new AbortController().signal);
    let result: AgentResult;
    try {
      result = await handle.result;
    } catch (e) {
      result = {
        status: 'failed',
        text: '',
        error: { code: 'WF_ENGINE_AGENT_FAILED', message: String((e as Error)?.message ?? e) },
      };
    }
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
