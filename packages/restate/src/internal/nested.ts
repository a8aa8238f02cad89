// Nested `wf.workflow` on Restate: the nested run is its own WfRun invocation, keyed from the
// parent run id and the parent guest's call number (the same on every replay), so a parent
// continued on another worker attaches to the nested run instead of running it again.
import type { NestedRunCall, RunDone, Trust } from '@wf/engine';
import { type BlobPolicy, fromRef } from './blobs.js';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { nestedRunId, requestHash, RUN_SERVICE } from './names.js';
import type { AgentSettings, RunSubmission } from './services.js';

export interface NestedRunsOptions {
  readonly ingress: string;
  /** The parent's trust: a nested run never gets more than its parent. */
  readonly trust: Exclude<Trust, 'trusted-local'>;
  /** The parent attempt's signal: when it ends, the wait ends (the next attempt re-attaches). */
  readonly signal: AbortSignal;
  readonly answers: Pick<BlobPolicy, 'ingress' | 'maxBytes'>;
  /** The parent's agent settings: its nested runs' children run as its own do. */
  readonly agentSettings?: AgentSettings;
}

export function createNestedRuns(
  options: NestedRunsOptions,
): (call: NestedRunCall) => Promise<RunDone> {
  const { ingress, trust, signal } = options;
  return async (call) => {
    const submission: RunSubmission = {
      workflow: { manifest: call.workflow.manifest, source: call.workflow.source, name: call.name },
      args: call.args,
      trust,
      seed: call.seed,
      startTime: call.startTime,
      nested: call.scope,
      limits: call.limits,
      ...(options.agentSettings ? { agentSettings: options.agentSettings } : {}),
    };
    // The hash is part of the key: if a lost attempt had issued another request under the same
    // call number, the continued parent must not be answered with that run's result.
    const key = nestedRunId(call.parentRunId, call.callId, requestHash(JSON.stringify(submission)));
    const what = `nested run ${key} (wf.workflow("${call.name}"))`;
    const both = AbortSignal.any([signal, call.signal]);
    const sent = await callPatiently(
      `starting ${what}`,
      () =>
        httpJson(
          'POST',
          `${ingress}/${RUN_SERVICE}/${encodeURIComponent(key)}/run/send`,
          submission,
          // no idempotency key: Restate refuses one on a workflow, whose key is idempotent itself
          {},
          both,
        ),
      both,
    );
    parseAnswer<{ invocationId: string }>(`starting ${what}`, sent);
    const answer = await callPatiently(
      `waiting for ${what}`,
      () =>
        httpJson(
          'GET',
          `${ingress}/restate/workflow/${RUN_SERVICE}/${encodeURIComponent(key)}/attach`,
          undefined,
          {},
          both,
        ),
      both,
      Number.POSITIVE_INFINITY,
    );
    const done = parseAnswer<RunDone>(`result of ${what}`, answer);
    return done.result === undefined
      ? done
      : {
          ...done,
          result: await fromRef(options.answers, done.result, `the result of ${what}`, both),
        };
  };
}
