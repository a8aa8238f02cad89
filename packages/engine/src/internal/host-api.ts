// The `wf` a trusted-local host function receives. It is not a second implementation: it is the
// bridge's guest prelude itself, compiled in the host realm over the same capabilities (validation,
// limits, journal, events), so both trust classes share one `wf` semantics (phase, runAgent ->
// null + lastFailure, parallel/pipeline lanes, budget mirror). test/wf-parity.test.ts runs both.
import { createGuestPrelude, HOST_CALLS } from '@wf/bridge';
import type { HostCallContext, HostWorkflowApi } from '../types.js';
import { deepFreeze } from './json.js';

type Caps = Readonly<Record<string, (input: unknown, ctx: HostCallContext) => Promise<unknown>>>;
type PreludeFactory = (caps: unknown, meta: unknown) => HostWorkflowApi;

export interface HostApiOptions {
  readonly runId: string;
  readonly args: unknown;
  readonly budgetTotal: number | null;
  readonly signal: AbortSignal;
  readonly track: (p: Promise<unknown>) => void;
}

export function createHostApi(caps: Caps, options: HostApiOptions): HostWorkflowApi {
  let callId = 0;
  // The prelude calls `caps[method](input)` and reads the envelope; on the host each call also
  // gets its context and is tracked to quiescence (invariant 3), as the sandbox does for guests.
  const hostCaps = Object.create(null) as Record<string, (input: unknown) => Promise<unknown>>;
  for (const method of new Set([...HOST_CALLS, ...Object.keys(caps)])) {
    hostCaps[method] = (input) => {
      const cap = caps[method];
      if (!cap) return Promise.reject(new Error(`wf.${method} is not available`));
      callId += 1;
      const ctx: HostCallContext = { signal: options.signal, callId, setNow: noop };
      const p = cap(input, ctx);
      options.track(p);
      return p;
    };
  }
  const prelude = createGuestPrelude({
    runId: options.runId,
    args: options.args,
    budgetTotal: options.budgetTotal,
  });
  // Trusted text from @wf/bridge (run data enters it only as a JSON string literal); trusted-local
  // code already has full host authority, so compiling it here grants nothing new.
  const factory = new Function(`return ${prelude};`)() as PreludeFactory;
  // As the sandbox does for the guest's `wf`: frozen, args included.
  return deepFreeze(factory(Object.freeze(hostCaps), Object.freeze({ seed: 0 })));
}

const noop = () => {};
