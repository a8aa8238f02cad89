// The host side of the wf bridge: turns engine handlers into sandbox capabilities. Every input is
// validated before the handler sees it (invariant 2); results go back in a small envelope that
// carries the run's budget state so the guest's `wf.budget` can answer synchronously.
import { validateCall } from '../calls.js';
import { BRIDGE_ERROR_CODES, BridgeError, type BridgeErrorCode } from '../errors.js';
import { withRunControlData } from '../run-control.js';

/** The wire calls between the guest prelude and the host (one capability each). */
export const HOST_CALLS = [
  'spawnAgent',
  'runAgent',
  'wait',
  'snapshot',
  'output',
  'send',
  'stop',
  'synthesize',
  'workflow',
  'artifact',
  'log',
  'readFile',
  'phase',
] as const;
export type HostCall = (typeof HOST_CALLS)[number];

/**
 * The part of an `AbortSignal` the contract relies on. Declared here because the bridge builds
 * without Node or DOM types (it runs nowhere by itself); a real `AbortSignal` satisfies it.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

/** What the sandbox passes to every capability (`CapabilityContext` in @wf/sandbox). */
export interface HostCallContext {
  readonly signal: CallSignal;
  readonly callId: number;
  setNow(epochMs: number): void;
}

/** The run state mirrored into the guest after every settled call. */
export interface HostRunState {
  readonly spent: number;
  readonly reserved: number;
  readonly agents: number;
}

/** The envelope every capability resolves with. */
export interface HostEnvelope {
  readonly value: unknown;
  readonly state?: HostRunState;
}

export type HostHandler = (input: never, ctx: HostCallContext) => unknown;

export type HostHandlers = { readonly [K in HostCall]?: HostHandler };

export type CallValidation =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly issues: readonly { path: string; message: string }[];
      /** The refusal's code when it is not `WF_BRIDGE_CALL_INVALID` (e.g. `..._CALL_TOO_LARGE`). */
      readonly code?: BridgeErrorCode;
    };

export interface HostDispatchOptions {
  /** Validates one call's input; the default is the bridge's own `validateCall`. */
  readonly validate?: (method: HostCall, input: unknown) => CallValidation;
  /** The run's task ids, so a `task_id:` evidence ref must name one (default validator only). */
  readonly taskIds?: { has(taskId: string): boolean };
  /** The state to mirror into the guest (budget, agents). */
  readonly state?: () => HostRunState;
}

export type HostCapability = (input: unknown, ctx: HostCallContext) => Promise<HostEnvelope>;

/**
 * A refused call: a BridgeError with `data.runControl` set, which the sandbox copies onto the
 * guest error (so the prelude propagates it) and the engine reads (so it fails the run).
 */
function refused(
  code: BridgeErrorCode,
  message: string,
  data: { readonly [key: string]: unknown },
): BridgeError {
  return withRunControlData(new BridgeError(code, message), true, data);
}

export function createHostDispatch(
  handlers: HostHandlers,
  options: HostDispatchOptions = {},
): Readonly<Record<HostCall, HostCapability>> {
  const context = options.taskIds ? { taskIds: options.taskIds } : {};
  const validate =
    options.validate ??
    ((method: HostCall, input: unknown) => validateCall(method, input, context));
  const caps = Object.create(null) as Record<HostCall, HostCapability>;
  for (const method of HOST_CALLS) {
    const handler = handlers[method] as
      | ((input: unknown, ctx: HostCallContext) => unknown)
      | undefined;
    caps[method] = async (input, ctx) => {
      if (!handler) {
        throw refused(
          BRIDGE_ERROR_CODES.WF_BRIDGE_UNKNOWN_METHOD,
          `wf.${method} is not available in this run`,
          {
            method,
          },
        );
      }
      const checked = validate(method, input);
      if (!checked.ok) {
        const first = checked.issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`);
        throw refused(
          checked.code ?? BRIDGE_ERROR_CODES.WF_BRIDGE_CALL_INVALID,
          `invalid wf.${method} call: ${first.join('; ')}`,
          {
            method,
            issues: checked.issues.slice(0, 20),
          },
        );
      }
      const value = await handler(checked.value, ctx);
      return options.state
        ? { value: value ?? null, state: options.state() }
        : { value: value ?? null };
    };
  }
  return Object.freeze(caps);
}
