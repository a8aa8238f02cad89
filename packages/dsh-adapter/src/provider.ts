// The engine's AgentProvider over DSH `ctx.subagents`. Capabilities are checked before launch
// (DSH would reject too, but we refuse with a clear code first); read-only tasks get a
// fail-closed allow-list; children never see our own tools; `maxTokens` is left unset unless the
// task or a configured tier asks (children then inherit the model default: fixed 4k/8k/16k
// ceilings truncated reasoning children of the earlier plugin).
import { randomUUID } from 'node:crypto';
import type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
  AgentUsage,
  MeterRefusal,
  ModelTier,
  ProviderCapabilities,
} from '@wf/engine';
import { DshAdapterError } from './errors.js';
import type {
  HostAgent,
  HostRequestHooks,
  HostSubagentResult,
  HostSubagentRun,
  HostSubagentStartRequest,
  HostSubagents,
  HostTools,
  HostUserMessage,
} from './host.js';
import type { NativeAgentOutcome, NativeRunEvents } from './native-events.js';
import { readSessionEvents, summarizeChildEvents, textOfBlocks } from './session-events.js';
import {
  collectEvidence,
  evaluateVerification,
  fingerprintWorkspace,
  needsFingerprint,
  type VerificationOutcome,
  type WorkspaceFingerprint,
} from './verification.js';

/** The trusted read-only tool set; a read-only child sees these, minus what the parent lacks. */
export const DEFAULT_READ_ONLY_TOOLS: readonly string[] = [
  'read',
  'read_image',
  'glob',
  'grep',
  'lsp',
];
/** At most this many same-agent repair turns after failed hard verification. */
export const MAX_VERIFICATION_REPAIRS = 2;

export interface TierRoute {
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly maxTokens?: number | undefined;
}

export interface DshAgentProviderOptions {
  readonly subagents: HostSubagents;
  /** `ctx.tools`, to read the parent's visible tools for the read-only allow-list. */
  readonly tools?: HostTools | undefined;
  /** The agent whose children these are (the tool's calling agent). */
  readonly parent: HostAgent;
  /** Subagent transport (`spawn`, `fork`...); default `spawn`. */
  readonly transport?: string | undefined;
  readonly readOnlyTools?: readonly string[] | undefined;
  /** Our own tool names: hidden from every child so a workflow cannot recurse through them. */
  readonly ownToolNames?: readonly string[] | undefined;
  readonly tiers?: { readonly [K in ModelTier]?: TierRoute | undefined } | undefined;
  readonly nativeEvents?: NativeRunEvents | undefined;
  /** Workspace for verification; default the parent session's cwd. */
  readonly cwd?: string | undefined;
  /** Source tag of steering/repair messages. */
  readonly pluginName?: string | undefined;
  /**
   * Model calls (`assistant/message` entries in the child's session) one child may make before it
   * is stopped and fails `WF_DSH_CHILD_LIMIT`; 0 or unset: no cap. A child stuck in a
   * structured-output retry loop made 7,240 calls in 12 minutes before this existed.
   */
  readonly maxChildModelCalls?: number | undefined;
  /** How often a running child's session is counted against `maxChildModelCalls`; default 500 ms. */
  readonly childWatchMs?: number | undefined;
  /**
   * The host's `agent/request` hook (the plugin's context). With it, a metered child's usage so
   * far (its session's `assistant/message` usage) is charged and the engine asked before each of
   * its model requests: a refused request is never sent (the child ends failed with the refusal).
   * Without it the child is charged as the watch reads its session and when it ends.
   */
  readonly hooks?: HostRequestHooks | undefined;
}

/**
 * DSH's own token estimate (its token meter's fixed-density heuristic): four characters a token,
 * plus 4 for the text block and 4 for the message's role framing.
 */
export function dshEstimateTokens(text: string): number {
  return Math.ceil(text.length / 4) + 8;
}

const NO_USAGE: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 };

/** A child's usage so far, as its session reports it. */
function sessionUsage(agent: HostAgent | undefined): AgentUsage {
  return summarizeChildEvents(readSessionEvents(agent?.session)).usage ?? NO_USAGE;
}

/**
 * Gates each model request of one child on the engine's meter (the `agent/request` waterfall,
 * which the host runs before every request, retries included). A request from a child of the same
 * parent that arrives before this child's id is known waits for it, so the first request is
 * gated too. Returns the disposer.
 */
function gateRequests(
  hooks: HostRequestHooks,
  parentSession: string,
  child: Promise<string | undefined>,
  meter: AgentMeter,
  refuse: (refusal: MeterRefusal) => void,
): () => void {
  let id: string | undefined;
  let known = false;
  void child.then(
    (value) => {
      id = value;
      known = true;
    },
    () => {
      known = true;
    },
  );
  const listener = async (
    payload: { readonly agent?: HostAgent },
    next: () => Promise<unknown>,
  ): Promise<unknown> => {
    const agent = payload?.agent;
    if (!known) {
      if (agent?.session?.header?.parentSession !== parentSession) return next();
      id = await child.catch(() => undefined);
    }
    if (id === undefined || String(agent?.id) !== id) return next();
    const refusal = await meter.beforeCall(sessionUsage(agent));
    if (refusal) {
      refuse(refusal);
      throw new DshAdapterError('WF_DSH_CHILD_LIMIT', refusal.message);
    }
    return next();
  };
  let disposer: unknown;
  try {
    disposer = hooks.on('agent/request', listener);
  } catch {
    disposer = undefined;
  }
  return () => {
    if (typeof disposer === 'function') {
      try {
        disposer();
      } catch {
        // already gone with the plugin
      }
    }
  };
}

/** Model calls a child has made so far: its session's `assistant/message` entries. */
export function countModelCalls(session: HostAgent['session'] | undefined): number {
  let n = 0;
  for (const e of readSessionEvents(session).events) if (e?.type === 'assistant/message') n += 1;
  return n;
}

export interface DshAgentProvider extends AgentProvider {
  /** Ids of children this provider launched that have not been disposed. */
  activeChildIds(): readonly string[];
  /** Whether an agent id is (or was) one of this provider's children. */
  isChild(agentId: string): boolean;
}

const DEFAULT_STOP = 'stopped by the workflow';

function userMessage(text: string, plugin: string): HostUserMessage {
  return Object.freeze({
    id: randomUUID(),
    role: 'user' as const,
    content: Object.freeze([Object.freeze({ type: 'text', text })]),
    source: Object.freeze({ kind: 'plugin', plugin, form: 'relay' }),
  });
}

/** Computes the read-only allow-list: trusted set ∩ parent-visible, minus our own tools. */
export function readOnlyAllowList(
  tools: HostTools | undefined,
  parent: HostAgent,
  trusted: readonly string[],
  own: readonly string[],
): string[] {
  let visible: Set<string>;
  try {
    visible = new Set((tools?.schemas(parent) ?? []).map((s) => s.name));
  } catch {
    visible = new Set(); // fail closed: a child with no tools is still read-only
  }
  return trusted.filter((t) => visible.has(t) && !own.includes(t) && t !== 'run_code');
}

function visibleOwnTools(
  tools: HostTools | undefined,
  parent: HostAgent,
  own: readonly string[],
): string[] {
  try {
    const visible = new Set((tools?.schemas(parent) ?? []).map((s) => s.name));
    return own.filter((t) => visible.has(t));
  } catch {
    return [];
  }
}

export function createDshAgentProvider(options: DshAgentProviderOptions): DshAgentProvider {
  const transport = options.transport ?? 'spawn';
  const trusted = options.readOnlyTools ?? DEFAULT_READ_ONLY_TOOLS;
  const own = options.ownToolNames ?? [];
  const plugin = options.pluginName ?? '@wf/plugin';
  const active = new Set<string>();
  const everLaunched = new Set<string>();

  const hostCaps = (name: string) => {
    try {
      return options.subagents.getProvider(name)?.capabilities;
    } catch {
      return undefined;
    }
  };

  const capabilities: ProviderCapabilities = {
    get toolFilter() {
      return hostCaps(transport)?.toolFilter === true;
    },
    get outputSchema() {
      return hostCaps(transport)?.outputSchema === true;
    },
    steer: true,
    worktree: false,
    // rc.8 has no agentOptions flag and always accepts them; a later host may declare it.
    get agentOptions() {
      return hostCaps(transport)?.agentOptions !== false;
    },
  };

  async function start(
    request: AgentRequest,
    signal: AbortSignal,
    meter?: AgentMeter,
  ): Promise<AgentHandle> {
    const name = request.subagentType ?? transport;
    const caps = hostCaps(name);
    if (!caps)
      throw new DshAdapterError(
        'WF_DSH_PROVIDER_MISSING',
        `task "${request.name}": DSH subagent provider "${name}" is not mounted`,
      );
    if ((request.readOnly || request.toolFree) && caps.toolFilter !== true)
      throw new DshAdapterError(
        'WF_DSH_CAPABILITY_MISSING',
        `task "${request.name}" is read-only, but DSH provider "${name}" cannot restrict tools (no toolFilter capability); refused before launch`,
      );
    if (request.outputSchema && caps.outputSchema !== true)
      throw new DshAdapterError(
        'WF_DSH_CAPABILITY_MISSING',
        `task "${request.name}" asks for structured output, but DSH provider "${name}" has no outputSchema capability; refused before launch`,
      );
    if (request.isolation === 'worktree')
      throw new DshAdapterError(
        'WF_DSH_CAPABILITY_MISSING',
        `task "${request.name}" asks for worktree isolation, which the DSH adapter does not provide`,
      );
    if (signal.aborted)
      throw new DshAdapterError('WF_DSH_LAUNCH_FAILED', `task "${request.name}": launch aborted`);

    let toolFilter: HostSubagentStartRequest['toolFilter'];
    // A tool-free child (the structured-output repair) gets an empty allow-list: fail closed.
    if (request.toolFree) toolFilter = { allow: [] };
    else if (request.readOnly)
      toolFilter = { allow: readOnlyAllowList(options.tools, options.parent, trusted, own) };
    else if (caps.toolFilter === true) {
      const hide = visibleOwnTools(options.tools, options.parent, own);
      if (hide.length > 0) toolFilter = { deny: hide };
    }

    // Route: an explicit provider/model shadows the tier; maxTokens only when asked for.
    const tier = request.modelHint ? options.tiers?.[request.modelHint] : undefined;
    const agentOptions: { provider?: string; model?: string; maxTokens?: number } = {};
    const llmProvider = request.provider ?? tier?.provider;
    const model = request.model ?? tier?.model;
    const maxTokens = request.maxTokens ?? tier?.maxTokens;
    if (llmProvider) agentOptions.provider = llmProvider;
    if (model) agentOptions.model = model;
    if (maxTokens !== undefined) agentOptions.maxTokens = maxTokens;

    const cwd = options.cwd ?? options.parent.session.header.cwd ?? process.cwd();
    const before: WorkspaceFingerprint | undefined = needsFingerprint(request.verification)
      ? await fingerprintWorkspace(cwd, request.verification?.requiredChangedPaths ?? [])
      : undefined;

    // Our own controller: the engine's signal governs the launch only; after publication the
    // child is stopped through `stop()` (a tool step's signal must not reach a background run).
    const controller = new AbortController();
    const onLaunchAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onLaunchAbort, { once: true });

    const startRequest: HostSubagentStartRequest = {
      label: request.name,
      prompt: [{ type: 'text', text: request.prompt }],
      parent: options.parent,
      signal: controller.signal,
      ...(Object.keys(agentOptions).length > 0 ? { agentOptions } : {}),
      ...(request.outputSchema ? { outputSchema: request.outputSchema } : {}),
      ...(toolFilter ? { toolFilter } : {}),
    };
    // The budget gate is in place before the child exists: its first request is gated too.
    let budgetRefusal: MeterRefusal | undefined;
    let onRefused: (refusal: MeterRefusal) => void = () => {};
    let published!: (id: string | undefined) => void;
    const childId$ = new Promise<string | undefined>((resolve) => {
      published = resolve;
    });
    // A launch given up (its signal aborted while the host hangs in start) must not hold other
    // agents' requests that wait to learn whether they are this child's.
    const release = () => published(undefined);
    signal.addEventListener('abort', release, { once: true });
    const ungate =
      meter && options.hooks
        ? gateRequests(options.hooks, options.parent.session.id, childId$, meter, (refusal) => {
            budgetRefusal ??= refusal;
            onRefused(refusal);
          })
        : () => {};
    let run: HostSubagentRun;
    try {
      run = await options.subagents.start(name, startRequest);
      published(String(run.id));
    } catch (error) {
      published(undefined);
      ungate();
      throw new DshAdapterError(
        'WF_DSH_LAUNCH_FAILED',
        `task "${request.name}": DSH refused to start the child: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      signal.removeEventListener('abort', onLaunchAbort);
      signal.removeEventListener('abort', release);
    }

    const childId = String(run.id);
    active.add(childId);
    everLaunched.add(childId);
    const nativeSeq = options.nativeEvents?.agentStart({
      runId: request.runId,
      label: request.name,
      phase: request.phase,
      childId,
    });
    let nativeEnded = false;
    const endNative = (outcome: NativeAgentOutcome) => {
      if (nativeEnded || nativeSeq === undefined) return;
      nativeEnded = true;
      options.nativeEvents?.agentEnd(request.runId, nativeSeq, outcome);
    };
    let stopped: string | undefined;
    let overLimit: string | undefined;

    // The per-child model-call cap, counted from the child's own session while it runs; the
    // same watch charges the child's spending so far, so other children learn of it sooner.
    const cap = options.maxChildModelCalls ?? 0;
    const watch =
      cap > 0 || meter
        ? setInterval(
            () => {
              if (stopped) return;
              meter?.report(sessionUsage(run.localAgent));
              if (cap <= 0) return;
              const calls = countModelCalls(run.localAgent?.session);
              if (calls <= cap) return;
              overLimit = `task "${request.name}" made ${calls} model calls, more than the per-child cap of ${cap} (maxChildModelCalls); the child was stopped`;
              stopChild(overLimit);
            },
            Math.max(10, options.childWatchMs ?? 500),
          )
        : undefined;
    watch?.unref?.();
    const stopChild = (reason: string) => {
      if (stopped) return;
      stopped = reason;
      controller.abort(new Error(stopped));
      try {
        run.localAgent?.cancel?.({ kind: 'parent' });
      } catch {
        // already idle or gone
      }
    };
    onRefused = (refusal) => stopChild(refusal.message);
    if (budgetRefusal) stopChild(budgetRefusal.message);

    const finish = async (): Promise<AgentResult> => {
      let host: HostSubagentResult;
      try {
        host = await run.result;
      } catch (error) {
        clearInterval(watch);
        return {
          status: stopped && !overLimit ? 'stopped' : 'failed',
          text: '',
          error: {
            code: 'WF_DSH_CHILD_FAILED',
            message: `DSH child infrastructure fault: ${error instanceof Error ? error.message : String(error)}`,
          },
        };
      }
      clearInterval(watch);
      const agent = run.localAgent;
      const activity = summarizeChildEvents(readSessionEvents(agent?.session));
      const text = textOfBlocks(host.output) || activity.lastText || '';
      const base = {
        text,
        ...(activity.usage ? { usage: activity.usage } : {}),
      };
      // The engine refused the child's next model request (its run's token budget is used up).
      if (budgetRefusal)
        return {
          status: 'failed',
          ...base,
          error: { code: budgetRefusal.code, message: budgetRefusal.message },
        };
      if (overLimit)
        return {
          status: 'failed',
          ...base,
          error: { code: 'WF_DSH_CHILD_LIMIT', message: overLimit },
        };
      if (stopped || host.stopReason === 'aborted')
        return {
          status: 'stopped',
          ...base,
          error: { code: 'WF_DSH_CHILD_FAILED', message: stopped ?? 'the child was aborted' },
        };
      if (host.stopReason !== 'completed')
        return {
          status: 'failed',
          ...base,
          error: {
            code: 'WF_DSH_CHILD_FAILED',
            message: `child ended with stopReason "${host.stopReason}"${host.diagnostic ? `: ${host.diagnostic.slice(0, 500)}` : ''}`,
          },
        };
      if (request.outputSchema && host.structured === undefined)
        return {
          status: 'failed',
          ...base,
          error: {
            code: 'WF_DSH_STRUCTURED_INVALID',
            message: 'the child completed without calling structured_output',
          },
        };
      const structured = request.outputSchema ? { structured: host.structured } : {};
      if (!request.verification) return { status: 'completed', ...base, ...structured };

      // Verification, with at most two same-agent repair turns for hard enforcement.
      const hard = (request.verification.enforcement ?? 'hard') === 'hard';
      let finalText = text;
      let verdict: VerificationOutcome = await verifyOnce(finalText);
      for (let i = 0; !verdict.ok && hard && i < MAX_VERIFICATION_REPAIRS; i++) {
        if (stopped || !agent?.followup || !agent.whenIdle) break;
        agent.followup(
          userMessage(
            `Your result did not pass verification:\n- ${verdict.reasons.join('\n- ')}\nFix this now, then report what you did.`,
            plugin,
          ),
        );
        await agent.whenIdle();
        finalText = summarizeChildEvents(readSessionEvents(agent.session)).lastText ?? finalText;
        verdict = await verifyOnce(finalText);
      }
      const usage = summarizeChildEvents(readSessionEvents(agent?.session)).usage;
      const out = {
        text: finalText,
        ...(usage ? { usage } : base.usage ? { usage: base.usage } : {}),
        ...structured,
        verification: {
          ok: verdict.ok,
          reasons: verdict.reasons,
          readPaths: verdict.readPaths,
          changedPaths: verdict.changedPaths,
        },
      };
      if (!verdict.ok && hard)
        return {
          status: 'failed',
          ...out,
          error: { code: 'WF_DSH_VERIFICATION_FAILED', message: verdict.reasons.join('; ') },
        };
      return { status: 'completed', ...out };

      async function verifyOnce(final: string): Promise<VerificationOutcome> {
        const calls = summarizeChildEvents(readSessionEvents(agent?.session)).toolCalls;
        const after = before
          ? await fingerprintWorkspace(cwd, request.verification?.requiredChangedPaths ?? [])
          : undefined;
        return evaluateVerification({
          request: request.verification ?? {},
          cwd,
          evidence: collectEvidence(calls),
          finalText: final,
          before,
          after,
        });
      }
    };

    const result = finish().then(
      (r) => {
        endNative(
          r.status === 'completed' ? 'completed' : r.status === 'stopped' ? 'cancelled' : 'failed',
        );
        return r;
      },
      (error: unknown): AgentResult => {
        endNative('failed');
        return {
          status: 'failed',
          text: '',
          error: {
            code: 'WF_DSH_CHILD_FAILED',
            message: error instanceof Error ? error.message : String(error),
          },
        };
      },
    );

    let disposed: Promise<void> | undefined;
    return {
      id: childId,
      result,
      async send(text: string) {
        const agent = run.localAgent;
        if (!agent?.steer || stopped || !active.has(childId))
          throw new DshAdapterError(
            'WF_DSH_SEND_UNAVAILABLE',
            `task "${request.name}": the child is remote or no longer running; cannot steer it`,
          );
        agent.steer(userMessage(text, plugin));
      },
      stop(reason?: string) {
        stopChild(reason ?? DEFAULT_STOP);
      },
      dispose() {
        clearInterval(watch);
        ungate();
        disposed ??= (async () => {
          try {
            await run.dispose();
          } catch {
            // idempotent host disposal; a failure here must not fail the run
          } finally {
            active.delete(childId);
            endNative('cancelled'); // invariant 7: no agent-start without its agent-end
          }
        })();
        return disposed;
      },
      lastText() {
        return summarizeChildEvents(readSessionEvents(run.localAgent?.session)).lastText;
      },
    };
  }

  return {
    name: `dsh:${transport}`,
    capabilities,
    estimateTokens: dshEstimateTokens,
    start,
    activeChildIds: () => [...active],
    isChild: (id) => everLaunched.has(id),
  };
}
