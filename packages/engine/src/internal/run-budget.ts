// A child's draw on its run's allowance (invariant 6): admission into a shared tree, the
// reservation of its known cost before launch, the meter that charges its spending as it happens
// and gates each model call, and its end. The rules are RunAllowance's (../allowance.ts).
import { type AllowanceRefusal, estimateTokens } from '../allowance.js';
import { EngineError, type EngineErrorCode } from '../errors.js';
import { defaultAllocation } from '../limits.js';
import type { AgentMeter, AgentRequest, AgentUsage } from '../ports.js';
import type { Run } from './run.js';

/** Tokens a usage report counts: input, output and cache reads, as a task result's totalTokens. */
export function tokensOf(u: AgentUsage | undefined): number {
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);
  return n(u?.inputTokens) + n(u?.outputTokens) + n(u?.cacheReadTokens);
}

/**
 * What is known of a child's cost before it starts: its prompt (which carries its inputs: a
 * synthesis's evidence, a repair's previous answer) and output schema, counted with the
 * provider's own estimate, plus its output ceiling `maxTokens`. Without one, the larger of that
 * estimate and the run's default share, min(defaultTaskTokens, budget / concurrency).
 */
export function reservationOf(run: Run, request: AgentRequest): number {
  const text =
    request.outputSchema === undefined
      ? request.prompt
      : `${request.prompt}${JSON.stringify(request.outputSchema)}`;
  let input = estimateTokens(text);
  const own = run.deps.agents.estimateTokens;
  if (own) {
    try {
      const n = own.call(run.deps.agents, text);
      if (typeof n === 'number' && Number.isFinite(n) && n >= 0) input = Math.ceil(n);
    } catch {
      // a throwing estimate counts as the default one
    }
  }
  if (request.maxTokens !== undefined) return input + request.maxTokens;
  // No ceiling of its own: the child's share of the budget (so a small budget still admits a
  // concurrency's worth of children), or its input alone when that is more.
  const budget = run.budgetTotal;
  if (budget === null) return input;
  return Math.max(
    input,
    defaultAllocation(budget, run.deps.limits.defaultTaskTokens, run.runSemaphore.capacity),
  );
}

function refusalError(refusal: AllowanceRefusal): EngineError {
  return new EngineError(refusal.code as EngineErrorCode, refusal.message);
}

/** The key of a child in a shared (tree-wide) allowance: unique across the tree's runs. */
export function treeKey(run: Run, key: string): string {
  return `${run.id}/${key}`;
}

/**
 * Admits (in a shared tree) and reserves a child before launch. A refusal throws it as a
 * run-control error, with nothing held.
 */
export async function reserveChild(
  run: Run,
  key: string,
  request: AgentRequest,
  what: string,
  sharedAdmit: boolean,
): Promise<void> {
  const tokens = reservationOf(run, request);
  const local = run.allowance.reserve(key, tokens, what);
  if (local) throw refusalError(local);
  const shared = run.shared;
  if (!shared) return;
  let refusal: AllowanceRefusal | undefined;
  try {
    if (sharedAdmit) refusal = await shared.admit(treeKey(run, key), what);
    if (!refusal && run.budgetTotal !== null)
      refusal = await shared.reserve(treeKey(run, key), tokens, what);
  } catch (e) {
    run.allowance.end(key, 0);
    throw e;
  }
  if (refusal) {
    run.allowance.end(key, 0);
    throw refusalError(refusal);
  }
}

/** Releases a reservation whose child never ran (refused or failed launch). */
export function releaseChild(run: Run, key: string): void {
  run.allowance.end(key, 0);
  if (run.shared && run.budgetTotal !== null) run.shared.end(treeKey(run, key), 0).catch(() => {});
}

/**
 * The run fails once its committed tokens are over its budget: every running child is stopped
 * (a metered one makes no further model call), nothing new starts.
 */
export function stopIfOver(run: Run): void {
  if (!run.allowance.over()) return;
  const a = run.allowance;
  run.fail(
    a.close({
      code: 'WF_ENGINE_BUDGET_EXCEEDED',
      message: `the run's tokens (spent ${a.spent()}, reserved ${a.reserved()}) are over its token budget of ${a.budget}: its children were stopped`,
    }),
  );
}

/** The meter a child is launched with: it charges the run as the child spends and gates calls. */
export function meterFor(run: Run, key: string, what: string): AgentMeter {
  const shared = run.shared;
  return {
    ...(shared && run.budgetTotal !== null
      ? { ref: { ledger: shared.ledger, child: treeKey(run, key) } }
      : {}),
    report(usage) {
      run.allowance.charge(key, tokensOf(usage));
      run.checkSpent();
      stopIfOver(run);
    },
    beforeCall(usage) {
      run.allowance.charge(key, tokensOf(usage));
      run.checkSpent();
      const refusal = run.allowance.mayCall(key, what);
      if (refusal) run.fail(refusal);
      return refusal;
    },
  };
}

/** A child ended: its final usage is charged, what it still held is released. */
export function endChild(run: Run, key: string, usage: AgentUsage | undefined): void {
  run.allowance.end(key, tokensOf(usage));
  stopIfOver(run);
}
