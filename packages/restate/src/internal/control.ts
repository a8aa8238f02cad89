// Controlling a run from outside its worker: wf pause / resume / stop write the run's control
// (WfJournal state), and the worker executing the run, and each worker running one of its
// children, read it. One poller per worker process, one request per run and interval, however
// many of the run's children run here; a child that ends within the interval never asks.
import { RestateBackendError } from '../errors.js';
import { callPatiently, checkUrl, httpJson, parseAnswer } from './http.js';
import type { ControlChange, RunControl } from './journal-object.js';
import { isRunId, JOURNAL_OBJECT } from './names.js';

/** How often a worker reads the control of the runs it executes or runs children of. */
export const CONTROL_POLL_MS = 1_000;

type Listener = (control: RunControl) => void;

export interface ControlWatcher {
  /** Calls `listener` with the run's control every poll; `now`: read it once at once. */
  watch(runId: string, listener: Listener, options?: { now?: boolean }): () => void;
}

export function createControlWatcher(ingress: string): ControlWatcher {
  const listeners = new Map<string, Set<Listener>>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const poll = async (runId: string) => {
    let control: RunControl;
    try {
      control = await readControl(ingress, runId);
    } catch {
      return; // the next poll asks again
    }
    for (const l of listeners.get(runId) ?? []) l(control);
  };
  const tick = () => {
    for (const runId of listeners.keys()) void poll(runId);
  };
  return {
    watch(runId, listener, options) {
      const set = listeners.get(runId) ?? new Set();
      set.add(listener);
      listeners.set(runId, set);
      if (!timer) {
        timer = setInterval(tick, CONTROL_POLL_MS);
        timer.unref();
      }
      if (options?.now) void readControl(ingress, runId).then(listener, () => {});
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(runId);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}

export async function readControl(ingress: string, runId: string): Promise<RunControl> {
  const what = `reading the control of run ${runId}`;
  return parseAnswer<RunControl>(
    what,
    await httpJson(
      'POST',
      `${ingress}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}/control`,
      null,
      {},
      undefined,
      10_000,
    ),
  );
}

/**
 * Asks a run to pause, resume or stop (`wf pause`, `wf resume`, `wf stop`), or its children to
 * stop. Resolves with the run's control as it now is. A stop is final.
 */
export async function controlRun(
  ingress: string,
  runId: string,
  change: ControlChange,
  signal?: AbortSignal,
): Promise<RunControl> {
  const base = checkUrl('ingress', ingress);
  if (!isRunId(runId))
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `not a run id: ${JSON.stringify(runId)}`,
    );
  const what = `changing the control of run ${runId}`;
  return parseAnswer<RunControl>(
    what,
    await callPatiently(
      what,
      () =>
        httpJson(
          'POST',
          `${base}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}/setControl`,
          change,
          {},
          signal,
        ),
      signal,
    ),
  );
}
