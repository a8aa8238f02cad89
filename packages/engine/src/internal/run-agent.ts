// A run's dealings with one agent port call: launching under an abort signal, bounded waits for
// port promises, and the normalised status, usage and error of what a provider returned.
import type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
} from '../ports.js';
import type { TaskResult, TaskStatus } from '../types.js';
import { onAbort as subscribe } from './abort-fanout.js';

/**
 * provider.start, but a launch that ignores its abort signal cannot hold the run: it is given up
 * at abort, and a child published afterwards is stopped and disposed once, never used.
 */
export function launch(
  provider: AgentProvider,
  request: AgentRequest,
  signal: AbortSignal,
  meter?: AgentMeter,
): Promise<AgentHandle> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let settled = false;
    const unsubscribe = subscribe(signal, () => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
    });
    let started: Promise<AgentHandle>;
    try {
      started = Promise.resolve(provider.start(request, signal, meter));
    } catch (e) {
      started = Promise.reject(e);
    }
    started.then(
      (handle) => {
        unsubscribe();
        if (!settled) {
          settled = true;
          resolve(handle);
          return;
        }
        Promise.resolve()
          .then(() => handle.stop('launch aborted'))
          .catch(() => {})
          .then(() => handle.dispose())
          .catch(() => {});
      },
      (e: unknown) => {
        unsubscribe();
        if (!settled) {
          settled = true;
          reject(e);
        }
      },
    );
  });
}

/** Calls a port, waits for its promise but never longer than `ms`; any failure is ignored. */
export async function settleWithin(call: () => unknown, ms: number): Promise<void> {
  let value: unknown;
  try {
    value = call();
  } catch {
    return;
  }
  if (typeof (value as { then?: unknown } | null | undefined)?.then !== 'function') return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.resolve(value).catch(() => {}),
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A provider's lastText() that throws or returns a non-string counts as no text. */
export function lastTextOf(handle: AgentHandle): string | undefined {
  try {
    const t = handle.lastText?.();
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/** Provider codes are passed on only in the stable shape; anything else becomes a generic one. */
export function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{2,63}$/.test(code)
    ? code
    : 'WF_ENGINE_AGENT_FAILED';
}

export function mapStatus(r: AgentResult, request: AgentRequest): TaskStatus {
  if (r.status !== 'completed') return r.status;
  if (r.verification && !r.verification.ok) {
    return request.verification?.enforcement === 'hard' ? 'failed' : 'completed_unverified';
  }
  return 'completed';
}

export function zeroUsage(): TaskResult['usage'] {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, totalTokens: 0 };
}

export function usageOf(r: AgentResult): TaskResult['usage'] {
  const u = r.usage;
  const num = (x: unknown) =>
    typeof x === 'number' && Number.isFinite(x) && x > 0 ? Math.floor(x) : 0;
  const inputTokens = num(u?.inputTokens);
  const outputTokens = num(u?.outputTokens);
  const cacheReadTokens = num(u?.cacheReadTokens);
  return {
    inputTokens,
    outputTokens,
    cacheReadTokens,
    totalTokens: inputTokens + outputTokens + cacheReadTokens,
  };
}

export function addUsage(
  a: TaskResult['usage'],
  b: TaskResult['usage'] | undefined,
): TaskResult['usage'] {
  if (!b) return a;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

export function errorInfo(e: unknown): { code: string; message: string } {
  if (typeof e === 'object' && e !== null) {
    const x = e as { code?: unknown; message?: unknown };
    return {
      code: typeof x.code === 'string' ? x.code : 'WF_ENGINE_HOST_ERROR',
      message: typeof x.message === 'string' ? x.message : String(e),
    };
  }
  return { code: 'WF_ENGINE_HOST_ERROR', message: String(e) };
}
