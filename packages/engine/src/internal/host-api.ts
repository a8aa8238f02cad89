// The `wf` a trusted-local host function receives. It goes through the same capabilities as the
// guest prelude (validation, limits, journal, events), and mirrors the prelude's guest-side
// semantics: parallel/pipeline lanes where an ordinary failure becomes null and a run-control
// error propagates, runAgent -> null with lastFailure(), phases that tasks inherit.
import { isRunControlError } from '../errors.js';
import type {
  HostCallContext,
  HostWorkflowApi,
  TaskFailure,
  TaskInput,
  TaskResult,
  TaskSnapshot,
} from '../types.js';
import { cloneJson, deepFreeze } from './json.js';

type Caps = Readonly<Record<string, (input: unknown, ctx: HostCallContext) => Promise<unknown>>>;

interface Envelope {
  value: unknown;
  state?: { spent: number; reserved: number; agents: number };
}

export interface HostApiOptions {
  readonly runId: string;
  readonly args: unknown;
  readonly budgetTotal: number | null;
  readonly signal: AbortSignal;
  readonly track: (p: Promise<unknown>) => void;
}

export function createHostApi(caps: Caps, options: HostApiOptions): HostWorkflowApi {
  let callId = 0;
  let spent = 0;
  let reserved = 0;
  let lastFailure: TaskFailure | null = null;
  const phases: string[] = [];

  // Inputs are copied by the dispatch's validateCall (which also refuses non-JSON values); results
  // are fresh or frozen engine objects, so no extra clone is needed on this trusted path.
  const call = async (method: string, input: unknown): Promise<unknown> => {
    const cap = caps[method];
    if (!cap) throw new Error(`wf.${method} is not available`);
    callId += 1;
    const ctx: HostCallContext = { signal: options.signal, callId, setNow: noop };
    const p = cap(input, ctx);
    options.track(p);
    const env = (await p) as Envelope;
    if (env.state) {
      spent = env.state.spent;
      reserved = env.state.reserved;
    }
    return env.value;
  };

  const withPhase = (input: TaskInput): TaskInput => {
    const current = phases[phases.length - 1];
    if (input && typeof input === 'object' && input.phase === undefined && current !== undefined) {
      return { ...input, phase: current };
    }
    return input;
  };

  const lanes = async <T>(
    count: number,
    concurrency: number,
    work: (i: number) => Promise<T> | T,
  ): Promise<(T | null)[]> => {
    const out: (T | null)[] = new Array(count).fill(null);
    let cursor = 0;
    let control: unknown;
    const lane = async () => {
      while (cursor < count && control === undefined) {
        const i = cursor;
        cursor += 1;
        try {
          out[i] = await work(i);
        } catch (e) {
          if (isRunControlError(e)) {
            control = e;
            return;
          }
          lastFailure = failureOf(e);
          out[i] = null;
        }
      }
    };
    const n = Math.max(1, Math.min(count, Math.floor(concurrency) || count));
    await Promise.all(Array.from({ length: n }, lane));
    if (control !== undefined) throw control;
    return out;
  };

  const api: HostWorkflowApi = {
    runId: options.runId,
    args: deepFreeze(
      cloneJson(options.args).ok ? (cloneJson(options.args) as { value: unknown }).value : null,
    ),
    budget: Object.freeze({
      total: options.budgetTotal,
      spent: () => spent,
      remaining: () =>
        options.budgetTotal === null ? null : Math.max(0, options.budgetTotal - spent - reserved),
    }),
    async phase<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
      await call('phase', { name, state: 'started' });
      phases.push(name);
      try {
        return await fn();
      } finally {
        phases.pop();
        await call('phase', { name, state: 'completed' });
      }
    },
    spawnAgent: (input) =>
      call('spawnAgent', withPhase(input)) as Promise<{ taskId: string; name: string }>,
    async runAgent(input) {
      let result: TaskResult;
      try {
        result = (await call('runAgent', withPhase(input))) as TaskResult;
      } catch (e) {
        if (isRunControlError(e)) throw e;
        lastFailure = failureOf(e, input?.name);
        return null;
      }
      if (result.status === 'failed' || result.status === 'stopped') {
        lastFailure = {
          taskId: result.taskId,
          name: result.name,
          status: result.status,
          error: {
            code: result.error?.code ?? `WF_TASK_${result.status.toUpperCase()}`,
            message: result.error?.message ?? `task ${result.taskId} ${result.status}`,
          },
        };
        return null;
      }
      return result;
    },
    wait: (taskId, opts) =>
      call(
        'wait',
        opts?.timeoutMs === undefined ? { taskId } : { taskId, timeoutMs: opts.timeoutMs },
      ) as Promise<TaskResult>,
    snapshot: (taskId) => call('snapshot', { taskId }) as Promise<TaskSnapshot>,
    output: (taskId) => call('output', { taskId }) as Promise<TaskSnapshot>,
    send: async (taskId, text) => {
      await call('send', { taskId, text });
    },
    stop: async (taskId, reason) => {
      await call('stop', reason === undefined ? { taskId } : { taskId, reason });
    },
    parallel: (thunks, opts) =>
      lanes(thunks.length, opts?.concurrency ?? thunks.length, (i) =>
        (thunks[i] as () => Promise<never>)(),
      ),
    pipeline: (items, ...stages) =>
      lanes(items.length, items.length, async (i) => {
        let value: unknown = items[i];
        for (const stage of stages) value = await stage(value, items[i], i);
        return value;
      }),
    synthesize: (input) => call('synthesize', input) as Promise<{ text: string }>,
    workflow: (name, args) => call('workflow', args === undefined ? { name } : { name, args }),
    artifact: (name, value) =>
      call('artifact', { name, value }) as Promise<{ name: string; path: string; ref: string }>,
    log(message) {
      const input = typeof message === 'string' ? { message } : message;
      call('log', input).catch((e) => {
        lastFailure = failureOf(e);
      });
    },
    readFile: (path) => call('readFile', { path }) as Promise<string>,
    lastFailure: () => lastFailure,
  };
  return Object.freeze(api);
}

const noop = () => {};

function failureOf(e: unknown, name?: unknown): TaskFailure {
  const x = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
  return {
    taskId: null,
    name: typeof name === 'string' ? name : '',
    status: 'failed',
    error: {
      code: typeof x.code === 'string' ? x.code : 'WF_WORKFLOW_ERROR',
      message: typeof x.message === 'string' ? x.message : String(e),
    },
  };
}
