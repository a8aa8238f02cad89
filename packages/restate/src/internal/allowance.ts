// A run tree's agents and tokens on Restate (invariant 6): the WfAllowance virtual object, keyed by
// the root run id, holds one @wf/engine RunAllowance for the root run and its nested runs on any
// worker. Orchestrators admit and reserve their children there as each starts; a child that runs
// on a worker meters against it (charged before each model call and told whether to make it), so
// the tree's token budget and maxAgents hold however its runs and children are spread.
import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import {
  type AgentMeter,
  type AgentUsage,
  type AllowanceRefusal,
  type AllowanceState,
  RunAllowance,
  type SharedAllowance,
} from '@wf/engine';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { ALLOWANCE_OBJECT } from './names.js';

/** The tree's caps, sent with every call: the first call that finds no ledger creates it. */
export interface Caps {
  readonly budget: number | null;
  readonly maxAgents: number;
}

type Answer = { refusal: AllowanceRefusal | null };

const tokensOf = (u: AgentUsage | undefined): number =>
  (u?.inputTokens ?? 0) + (u?.outputTokens ?? 0) + (u?.cacheReadTokens ?? 0);

async function ledger(ctx: restate.ObjectContext, caps: Caps): Promise<RunAllowance> {
  const state = await ctx.get<AllowanceState>('ledger');
  return new RunAllowance(
    state ?? { budget: caps.budget, maxAgents: Math.max(0, Math.floor(caps.maxAgents)) },
  );
}

const save = (ctx: restate.ObjectContext, a: RunAllowance): void => ctx.set('ledger', a.state);

/** The virtual object: every handler is exclusive per tree, so each decision sees the last. */
export const allowanceObject = restate.object({
  name: ALLOWANCE_OBJECT,
  handlers: {
    admit: async (ctx: restate.ObjectContext, input: Caps & { key: string; what: string }) => {
      const a = await ledger(ctx, input);
      const refusal = a.admit(input.key, input.what) ?? null;
      save(ctx, a);
      return { refusal } satisfies Answer;
    },
    seed: async (ctx: restate.ObjectContext, input: Caps & { keys: string[] }) => {
      const a = await ledger(ctx, input);
      a.seed(Array.isArray(input.keys) ? input.keys : []);
      save(ctx, a);
      return { refusal: null } satisfies Answer;
    },
    reserve: async (
      ctx: restate.ObjectContext,
      input: Caps & { key: string; tokens: number; what: string },
    ) => {
      const a = await ledger(ctx, input);
      const refusal = a.reserve(input.key, input.tokens, input.what) ?? null;
      save(ctx, a);
      return { refusal } satisfies Answer;
    },
    /** A child's usage so far; with `gate`, also whether it may make its next model call. */
    charge: async (
      ctx: restate.ObjectContext,
      input: Caps & {
        key: string;
        attempt: string;
        tokens: number;
        gate: boolean;
        end?: boolean;
        what: string;
      },
    ) => {
      const a = await ledger(ctx, input);
      if (input.end) a.end(input.key, input.tokens, input.attempt);
      else a.charge(input.key, input.tokens, input.attempt);
      let refusal: AllowanceRefusal | undefined;
      if (input.gate) refusal = a.mayCall(input.key, input.what);
      else if (a.over())
        a.close({
          code: 'WF_ENGINE_BUDGET_EXCEEDED',
          message: `the run's tokens (spent ${a.spent()}, reserved ${a.reserved()}) are over its token budget of ${a.budget}: its children were stopped`,
        });
      save(ctx, a);
      return { refusal: refusal ?? null } satisfies Answer;
    },
    close: async (ctx: restate.ObjectContext, input: Caps & { refusal: AllowanceRefusal }) => {
      if (!(await ctx.get<AllowanceState>('ledger'))) return { refusal: null };
      const a = await ledger(ctx, input);
      a.close(input.refusal);
      save(ctx, a);
      return { refusal: null } satisfies Answer;
    },
    state: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => {
      const state = await ctx.get<AllowanceState>('ledger');
      const a = state ? new RunAllowance(state) : undefined;
      return a
        ? { ...state, spent: a.spent(), reserved: a.reserved(), agents: a.state.agents.length }
        : null;
    }),
  },
});

function call(
  ingress: string,
  ledgerKey: string,
  handler: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<Answer> {
  const what = `allowance ${ledgerKey} (${handler})`;
  return callPatiently(
    what,
    () =>
      httpJson(
        'POST',
        `${ingress}/${ALLOWANCE_OBJECT}/${encodeURIComponent(ledgerKey)}/${handler}`,
        body,
        {},
        signal,
      ),
    signal,
  ).then((answer) => parseAnswer<Answer>(what, answer));
}

/** The engine's SharedAllowance port over the tree's WfAllowance (ExecutionBackend.allowance). */
export function restateAllowance(
  ingress: string,
  tree: { readonly root: string; readonly budget: number | null; readonly maxAgents: number },
  signal: AbortSignal,
): SharedAllowance {
  const caps: Caps = { budget: tree.budget, maxAgents: tree.maxAgents };
  const ask = async (handler: string, body: object): Promise<AllowanceRefusal | undefined> =>
    (await call(ingress, tree.root, handler, { ...caps, ...body }, signal)).refusal ?? undefined;
  return {
    ledger: tree.root,
    admit: (key, what) => ask('admit', { key, what }),
    seed: async (keys) => {
      await ask('seed', { keys });
    },
    reserve: (key, tokens, what) => ask('reserve', { key, tokens, what }),
    end: async (key, tokens) => {
      await ask('charge', { key, attempt: '', tokens, gate: false, end: true, what: key });
    },
    close: async (refusal) => {
      await ask('close', { refusal });
    },
  };
}

/**
 * The meter of a child a worker runs for a tree (AgentMeter.ref): each model call is charged and
 * asked for at the tree's WfAllowance; the attempt id keeps a child that Restate re-ran after a
 * crash from being charged as if it were the same execution. `end` charges its final usage.
 */
export function remoteMeter(
  ingress: string,
  ref: { readonly ledger: string; readonly child: string },
): AgentMeter & { end(usage: AgentUsage | undefined): Promise<void> } {
  const attempt = randomUUID();
  const charge = (usage: AgentUsage | undefined, gate: boolean, end = false) =>
    call(ingress, ref.ledger, 'charge', {
      budget: null,
      maxAgents: 0,
      key: ref.child,
      attempt,
      tokens: tokensOf(usage),
      gate,
      end,
      what: ref.child,
    });
  return {
    report(usage) {
      charge(usage, false).catch(() => {});
    },
    async beforeCall(usage) {
      return (await charge(usage, true)).refusal ?? undefined;
    },
    async end(usage) {
      await charge(usage, false, true);
    },
  };
}
