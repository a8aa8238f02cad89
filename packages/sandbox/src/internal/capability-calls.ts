// Capability calls on the main thread: a guest call runs the host function, its result or error
// crosses back as a JSON envelope (redacted), and settlements go to the worker in settle order.
import { SandboxError } from '../errors.js';
import type { CapabilityContext } from '../types.js';
import { parseJsonText, toJsonText } from './json.js';
import { TO_WORKER } from './protocol.js';
import { redactHostMessage } from './redact.js';
import type { Call, Run } from './sandbox-state.js';

const CODE_PATTERN = /^[A-Z][A-Z0-9_]{2,63}$/;

function readString(obj: unknown, key: string): string | undefined {
  try {
    const v = (obj as Record<string, unknown>)[key];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

function okEnvelope(json: string | undefined, now: number | undefined): string {
  let s = '{"ok":true';
  if (now !== undefined) s += `,"t":${JSON.stringify(now)}`;
  if (json !== undefined) s += `,"v":${json}`;
  return `${s}}`;
}

function errorEnvelope(
  code: string,
  message: string,
  dataJson: string | undefined,
  now: number | undefined,
): string {
  let e = `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}`;
  if (dataJson !== undefined) e += `,"data":${dataJson}`;
  e += '}';
  let s = `{"ok":false,"e":${e}}`;
  if (now !== undefined) s = `{"ok":false,"t":${JSON.stringify(now)},"e":${e}}`;
  return s;
}

/** Settles a call the worker refused without effect, in order with the host's settlements. */
export function refuse(run: Run, callId: number, envelope: string): void {
  setImmediate(() => send(run, callId, envelope));
}

export function send(run: Run, callId: number, envelope: string): void {
  if (run.ended) return;
  run.log.push([callId, envelope]);
  if (run.worker.alive) {
    run.worker.send({ t: TO_WORKER.settle, runId: run.id, callId, env: envelope });
  }
}

/** True when `value` may be a thenable: objects and functions whose `then` is callable or unreadable. */
function isThenable(value: unknown): boolean {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return true;
  }
}

/** Aborts a call's signal (creating it if nobody read it yet); only this module can. */
let abortCall: (ctx: CallContext) => void = () => {};
/** The logical time a call's capability set, if any. */
let nowOf: (ctx: CallContext) => number | undefined = () => undefined;

/**
 * The context of one capability call, frozen. A class instance instead of an object literal
 * with a getter: the literal's accessor makes every instance slow, on every call's path. The
 * controller is created on first use (most capabilities never read their
 * signal); `signal` is an inherited getter, `callId` and `setNow` are own properties (so
 * `const { setNow } = ctx` still works). The prototype is frozen too.
 */
class CallContext implements CapabilityContext {
  readonly callId: number;
  readonly setNow: (epochMs: number) => void;
  #controller: AbortController | undefined;
  #now: number | undefined;

  constructor(callId: number) {
    this.callId = callId;
    this.setNow = (epochMs: number): void => {
      if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) {
        throw new TypeError('setNow(epochMs) needs a finite number');
      }
      this.#now = epochMs;
    };
    Object.freeze(this);
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  static {
    abortCall = (ctx) => {
      ctx.#controller ??= new AbortController();
      ctx.#controller.abort();
    };
    nowOf = (ctx) => ctx.#now;
  }
}
Object.freeze(CallContext.prototype);
Object.freeze(CallContext);

export function dispatch(run: Run, callId: number, name: string, inputText: string): void {
  // invariant 3: a call the worker accepted is tracked here until it settles.
  if (run.ended) return;
  const fn = Object.hasOwn(run.capabilities, name) ? run.capabilities[name] : undefined;
  const ctx = new CallContext(callId);
  const L = run.limits;
  const okOf = (value: unknown): string => {
    const r = toJsonText(value, L.maxResultBytes, L.maxJsonDepth);
    if (r.ok) return okEnvelope(r.text, nowOf(ctx));
    return errorEnvelope(
      'WF_SANDBOX_HOST_RESULT_INVALID',
      `capability ${name} returned a value that cannot cross as JSON: ${r.detail}`,
      undefined,
      nowOf(ctx),
    );
  };
  const errorOf = (error: unknown): string => {
    const rawCode = readString(error, 'code');
    const code =
      rawCode !== undefined && CODE_PATTERN.test(rawCode) ? rawCode : 'WF_SANDBOX_HOST_ERROR';
    const rawMessage =
      typeof error === 'string' ? error : (readString(error, 'message') ?? 'capability failed');
    let dataJson: string | undefined;
    try {
      const data =
        typeof error === 'object' && error !== null
          ? (error as { data?: unknown }).data
          : undefined;
      if (data !== undefined) {
        const r = toJsonText(data, L.maxResultBytes, L.maxJsonDepth);
        if (r.ok) dataJson = r.text;
      }
    } catch {
      dataJson = undefined;
    }
    return errorEnvelope(code, redactHostMessage(rawMessage), dataJson, nowOf(ctx));
  };
  // A capability that returns (or throws) synchronously settles at once: its host promise would
  // settle first anyway, and skipping the promise chain saves microtask turns on every round
  // trip. Thenables (and results whose `then` cannot be read) take the promise path as before.
  let result: unknown;
  try {
    if (fn === undefined)
      throw new SandboxError('WF_SANDBOX_UNKNOWN_CAPABILITY', 'no such capability');
    const input = inputText === '' ? undefined : parseJsonText(inputText);
    result = fn(input, ctx);
  } catch (error) {
    send(run, callId, errorOf(error));
    return;
  }
  if (!isThenable(result)) {
    send(run, callId, okOf(result));
    return;
  }
  const call: Call = {
    abort: () => abortCall(ctx),
    done: Promise.resolve(),
  };
  call.done = Promise.resolve(result)
    .then(okOf, errorOf)
    .then((envelope) => {
      run.calls.delete(callId);
      // Settlements go to the worker in the order the host promises settled (invariant 5: the
      // journal records that order, and replay delivers it again).
      send(run, callId, envelope);
    });
  run.calls.set(callId, call);
}
