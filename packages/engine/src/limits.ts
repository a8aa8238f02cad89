// Engine limits: the defaults, their validation at createEngine, what the sandbox is given, and
// the per-run wall clock that counts only unpaused time.
import { EngineError } from './errors.js';
import type { EngineLimits } from './types.js';

export const DEFAULT_ENGINE_LIMITS: EngineLimits = Object.freeze({
  maxAgents: 100,
  maxConcurrency: 8,
  deploymentConcurrency: 16,
  wallMs: null,
  tokenBudget: null,
  childWallMs: null,
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

export function resolveLimits(patch: Partial<EngineLimits> | undefined): EngineLimits {
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
  for (const key of NULLABLE_LIMITS) {
    const v = out[key];
    if (v !== null && (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)) {
      throw new EngineError(
        'WF_ENGINE_INVALID_START',
        `createEngine: limits.${key} must be null or a positive integer (got ${String(v)})`,
      );
    }
  }
  return Object.freeze(out) as unknown as EngineLimits;
}

/** Limits where null means "none". */
const NULLABLE_LIMITS = ['wallMs', 'tokenBudget', 'childWallMs'] as const;

/** The tighter of two optional caps (null or undefined: no cap). */
export function tighter(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  return Math.min(a, b);
}

/** Budget and wall warnings are emitted once each, when this share is used. */
export const WARN_RATIO = 0.8;

/**
 * Tokens reserved for a task without `maxTokens`: the engine default, but never more than an even
 * share of the budget over the run's concurrency, so a small budget still admits its first
 * children (a 10,000-token budget would otherwise refuse every default task of 16,000).
 */
export function defaultAllocation(
  budgetTotal: number,
  defaultTaskTokens: number,
  concurrency: number,
): number {
  return Math.min(defaultTaskTokens, Math.max(1, Math.floor(budgetTotal / concurrency)));
}

/**
 * The sandbox's own wall limit is lifted to ~23 days (below the timer maximum, which the sandbox adds grace to): the engine keeps the run's wall
 * limit itself, because only it knows about pause (a paused run does not time out). Outstanding
 * calls may exceed the sandbox default when a workflow fans out wider than its concurrency.
 */
export function sandboxLimits(limits: EngineLimits, maxAgents: number): { [key: string]: number } {
  return {
    wallMs: 2_000_000_000,
    maxOutstandingCalls: Math.max(256, maxAgents * 2 + 64),
    maxHostCalls: Math.max(limits.maxCalls + 1, 1),
    ...limits.sandbox,
  };
}

/** The optional per-run wall limit, counting only unpaused time. */
export interface WallClock {
  readonly limitMs: number | null;
  /** `fn` at the limit; `warn` once, when WARN_RATIO of it is used. */
  start(fn: () => void, warn?: (usedMs: number) => void): void;
  pause(): void;
  resume(): void;
  stop(): void;
}

export function createWallClock(limitMs: number | null): WallClock {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let warnTimer: ReturnType<typeof setTimeout> | undefined;
  let remaining = limitMs ?? 0;
  let since = 0;
  let onExpire: (() => void) | undefined;
  let onWarn: ((usedMs: number) => void) | undefined;
  let running = false;
  const warnAfter = () => remaining - (limitMs ?? 0) * (1 - WARN_RATIO);
  const arm = () => {
    if (limitMs === null || !onExpire) return;
    since = Date.now();
    timer = setTimeout(() => onExpire?.(), Math.max(0, remaining));
    if (onWarn) {
      const warn = onWarn;
      warnTimer = setTimeout(
        () => {
          onWarn = undefined;
          warn(limitMs - remaining + (Date.now() - since));
        },
        Math.max(0, warnAfter()),
      );
    }
    running = true;
  };
  const disarm = () => {
    if (!running) return;
    clearTimeout(timer);
    clearTimeout(warnTimer);
    remaining -= Date.now() - since;
    running = false;
  };
  return {
    limitMs,
    start(fn: () => void, warn?: (usedMs: number) => void) {
      onExpire = fn;
      onWarn = warn;
      arm();
    },
    pause: disarm,
    resume() {
      if (!running) arm();
    },
    stop() {
      disarm();
      onExpire = undefined;
      onWarn = undefined;
    },
  };
}
