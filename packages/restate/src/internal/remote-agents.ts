// The orchestrator's AgentProvider on Restate: a child is an invocation of the WfAgent virtual
// object keyed `<runId>/<taskId>`, submitted with an idempotency key, so a run continued on
// another worker attaches to the same invocation instead of starting the child again.
import type {
  AgentHandle,
  AgentMeter,
  AgentProvider,
  AgentRequest,
  AgentResult,
  ProviderCapabilities,
} from '@wf/engine';
import { type BlobPolicy, type BlobRef, fromRef } from './blobs.js';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { AGENT_OBJECT, agentKey, requestHash } from './names.js';

export interface RemoteAgentsOptions {
  readonly ingress: string;
  readonly name: string;
  /** The workers' agents call no model (they are simulated): the run records say so. */
  readonly simulated?: boolean;
  /** The workers' agents' token estimate: what a child's prompt reserves before launch. */
  readonly estimateTokens?: ((text: string) => number) | undefined;
  readonly capabilities: ProviderCapabilities;
  /** The attempt's signal: when it aborts, every wait ends (the next attempt re-attaches). */
  readonly signal: AbortSignal;
  /** Where a large answer stored by reference is fetched from, and its size bound. */
  readonly answers: Pick<BlobPolicy, 'ingress' | 'maxBytes'>;
}

/** What a WfAgent invocation is given: the request, and the allowance it meters against. */
export type RemoteChildRequest = AgentRequest & {
  readonly allowance?: { readonly ledger: string; readonly child: string };
};

export function createRemoteAgents(options: RemoteAgentsOptions): AgentProvider {
  const { ingress, signal } = options;
  return {
    name: options.name,
    simulated: options.simulated === true,
    ...(options.estimateTokens ? { estimateTokens: options.estimateTokens } : {}),
    // Steering a child on another machine is not offered.
    capabilities: { ...options.capabilities, steer: false },
    async start(
      request: AgentRequest,
      launchSignal: AbortSignal,
      meter?: AgentMeter,
    ): Promise<AgentHandle> {
      const key = agentKey(request.runId, request.taskId);
      // A child of a run with a token budget meters against its tree's WfAllowance from the
      // worker that runs it (allowance.ts): the allowance travels with the request.
      const body: RemoteChildRequest = meter?.ref ? { ...request, allowance: meter.ref } : request;
      // The key carries a hash of the request: if a lost attempt had delivered answers in another
      // order than the journal kept, the same task id may now name another request, which must
      // not be answered with the old child's result.
      const text = JSON.stringify(body);
      const idempotencyKey = `${key}#${requestHash(text)}`;
      const url = `${ingress}/${AGENT_OBJECT}/${encodeURIComponent(key)}/run/send`;
      const answer = await callPatiently(
        `launching ${request.taskId}`,
        () => httpJson('POST', url, body, { 'idempotency-key': idempotencyKey }, launchSignal),
        anySignal(launchSignal, signal),
      );
      const sent = parseAnswer<{ invocationId: string }>(`launching ${request.taskId}`, answer);
      const stopped = new AbortController();
      const result: Promise<AgentResult> = callPatiently(
        `waiting for ${request.taskId}`,
        () =>
          httpJson(
            'GET',
            `${ingress}/restate/invocation/${encodeURIComponent(sent.invocationId)}/attach`,
            undefined,
            {},
            anySignal(stopped.signal, signal),
          ),
        anySignal(stopped.signal, signal),
        Number.POSITIVE_INFINITY,
      ).then(
        (a) =>
          fromRef(
            options.answers,
            parseAnswer<AgentResult | BlobRef>(`result of ${request.taskId}`, a),
            `the answer of ${key}`,
            signal,
          ),
        (e: unknown) => ({
          status: 'stopped' as const,
          text: '',
          error: {
            code: 'WF_RESTATE_UNREACHABLE',
            message: `${request.taskId}: stopped waiting for the child: ${String((e as Error)?.message ?? e)}`,
          },
        }),
      );
      return {
        id: sent.invocationId,
        result,
        // Stops waiting here; the invocation itself runs to its end (README, non-guarantees).
        stop: () => stopped.abort(new Error('stopped')),
        dispose: () => {},
      };
    },
  };
}

function anySignal(...signals: AbortSignal[]): AbortSignal {
  return AbortSignal.any(signals);
}
