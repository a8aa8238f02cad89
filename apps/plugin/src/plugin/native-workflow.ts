// Coexistence with DSH's own `workflow` tool (dsh-tool-workflow), which runs its script with
// node:vm in a worker thread with the host's full authority: optionally hidden from every agent,
// where the host supports per-agent tool restriction (feature-detected, never required to boot).

/** The native tool's name in DSH 0.1.0-rc.8. */
export const NATIVE_WORKFLOW_TOOL = 'workflow';

/** The slice of `ctx` this needs: Cordis event subscription, torn down with the plugin. */
export interface AgentEvents {
  on?(event: 'agent/created', listener: (payload: { agent?: unknown }) => void): unknown;
}

interface RestrictableAgent {
  readonly ctx?: {
    readonly tools?: { restrict?(filter: { deny: readonly string[] }): () => void };
  };
}

/**
 * Denies the native tool to every agent created from now on (rc.8's `agent.ctx.tools.restrict`;
 * a context-global restriction is refused by the host, so it has to be per agent). Returns false
 * when the host has no agent events to hook, so the caller keeps the prompt guidance instead.
 */
export function hideNativeWorkflowTool(ctx: AgentEvents): boolean {
  if (typeof ctx.on !== 'function') return false;
  ctx.on('agent/created', ({ agent }) => {
    const tools = (agent as RestrictableAgent | undefined)?.ctx?.tools;
    if (typeof tools?.restrict !== 'function') return;
    try {
      // the restriction lives in the agent's scope and is lifted when the agent is disposed
      tools.restrict({ deny: [NATIVE_WORKFLOW_TOOL] });
    } catch {
      // rc.8 throws for a name that is not mounted (a profile without dsh-tool-workflow, or a
      // child whose allow-list already excludes it): there is nothing to hide
    }
  });
  return true;
}
