// Submitting and following runs: one @wf run is one invocation of the WfRun workflow keyed by
// run id, so submitting the same run id twice attaches to the first.
import type { RunDone } from '@wf/engine';
import { RestateBackendError } from './errors.js';
import { fromRef } from './internal/blobs.js';
import { callPatiently, httpJson, parseAnswer } from './internal/http.js';
import { isRunId, RUN_SERVICE } from './internal/names.js';
import type { RunSubmission } from './internal/services.js';
import { checkUrl, DEFAULT_MAX_ANSWER_BYTES } from './worker.js';

export type { RunSubmission };

export interface SubmitOptions extends Omit<RunSubmission, 'seed' | 'startTime'> {
  readonly runId: string;
  /** Default random; fixed for every attempt of the run. */
  readonly seed?: number;
  /** Default now. */
  readonly startTime?: number;
}

/** Submits a run; resolves with its invocation id once Restate has accepted it (durably). */
export async function submitRun(
  ingress: string,
  options: SubmitOptions,
): Promise<{ runId: string; invocationId: string }> {
  const base = checkUrl('ingress', ingress);
  if (!isRunId(options.runId)) {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `runId must be 1-128 characters of letters, digits, '.', '_' or '-', got ${JSON.stringify(options.runId)}`,
    );
  }
  if (typeof options.workflow?.source !== 'string') {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      'workflow.source must be the workflow source: only source-based workflows run on Restate (trusted-local ones cannot be replayed)',
    );
  }
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      throw new RestateBackendError(
        'WF_RESTATE_INVALID_OPTIONS',
        `limits.${key} must be a positive integer, got ${JSON.stringify(value)}`,
      );
  }
  const submission: RunSubmission = {
    workflow: options.workflow,
    ...(options.args !== undefined ? { args: options.args } : {}),
    trust: options.trust,
    seed: options.seed ?? (Math.random() * 2 ** 31) >>> 0,
    startTime: options.startTime ?? Date.now(),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.agentSettings ? { agentSettings: options.agentSettings } : {}),
  };
  const what = `submitting run ${options.runId}`;
  const answer = await callPatiently(what, () =>
    httpJson(
      'POST',
      `${base}/${RUN_SERVICE}/${encodeURIComponent(options.runId)}/run/send`,
      submission,
    ),
  );
  if (answer.status === 404 && answer.text.includes(RUN_SERVICE)) {
    throw new RestateBackendError(
      'WF_RESTATE_NO_WORKER',
      `${what}: no worker serves the @wf services at ${base} (Restate answered: ${answer.text.slice(0, 200)}); start one with \`wf worker --restate ${base}\``,
    );
  }
  const out = parseAnswer<{ invocationId: string }>(what, answer);
  return { runId: options.runId, invocationId: out.invocationId };
}

/**
 * Waits for a submitted run's outcome, across worker and server restarts. A large result stored
 * by reference is fetched and checked against its hash and `maxResultBytes` (default 128 MiB).
 */
export async function awaitRun(
  ingress: string,
  runId: string,
  signal?: AbortSignal,
  maxResultBytes: number = DEFAULT_MAX_ANSWER_BYTES,
): Promise<RunDone> {
  const base = checkUrl('ingress', ingress);
  const what = `waiting for run ${runId}`;
  const answer = await callPatiently(
    what,
    () =>
      httpJson(
        'GET',
        `${base}/restate/workflow/${RUN_SERVICE}/${encodeURIComponent(runId)}/attach`,
        undefined,
        {},
        signal,
      ),
    signal,
    Number.POSITIVE_INFINITY,
  );
  const done = parseAnswer<RunDone>(what, answer);
  return done.result === undefined
    ? done
    : {
        ...done,
        result: await fromRef(
          { ingress: base, maxBytes: maxResultBytes },
          done.result,
          `the result of run ${runId}`,
          signal,
        ),
      };
}
