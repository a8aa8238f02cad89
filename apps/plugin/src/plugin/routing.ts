// One engine per project serves runs launched by different DSH agents. The engine takes one
// AgentProvider and one Approver, so these route each call to the provider/approver bound to
// the call's run (the calling agent is the children's parent; its session gets the native events).
import type {
  AgentHandle,
  AgentProvider,
  AgentRequest,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  ProviderCapabilities,
} from '@wf/engine';

export interface RunRouter {
  readonly agents: AgentProvider;
  readonly approver: Approver;
  bind(runId: string, binding: { agents: AgentProvider; approver: Approver }): void;
  unbind(runId: string): void;
}

export function createRunRouter(name: string, capabilities: () => ProviderCapabilities): RunRouter {
  const bindings = new Map<string, { agents: AgentProvider; approver: Approver }>();
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
      start(request: AgentRequest, signal: AbortSignal): Promise<AgentHandle> {
        const bound = bindings.get(request.runId);
        if (!bound) return Promise.reject(new Error(`run ${request.runId} has no bound DSH agent`));
        return bound.agents.start(request, signal);
      },
    },
    approver: {
      request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
        const bound = bindings.get(request.runId);
        return bound ? bound.approver.request(request, signal) : Promise.resolve('unavailable');
      },
    },
    bind(runId, binding) {
      bindings.set(runId, binding);
    },
    unbind(runId) {
      bindings.delete(runId);
    },
  };
}
