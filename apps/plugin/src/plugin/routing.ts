// One engine per project serves runs launched by different DSH agents. The engine takes one
// AgentProvider and one Approver, so these route each call to the provider/approver bound to
// the call's run (the calling agent is the children's parent; its session gets the native events).
// A child's name and phase are the guest's text: DSH shows them as the subagent's label and in its
// workflow card, so they pass terminalText (invariant 13) before any provider sees them.
import { terminalText } from '@wf/bridge/terminal-text';
import type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  HostFacts,
  ProviderCapabilities,
} from '@wf/engine';

/** What one run is bound to: its calling agent's provider, approver and host facts. */
export interface RunBinding {
  readonly agents: AgentProvider;
  readonly approver: Approver;
  /** For the engine's `requires` preflight; absent: nothing is confirmed. */
  readonly facts?: () => HostFacts;
}

export interface RunRouter {
  readonly agents: AgentProvider;
  readonly approver: Approver;
  readonly hostFacts: (run: { readonly runId: string }) => HostFacts;
  bind(runId: string, binding: RunBinding): void;
  unbind(runId: string): void;
}

export function createRunRouter(
  name: string,
  capabilities: () => ProviderCapabilities,
  estimateTokens?: (text: string) => number,
): RunRouter {
  const bindings = new Map<string, RunBinding>();
  const caps: ProviderCapabilities = {
    get toolFilter() {
      return capabilities().toolFilter;
    },
    get outputSchema() {
      return capabilities().outputSchema;
    },
    get steer() {
      return capabilities().steer;
    },
    get worktree() {
      return capabilities().worktree === true;
    },
    get agentOptions() {
      return capabilities().agentOptions !== false;
    },
  };
  return {
    agents: {
      name,
      capabilities: caps,
      // The bound providers' token estimate, and the meter passed through: the run's budget
      // gates each model request of the bound provider's children.
      ...(estimateTokens ? { estimateTokens } : {}),
      start(request: AgentRequest, signal: AbortSignal, meter?: AgentMeter): Promise<AgentHandle> {
        const bound = bindings.get(request.runId);
        if (!bound) return Promise.reject(new Error(`run ${request.runId} has no bound DSH agent`));
        const shown: AgentRequest = {
          ...request,
          name: terminalText(request.name),
          ...(request.phase === undefined ? {} : { phase: terminalText(request.phase) }),
        };
        return bound.agents.start(shown, signal, meter);
      },
    },
    approver: {
      request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
        const bound = bindings.get(request.runId);
        return bound ? bound.approver.request(request, signal) : Promise.resolve('unavailable');
      },
    },
    hostFacts({ runId }) {
      return bindings.get(runId)?.facts?.() ?? {};
    },
    bind(runId, binding) {
      bindings.set(runId, binding);
    },
    unbind(runId) {
      bindings.delete(runId);
    },
  };
}
