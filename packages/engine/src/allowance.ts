// A run's allowance of agents and tokens (invariant 6): the ledger every child of a run, and of
// its nested runs, draws from as it starts and is charged against as it spends. Pure state, no
// I/O: the embedded engine keeps one per run; a durable backend keeps one per run tree where every
// worker can reach it (@wf/restate's WfAllowance), with the same rules.
//
// Tokens. Before a child starts it reserves what is known of its cost: its prompt and inputs,
// counted with the provider's estimate, plus its output ceiling. While it runs it is charged what
// it really spends (its cumulative usage, as the provider reports it) and asks before each model
// call. `committed` = everything charged + what running children still hold of their
// reservations. A child may start only if its reservation fits under the budget; a model call
// is refused once `committed` is over the budget, or at the budget when the child has used up its
// own reservation. The first refusal closes the allowance: every later start and call is refused.
// So every permitted call is made while `committed` <= budget, and the spending of a run tree
// exceeds its budget by at most the last model call of each child that was running.

/** Why a start or a model call is refused (a run-control error code and a message). */
export interface AllowanceRefusal {
  /** WF_ENGINE_BUDGET_EXCEEDED, WF_ENGINE_AGENT_LIMIT, or why the run ended (a closed allowance). */
  readonly code: string;
  readonly message: string;
}

/** One child's share: what it reserved before it started and what it was charged. */
export interface AllowanceChild {
  reserved: number;
  /** Tokens charged, all its attempts together. */
  charged: number;
  /**
   * Cumulative tokens per attempt, once a backend reported one by id (a child it re-ran after a
   * crash has two); absent while a child is charged under one attempt only.
   */
  attempts?: Record<string, number>;
  ended: boolean;
}

/** The serialisable state of an allowance (a durable backend stores this). */
export interface AllowanceState {
  /** Token budget; null: tokens are counted, never refused. */
  budget: number | null;
  /** Children the tree may admit; null: not counted here (the run counts its own). */
  maxAgents: number | null;
  /** Tokens spent that no child here accounts for (a resumed run's recorded spending). */
  base: number;
  children: Record<string, AllowanceChild>;
  /** Admitted children's keys, in admission order. */
  agents: string[];
  closed?: AllowanceRefusal;
}

/** The default token estimate: about four characters a token (the DSH host's own heuristic). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What a running child still holds of its reservation. */
const holds = (c: AllowanceChild): number => (c.ended ? 0 : Math.max(0, c.reserved - c.charged));

export class RunAllowance {
  readonly state: AllowanceState;
  /** Sums kept as the state changes: every check is O(1), whatever the number of children. */
  private charged = 0;
  private outstanding = 0;

  constructor(state: Partial<AllowanceState> & Pick<AllowanceState, 'budget'>) {
    this.state = {
      maxAgents: null,
      base: 0,
      children: {},
      agents: [],
      ...state,
    };
    for (const c of Object.values(this.state.children)) {
      this.charged += c.charged;
      this.outstanding += holds(c);
    }
  }

  get budget(): number | null {
    return this.state.budget;
  }

  get closed(): AllowanceRefusal | undefined {
    return this.state.closed;
  }

  /** Tokens charged so far, ended children and running ones. */
  spent(): number {
    return this.state.base + this.charged;
  }

  /** What running children still hold of their reservations. */
  reserved(): number {
    return this.outstanding;
  }

  committed(): number {
    return this.spent() + this.reserved();
  }

  /** Committed tokens beyond the budget: the run tree must stop. */
  over(): boolean {
    return this.state.budget !== null && this.committed() > this.state.budget;
  }

  /** Raises what is spent to at least `spent` (a replayed run's recorded spending). */
  atLeast(spent: number): void {
    const now = this.spent();
    if (Number.isFinite(spent) && spent > now) this.state.base += spent - now;
  }

  /** Adds spending no child here accounts for (a nested run's, reported at its end). */
  add(tokens: number): void {
    if (Number.isFinite(tokens) && tokens > 0) this.state.base += tokens;
  }

  /** Tokens one child was charged so far. */
  chargedOf(key: string): number {
    return this.state.children[key]?.charged ?? 0;
  }

  /** Counts one child against maxAgents; the same key again is the same child. */
  admit(key: string, what: string): AllowanceRefusal | undefined {
    if (this.state.closed) return this.state.closed;
    const max = this.state.maxAgents;
    if (max === null || this.state.agents.includes(key)) return undefined;
    if (this.state.agents.length >= max) {
      return {
        code: 'WF_ENGINE_AGENT_LIMIT',
        message: `${what} refused: the run already has ${this.state.agents.length} children (nested runs included), its maxAgents is ${max}`,
      };
    }
    this.state.agents.push(key);
    return undefined;
  }

  /** Records children admitted elsewhere (a run that starts sharing its allowance). */
  seed(keys: readonly string[]): void {
    for (const key of keys) if (!this.state.agents.includes(key)) this.state.agents.push(key);
  }

  /** Reserves a child's known cost before it starts; the same key again is the same child. */
  reserve(key: string, tokens: number, what: string): AllowanceRefusal | undefined {
    if (this.state.closed) return this.state.closed;
    if (this.state.children[key]) return undefined;
    const budget = this.state.budget;
    const amount = Math.max(1, Math.ceil(tokens));
    if (budget !== null) {
      const committed = this.committed();
      if (committed + amount > budget) {
        return {
          code: 'WF_ENGINE_BUDGET_EXCEEDED',
          message: `${what} refused before launch: its known cost (prompt, inputs and output ceiling) of ${amount} tokens would exceed the token budget of ${budget} (spent ${this.spent()}, reserved ${this.reserved()})`,
        };
      }
    }
    const child: AllowanceChild = {
      reserved: budget === null ? 0 : amount,
      charged: 0,
      ended: false,
    };
    this.state.children[key] = child;
    this.outstanding += holds(child);
    return undefined;
  }

  /** A child's cumulative usage so far (never lowered: reports may arrive out of order). */
  charge(key: string, tokens: number, attempt = ''): void {
    if (!Number.isFinite(tokens)) return;
    let child = this.state.children[key];
    if (!child) {
      child = { reserved: 0, charged: 0, ended: false };
      this.state.children[key] = child;
    }
    // One attempt (the usual case) is the child's usage; several are summed.
    if (attempt !== '' && !child.attempts)
      child.attempts = child.charged > 0 ? { '': child.charged } : {};
    const now = Math.floor(tokens);
    const before = child.attempts ? (child.attempts[attempt] ?? 0) : child.charged;
    if (now <= before) return;
    if (child.attempts) child.attempts[attempt] = now;
    this.outstanding -= holds(child);
    child.charged += now - before;
    this.charged += now - before;
    this.outstanding += holds(child);
  }

  /** Asked before each model call of a running child (after its usage so far is charged). */
  mayCall(key: string, what: string): AllowanceRefusal | undefined {
    if (this.state.closed) return this.state.closed;
    const budget = this.state.budget;
    if (budget === null) return undefined;
    const committed = this.committed();
    const child = this.state.children[key];
    const ownLeft = child ? child.reserved - child.charged : 0;
    if (committed > budget || (committed >= budget && ownLeft <= 0)) {
      return this.close({
        code: 'WF_ENGINE_BUDGET_EXCEEDED',
        message: `the token budget of ${budget} is used up (spent ${this.spent()}, reserved ${this.reserved()}): ${what} was stopped before its next model call`,
      });
    }
    return undefined;
  }

  /** The child ended: its final usage is charged and what it still held is released. */
  end(key: string, tokens: number, attempt = ''): void {
    this.charge(key, tokens, attempt);
    const child = this.state.children[key];
    if (child && !child.ended) {
      this.outstanding -= holds(child);
      child.ended = true;
    }
  }

  /** Refuses every later start and model call with `refusal` (the first one is kept). */
  close(refusal: AllowanceRefusal): AllowanceRefusal {
    this.state.closed ??= refusal;
    return this.state.closed;
  }
}
