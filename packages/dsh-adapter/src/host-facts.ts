// Host feature detection for the engine's `requires` preflight: which tools a run's children can
// be given, which model tiers this deployment routes, and whether a user can answer questions.
// Anything that cannot be read is reported as unknown (absent), which the engine refuses.
import type { HostFacts, ModelTier } from '@wf/engine';
import type { HostAgent, HostTools, HostUserQuestions } from './host.js';
import type { TierRoute } from './provider.js';

export interface HostFactsOptions {
  /** `ctx.tools`: the calling agent's visible tools are what its children can be given. */
  readonly tools?: HostTools | undefined;
  /** The calling agent (the children's parent). */
  readonly parent: HostAgent;
  /** Our own tool names: never handed to a child, so never a fact. */
  readonly ownToolNames?: readonly string[] | undefined;
  /** `ctx.userQuestions`, if mounted. */
  readonly userQuestions?: HostUserQuestions | undefined;
  /** The configured tier routes: a tier with a provider or model counts as routed. */
  readonly tiers?: { readonly [K in ModelTier]?: TierRoute | undefined } | undefined;
}

/** Whether a user can answer questions for `parent`, and why not. */
export function detectUserInteraction(
  questions: HostUserQuestions | undefined,
  parent: HostAgent,
): { available: boolean; why?: string } {
  const header = parent.session.header as { origin?: unknown };
  if (header.origin === 'subagent')
    return { available: false, why: 'the calling agent is a subagent, which may not ask the user' };
  if (!questions) return { available: false, why: 'no userQuestions service is mounted' };
  const q = questions as HostUserQuestions & { hasProvider?: () => unknown; provider?: unknown };
  // A later host may say so itself; rc.8 keeps its one provider in a (TS-private) field, unset
  // in headless DSH, where ask() throws NO_PROVIDER.
  try {
    if (typeof q.hasProvider === 'function')
      return q.hasProvider() === true
        ? { available: true }
        : { available: false, why: 'no user-questions provider is registered' };
  } catch {
    return { available: false, why: 'the userQuestions service could not be queried' };
  }
  if ('provider' in q)
    return q.provider !== undefined && q.provider !== null
      ? { available: true }
      : {
          available: false,
          why: 'no user-questions provider is registered (headless DSH has none)',
        };
  return { available: false, why: 'the userQuestions service does not say whether anyone answers' };
}

/** The facts one run is checked against; a list that cannot be read is left out (unknown). */
export function detectHostFacts(options: HostFactsOptions): HostFacts {
  const own = options.ownToolNames ?? [];
  let tools: string[] | undefined;
  try {
    tools = options.tools
      ? options.tools
          .schemas(options.parent)
          .map((t) => t.name)
          .filter((n) => !own.includes(n) && n !== 'run_code')
      : undefined;
  } catch {
    tools = undefined;
  }
  const modelTiers = (['fast', 'balanced', 'deep'] as const).filter((t) => {
    const route = options.tiers?.[t];
    return route !== undefined && (route.provider !== undefined || route.model !== undefined);
  });
  const interaction = detectUserInteraction(options.userQuestions, options.parent);
  return {
    ...(tools ? { tools } : {}),
    modelTiers,
    userInteraction: interaction.available,
    ...(interaction.why ? { userInteractionWhy: interaction.why } : {}),
  };
}
