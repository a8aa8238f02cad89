// The embedded default provider: children that answer deterministically (same seed, same task,
// same answer), optionally scripted by `respond`. Tests assert limits with `stats()`.
import type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
  AgentUsage,
  JsonSchema,
  MeterRefusal,
  ProviderCapabilities,
} from './ports.js';

/** What `respond` may return to script one child. */
export interface SimulatedResponse {
  readonly text?: string;
  readonly structured?: unknown;
  /** What each model call spends (default: the prompt's estimate in, the answer's out). */
  readonly usage?: AgentUsage;
  /**
   * Model calls the child makes (default 1), one after another over `delayMs`, each spending
   * `usage`: a child that loops (tool calls, retries). The engine's meter is asked before each
   * and told after each, as a metering provider does.
   */
  readonly calls?: number;
  readonly delayMs?: number;
  /** `true` or a message: the child ends `failed`. */
  readonly fail?: boolean | string;
  /** Verification evidence as a provider would report it. */
  readonly verification?: AgentResult['verification'];
}

export interface SimulatedAgentsOptions {
  readonly respond?: (
    request: AgentRequest,
  ) => SimulatedResponse | undefined | Promise<SimulatedResponse | undefined>;
  /** Default child duration; 0 (the default) answers on the next microtask turn. */
  readonly delayMs?: number;
  /** Varies the generated text; default 1. */
  readonly seed?: number;
  /** Override the advertised capabilities (all true by default). */
  readonly capabilities?: Partial<ProviderCapabilities>;
  readonly name?: string;
}

export interface SimulatedAgentStats {
  readonly started: number;
  readonly completed: number;
  readonly peakActive: number;
  /** Children disposed (the engine disposes each exactly once, invariant 7). */
  readonly disposed: number;
  /** Disposals of a child that was already disposed: always 0 unless the engine has a bug. */
  readonly doubleDisposed: number;
}

export interface SimulatedAgents extends AgentProvider {
  stats(): SimulatedAgentStats;
  /** Every request started so far, in launch order. */
  requests(): readonly AgentRequest[];
  /** Messages sent to children with `wf.send`, by child id. */
  messages(): ReadonlyMap<string, readonly string[]>;
}

/** The simulated children's token estimate: their input usage for a prompt of this text. */
export function simulatedTokens(text: string): number {
  return Math.ceil(text.length / 4) + 10;
}

/** FNV-1a, 32-bit: a small deterministic hash for generated text. */
export function hashText(text: string, seed = 1): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Bounds of a generated answer. invariant 6: the schema comes from the workflow, so without them
 * `minLength: 1.5e8` padded a 150 MB string on the host thread (a 6 s stall and 700 MB, also in
 * the plugin's smoke run). A schema asking for more gets a shorter value, which then fails its
 * validation like any wrong answer.
 */
export const SIMULATED_ANSWER_LIMITS = Object.freeze({
  /** Longest generated string. */
  maxStringChars: 4_096,
  /** Most items of a generated array. */
  maxItems: 8,
  /** Characters of strings and keys in one generated answer; past it values become null. */
  maxAnswerChars: 65_536,
});

/** A deterministic value that satisfies a (simple) JSON Schema, within SIMULATED_ANSWER_LIMITS. */
export function sampleFromSchema(
  schema: unknown,
  key: string,
  depth = 0,
  budget: { chars: number } = { chars: SIMULATED_ANSWER_LIMITS.maxAnswerChars },
): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 16 || budget.chars <= 0) return null;
  const s = schema as JsonSchema;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const k of ['oneOf', 'anyOf'] as const) {
    const alts = s[k];
    if (Array.isArray(alts) && alts.length > 0)
      return sampleFromSchema(alts[0], key, depth + 1, budget);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const [k, v] of Object.entries(props)) {
        if (budget.chars <= 0) break;
        budget.chars -= k.length;
        out[k] = sampleFromSchema(v, `${key}.${k}`, depth + 1, budget);
      }
      return out;
    }
    case 'array': {
      const min = typeof s.minItems === 'number' ? Math.max(1, s.minItems) : 1;
      return Array.from({ length: Math.min(min, SIMULATED_ANSWER_LIMITS.maxItems) }, (_, i) =>
        sampleFromSchema(s.items, `${key}[${i}]`, depth + 1, budget),
      );
    }
    case 'string': {
      const text = `${key.split('.').pop() ?? 'value'}-${hashText(key).toString(36)}`;
      const cap = Math.min(SIMULATED_ANSWER_LIMITS.maxStringChars, Math.max(0, budget.chars));
      const min = typeof s.minLength === 'number' ? Math.min(s.minLength, cap) : 0;
      const max = typeof s.maxLength === 'number' ? Math.min(s.maxLength, cap) : cap;
      const out = text.padEnd(min, 'x').slice(0, Math.max(0, max));
      budget.chars -= out.length;
      return out;
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : undefined;
      const max = typeof s.maximum === 'number' ? s.maximum : undefined;
      if (min !== undefined) return type === 'integer' ? Math.ceil(min) : min;
      if (max !== undefined)
        return type === 'integer' ? Math.floor(Math.min(max, 1)) : Math.min(max, 1);
      return 1;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return null;
  }
}

const ALL_CAPABILITIES: ProviderCapabilities = {
  toolFilter: true,
  outputSchema: true,
  steer: true,
  worktree: true,
  agentOptions: true,
};

export function createSimulatedAgents(options: SimulatedAgentsOptions = {}): SimulatedAgents {
  const seed = options.seed ?? 1;
  const defaultDelay = options.delayMs ?? 0;
  const capabilities = Object.freeze({ ...ALL_CAPABILITIES, ...options.capabilities });
  let started = 0;
  let completed = 0;
  let active = 0;
  let peakActive = 0;
  let ids = 0;
  let disposed = 0;
  let doubleDisposed = 0;
  const requests: AgentRequest[] = [];
  const messages = new Map<string, string[]>();

  const defaultText = (request: AgentRequest): string => {
    const h = hashText(`${request.kind}|${request.name}|${request.prompt}`, seed).toString(36);
    return `${request.name}: simulated ${request.kind} result ${h} for "${request.prompt.slice(0, 60)}"`;
  };

  return {
    name: options.name ?? 'simulated',
    simulated: true,
    capabilities,
    stats: () => ({ started, completed, peakActive, disposed, doubleDisposed }),
    requests: () => requests,
    messages: () => messages,
    estimateTokens: simulatedTokens,
    async start(
      request: AgentRequest,
      signal: AbortSignal,
      meter?: AgentMeter,
    ): Promise<AgentHandle> {
      if (signal.aborted) throw signal.reason ?? new Error('launch aborted');
      const scripted = options.respond ? await options.respond(request) : undefined;
      if (signal.aborted) throw signal.reason ?? new Error('launch aborted');
      ids += 1;
      const id = `sim-${ids}`;
      started += 1;
      active += 1;
      if (active > peakActive) peakActive = active;
      requests.push(request);
      messages.set(id, []);

      const text = scripted?.text ?? defaultText(request);
      const structured =
        scripted && 'structured' in scripted
          ? scripted.structured
          : request.outputSchema
            ? sampleFromSchema(request.outputSchema, request.name)
            : undefined;
      const perCall: AgentUsage = scripted?.usage ?? {
        inputTokens: simulatedTokens(request.prompt),
        outputTokens: Math.ceil(text.length / 4) + 5,
        cacheReadTokens: 0,
      };
      const calls = Math.max(1, Math.floor(scripted?.calls ?? 1));
      const delay = scripted?.delayMs ?? defaultDelay;
      let spent: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 };
      /** A model call was made and has not answered yet: stopping it still bills its input. */
      let inFlight = false;
      let lastText: string | undefined;
      let settle!: (r: AgentResult) => void;
      let ended = false;
      let isDisposed = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const result = new Promise<AgentResult>((resolve) => {
        settle = resolve;
      });
      const end = (r: AgentResult) => {
        if (ended) return;
        ended = true;
        active -= 1;
        completed += 1;
        if (timer) clearTimeout(timer);
        settle(r);
      };
      const finish = () => {
        lastText = text;
        if (scripted?.fail) {
          const message = typeof scripted.fail === 'string' ? scripted.fail : 'simulated failure';
          end({
            status: 'failed',
            text,
            usage: spent,
            error: { code: 'SIMULATED_FAILURE', message },
          });
          return;
        }
        end({
          status: 'completed',
          text,
          usage: spent,
          ...(structured !== undefined ? { structured } : {}),
          ...(scripted?.verification ? { verification: scripted.verification } : {}),
        });
      };
      const add = (a: AgentUsage, b: AgentUsage): AgentUsage => ({
        inputTokens: a.inputTokens + b.inputTokens,
        outputTokens: a.outputTokens + b.outputTokens,
        cacheReadTokens: (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0),
      });
      // The child's model calls, one after another: each asked for, then spent after its share
      // of the delay, then reported.
      const run = async (): Promise<void> => {
        for (let n = 1; n <= calls; n += 1) {
          // A meter that answers at once is not awaited (one fewer turn per call).
          let refusal = meter?.beforeCall(spent);
          if (refusal && typeof (refusal as Promise<unknown>).then === 'function')
            refusal = await refusal;
          if (ended) return;
          if (refusal) {
            const { code, message } = refusal as MeterRefusal;
            end({ status: 'failed', text: lastText ?? '', usage: spent, error: { code, message } });
            return;
          }
          const share = delay / calls;
          inFlight = true;
          if (share > 0) await new Promise<void>((r) => (timer = setTimeout(r, share)));
          else await Promise.resolve();
          if (ended) return;
          inFlight = false;
          spent = add(spent, perCall);
          if (n < calls) meter?.report(spent);
        }
        finish();
      };
      void run();

      return {
        id,
        result,
        lastText: () => lastText,
        async send(message: string) {
          if (ended) throw new Error(`child ${id} has ended`);
          messages.get(id)?.push(message);
          lastText = `ack: ${message}`;
        },
        stop(reason?: string) {
          // The call in flight when stopped has read its input: charged, as a model would bill it.
          end({
            status: 'stopped',
            text: lastText ?? '',
            usage: inFlight
              ? add(spent, { inputTokens: perCall.inputTokens, outputTokens: 0 })
              : spent,
            error: { code: 'SIMULATED_STOPPED', message: reason ?? 'stopped' },
          });
        },
        dispose() {
          if (isDisposed) doubleDisposed += 1;
          else disposed += 1;
          isDisposed = true;
          if (!ended)
            end({
              status: 'stopped',
              text: lastText ?? '',
              usage: inFlight ? add(spent, perCall) : spent,
              error: { code: 'SIMULATED_DISPOSED', message: 'disposed while running' },
            });
        },
      };
    },
  };
}
