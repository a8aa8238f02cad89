// The orchestrator's AgentProvider on Restate: a child is an invocation of the WfAgent virtual
// object keyed `<runId>/<taskId>`, submitted with an idempotency key, so a run continued on
// another worker attaches to the same invocation instead of starting the child again.
import type {
  AgentHandle,
  AgentProvider,
  AgentRequest,
  AgentResult,
  ProviderCapabilities,
} from '@wf/engine';
import { type BlobPolicy, type BlobRef, fromRef } from './blobs.js';
import { controlRun } from './control.js';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { AGENT_OBJECT, agentKey, requestHash } from './names.js';
import type { AgentInvocation, AgentSettings } from './services.js';

export interface RemoteAgentsOptions {
  readonly ingress: string;
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  /** The attempt's signal: when it aborts, every wait ends (the next attempt re-attaches). */
  readonly signal: AbortSignal;
  /** Where a large answer stored by reference is fetched from, and its size bound. */
  readonly answers: Pick<BlobPolicy, 'ingress' | 'maxBytes'>;
  /** The run's agent settings, sent with every child (services.ts AgentInvocation). */
  readonly settings?: AgentSettings;
}

export function createRemoteAgents(options: RemoteAgentsOptions): AgentProvider {
  const { ingress, signal } = options;
  return {
    name: options.name,
    // Steering a child on another machine is not offered.
    capabilities: { ...options.capabilities, steer: false },
    async start(request: AgentRequest, launchSignal: AbortSignal): Promise<AgentHandle> {
      const key = agentKey(request.runId, request.taskId);
      // The key carries a hash of the request: if a lost attempt had delivered answers in another
      // order than the journal kept, the same task id may now name another request, which must
      // not be answered with the old child's result.
      const body: AgentInvocation = options.settings
        ? { request, settings: options.settings }
        : { request };
      const text = JSON.stringify(body);
      const idempotencyKey = `${key}#${requestHash(text)}`;
      // One request-response call, not a send then an attach: the idempotency key makes a
      // retried call (or a continued run's) attach to the same invocation, and the answer comes
      // back on the same request (one ingress round trip per child fewer).
      const url = `${ingress}/${AGENT_OBJECT}/${encodeURIComponent(key)}/run`;
      if (launchSignal.aborted || signal.aborted)
        throw new Error(`${request.taskId}: launch aborted`);
      const stopped = new AbortController();
      let stopReason: string | undefined;
      const waiting = anySignal(stopped.signal, signal);
      const result: Promise<AgentResult> = callPatiently(
        `running ${request.taskId}`,
        () => httpJson('POST', url, body, { 'idempotency-key': idempotencyKey }, waiting),
        waiting,
        Number.POSITIVE_INFINITY,
      ).then(
        (a) =>
          fromRef(
            options.answers,
            parseAnswer<AgentResult | BlobRef>(`result of ${request.taskId}`, a),
            `the answer of ${key}`,
            signal,
          ),
        (e: unknown) =>
          stopReason === undefined
            ? {
                status: 'stopped' as const,
                text: '',
                error: {
                  code: 'WF_RESTATE_UNREACHABLE',
                  message: `${request.taskId}: stopped waiting for the child: ${String((e as Error)?.message ?? e)}`,
                },
              }
            : {
                status: 'stopped' as const,
                text: '',
                error: { code: 'WF_ENGINE_RUN_STOPPED', message: stopReason },
              },
      );
      return {
        id: idempotencyKey,
        result,
        // Stopped now, as a local child is; the worker running it is asked to stop it too (the
        // run's control: within its poll interval), which ends its invocation and frees its slot.
        // Not when this attempt ended: the next one re-attaches to the child.
        stop: (reason?: string) => {
          if (signal.aborted) return;
          stopReason ??= reason ?? 'stopped';
          void controlRun(ingress, request.runId, { stop: [request.taskId] }, signal).catch(
            () => {},
          );
          stopped.abort(new Error('stopped'));
        },
        // The engine disposes after the result, or after its grace for a child that never reports.
        dispose: () => stopped.abort(new Error('disposed')),
      };
    },
  };
}

function anySignal(...signals: AbortSignal[]): AbortSignal {
  return AbortSignal.any(signals);
}
