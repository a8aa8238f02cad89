// The trusted guest prelude: the source of a function expression the sandbox evaluates before
// the workflow and calls as prelude(caps, meta). It builds the `wf` object inside the guest:
// parallel/pipeline lanes (an ordinary failure becomes null, a run-control error propagates),
// phase (tasks inherit it), a budget mirror fed by every settled call so `wf.budget.spent()` /
// `remaining()` are synchronous, fire-and-forget `log`, `runAgent` -> null with `lastFailure()`,
// and a global `console` whose methods write through `wf.log`.

import { RUN_CONTROL_CHECK_SOURCE } from '../run-control.js';

/** Per-run constants baked into the prelude (the sandbox only passes `{ seed }` as meta). */
export interface GuestPreludeInit {
  readonly runId?: string;
  /** The run's validated args (JSON); the guest sees a deep-frozen copy as `wf.args`. */
  readonly args?: unknown;
  /** The manifest's tokenBudget, or null when the run has none. */
  readonly budgetTotal?: number | null;
}

// Kept as text (not a stringified function) so no build tool can inject helpers into it.
const PRELUDE_BODY = `
  'use strict';
  const INIT = JSON.parse(__INIT__);
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const promiseAll = Promise.all.bind(Promise);
  const assign = Object.assign;
  const total = typeof INIT.budgetTotal === 'number' ? INIT.budgetTotal : null;
  let spent = 0;
  let reserved = 0;
  let lastFailure = null;
  const phases = [];
  const MAX_CONSOLE_CHARS = 10000;

  const isControl = __IS_RUN_CONTROL__;
  const failureOf = (e, name) => {
    const code = e !== null && typeof e === 'object' && typeof e.code === 'string' ? e.code : 'WF_WORKFLOW_ERROR';
    const message = e !== null && typeof e === 'object' && typeof e.message === 'string' ? e.message : String(e);
    return freeze({ taskId: null, name: typeof name === 'string' ? name : '', status: 'failed', error: freeze({ code, message }) });
  };
  const call = (method, input) =>
    caps[method](input).then((env) => {
      if (env !== null && typeof env === 'object' && env.state !== null && typeof env.state === 'object') {
        if (typeof env.state.spent === 'number') spent = env.state.spent;
        if (typeof env.state.reserved === 'number') reserved = env.state.reserved;
      }
      return env !== null && typeof env === 'object' ? env.value : null;
    });
  const withPhase = (input) => {
    const current = phases.length > 0 ? phases[phases.length - 1] : undefined;
    if (current !== undefined && input !== null && typeof input === 'object' && !isArray(input) &&
        input.phase === undefined) {
      return assign({}, input, { phase: current });
    }
    return input;
  };
  const checkConcurrency = (name, options, fallback) => {
    if (options === undefined || options === null) return fallback;
    if (typeof options !== 'object') throw new TypeErrorCtor(name + ': options must be an object');
    const c = options.concurrency;
    if (c === undefined) return fallback;
    if (typeof c !== 'number' || !(c >= 1) || c !== Math.floor(c)) {
      throw new TypeErrorCtor(name + ': options.concurrency must be a positive integer (got ' + String(c) + ')');
    }
    return c;
  };
  // invariant 1 (bridge-internal containers never invoke guest code to build themselves): read
  // each item exactly once into a fresh array, no slice() (Symbol.species) and no iterator, and
  // check the copy, so a getter or species constructor cannot swap an item after the check.
  const copyList = (source) => {
    const n = source.length;
    const copy = [];
    for (let i = 0; i < n; i += 1) copy[i] = source[i];
    return copy;
  };
  const lanes = (count, width, work) => {
    const out = [];
    for (let i = 0; i < count; i += 1) out.push(null);
    let cursor = 0;
    let control;
    let failed = false;
    const lane = async () => {
      while (cursor < count && !failed) {
        const i = cursor;
        cursor += 1;
        try {
          out[i] = await work(i);
        } catch (e) {
          if (isControl(e)) {
            if (!failed) { failed = true; control = e; }
            return;
          }
          lastFailure = failureOf(e);
          out[i] = null;
        }
      }
    };
    const n = Math.max(1, Math.min(count, width));
    const all = [];
    for (let i = 0; i < n; i += 1) all.push(lane());
    return promiseAll(all).then(() => {
      if (failed) throw control;
      return out;
    });
  };

  // Task methods take the id or the handle spawnAgent resolved with ({ taskId, name }).
  const idOf = (task) => {
    if (task === null || typeof task !== 'object') return task;
    const id = task.taskId;
    return typeof id === 'string' ? id : task;
  };

  const wf = {
    runId: typeof INIT.runId === 'string' ? INIT.runId : '',
    args: INIT.args === undefined ? null : INIT.args,
    budget: {
      total,
      spent: () => spent,
      remaining: () => (total === null ? null : Math.max(0, total - spent - reserved)),
    },
    async phase(name, fn) {
      if (typeof fn !== 'function') throw new TypeErrorCtor('wf.phase: the second argument must be a function');
      await call('phase', { name, state: 'started' });
      phases.push(name);
      try {
        return await fn();
      } finally {
        phases.pop();
        await call('phase', { name, state: 'completed' });
      }
    },
    spawnAgent: (input) => call('spawnAgent', withPhase(input)),
    async runAgent(input) {
      let result;
      try {
        result = await call('runAgent', withPhase(input));
      } catch (e) {
        if (isControl(e)) throw e;
        lastFailure = failureOf(e, input !== null && typeof input === 'object' ? input.name : undefined);
        return null;
      }
      if (result !== null && typeof result === 'object' &&
          (result.status === 'failed' || result.status === 'stopped')) {
        const error = result.error !== null && typeof result.error === 'object' ? result.error : {};
        lastFailure = freeze({
          taskId: result.taskId,
          name: result.name,
          status: result.status,
          error: freeze({
            code: typeof error.code === 'string' ? error.code
              : result.status === 'stopped' ? 'WF_WORKFLOW_TASK_STOPPED' : 'WF_WORKFLOW_TASK_FAILED',
            message: typeof error.message === 'string' ? error.message : 'task ' + result.taskId + ' ' + result.status,
          }),
        });
        return null;
      }
      return result;
    },
    wait: (task, options) => call('wait', assign({}, options, { taskId: idOf(task) })),
    snapshot: (task) => call('snapshot', { taskId: idOf(task) }),
    output: (task) => call('output', { taskId: idOf(task) }),
    send: (task, text) => call('send', { taskId: idOf(task), text }).then(() => undefined),
    stop: (task, reason) => {
      const taskId = idOf(task);
      return call('stop', reason === undefined ? { taskId } : { taskId, reason }).then(() => undefined);
    },
    parallel(thunks, options) {
      if (!isArray(thunks)) return PromiseCtor.reject(new TypeErrorCtor('wf.parallel: the first argument must be an array of functions'));
      let list;
      try { list = copyList(thunks); } catch (e) { return PromiseCtor.reject(e); }
      for (let i = 0; i < list.length; i += 1) {
        if (typeof list[i] !== 'function') {
          return PromiseCtor.reject(new TypeErrorCtor('wf.parallel: item ' + i + ' is not a function'));
        }
      }
      let width;
      try { width = checkConcurrency('wf.parallel', options, list.length); } catch (e) { return PromiseCtor.reject(e); }
      return lanes(list.length, width, (i) => list[i]());
    },
    pipeline(items, ...stages) {
      if (!isArray(items)) return PromiseCtor.reject(new TypeErrorCtor('wf.pipeline: the first argument must be an array'));
      for (let s = 0; s < stages.length; s += 1) {
        if (typeof stages[s] !== 'function') {
          return PromiseCtor.reject(new TypeErrorCtor('wf.pipeline: stage ' + s + ' is not a function'));
        }
      }
      let list;
      try { list = copyList(items); } catch (e) { return PromiseCtor.reject(e); }
      return lanes(list.length, list.length, async (i) => {
        let value = list[i];
        for (let s = 0; s < stages.length; s += 1) value = await stages[s](value, list[i], i);
        return value;
      });
    },
    synthesize: (input) => call('synthesize', input),
    workflow: (name, args) => call('workflow', args === undefined ? { name } : { name, args }),
    artifact: (name, value) => call('artifact', { name, value }),
    log(message) {
      const input = typeof message === 'string' ? { message } : message;
      // Fire and forget for the workflow, but the sandbox tracks the call to quiescence.
      call('log', input).then(undefined, (e) => { lastFailure = failureOf(e); });
    },
    readFile: (path) => call('readFile', { path }),
    lastFailure: () => lastFailure,
  };

  // console.* writes through wf.log, so it is bounded and recorded like every log. Defined by
  // the prelude (trusted guest code): a frozen object of guest closures, no host object.
  const show = (value) => {
    try {
      if (typeof value === 'string') return value;
      if (value instanceof Error) return String(value.name) + ': ' + String(value.message);
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch (e) {
      return '[unprintable value]';
    }
  };
  const consoleLine = (level) => freeze((...values) => {
    let text = '';
    for (let i = 0; i < values.length; i += 1) text += (i > 0 ? ' ' : '') + show(values[i]);
    if (text.length > MAX_CONSOLE_CHARS) text = text.slice(0, MAX_CONSOLE_CHARS) + ' ... (truncated)';
    wf.log(level === '' ? text : '[' + level + '] ' + text);
  });
  // Only where there is none: the engine also compiles this prelude in the Node realm for
  // trusted-local workflows, whose console must stay Node's own.
  if (typeof globalThis.console === 'undefined') {
    Object.defineProperty(globalThis, 'console', {
      value: freeze({
        log: consoleLine(''),
        info: consoleLine(''),
        debug: consoleLine(''),
        trace: consoleLine(''),
        dir: consoleLine(''),
        table: consoleLine(''),
        warn: consoleLine('warn'),
        error: consoleLine('error'),
      }),
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }
  return wf;
`;

// The run-control predicate is the one bridge definition (run-control.ts), spliced in as text.
const PRELUDE_TEMPLATE = PRELUDE_BODY.replace('__IS_RUN_CONTROL__', () => RUN_CONTROL_CHECK_SOURCE);

/** The prelude source for one run: a function expression `(caps, meta) => wf`. */
export function createGuestPrelude(init: GuestPreludeInit = {}): string {
  const data = JSON.stringify({
    runId: init.runId ?? '',
    args: init.args === undefined ? null : init.args,
    budgetTotal: init.budgetTotal ?? null,
  });
  // Double-encoded: the guest parses a string literal, so no data is ever evaluated as code.
  // INIT goes in last: run data must never be searched for a placeholder.
  const body = PRELUDE_TEMPLATE.replace('__INIT__', () => JSON.stringify(data));
  return `(function wfPrelude(caps, meta) {${body}})`;
}
