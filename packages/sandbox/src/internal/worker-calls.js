// Call draining: guest capability calls leave the run as JSON text under the call caps, and
// host settlements are delivered back into the guest in their own slice.
// @ts-check
import { jsonDepthWithin } from './json-shape.js';
import { hostFault } from './worker-lifecycle.js';
import { check, pumpJobs } from './worker-pump.js';
import { FROM_WORKER } from './protocol.js';
import { post, refusal, runs, sliceSlot } from './worker-thread.js';

/** @typedef {import('quickjs-emscripten-core').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten-core').QuickJSHandle} QuickJSHandle */
/** @typedef {import('./worker-run.js').Run} Run */

/**
 * The one hidden host function: the kernel calls it only to report that a call cap was hit
 * while the guest was queueing calls, so the run ends at once with status limit. It validates
 * typeof before reading (no coercion, no guest getters).
 * @param {Run} run
 * @param {QuickJSContext} ctx
 * @param {QuickJSHandle | undefined} codeH
 * @returns {undefined}
 */
export function hostSignal(run, ctx, codeH) {
  const L = run.limits;
  const code = codeH !== undefined && ctx.typeof(codeH) === 'string' ? ctx.getString(codeH) : '';
  if (code === 'WF_SANDBOX_HOST_CALL_LIMIT') {
    run.kill('limit', code, `more than ${L.maxHostCalls} host calls`);
  } else if (code === 'WF_SANDBOX_OUTSTANDING_LIMIT') {
    run.kill('limit', code, `more than ${L.maxOutstandingCalls} host calls outstanding at once`);
  } else if (code === 'WF_SANDBOX_ARGUMENT_TOO_LARGE') {
    run.kill('limit', code, `a capability input is larger than ${L.maxArgBytes} bytes`);
  }
  return undefined;
}

/**
 * Takes the calls the guest queued during the slice and validates each before it has any
 * effect: sequence, capability, caps, size and depth (invariant 2). Accepted calls go to the
 * main thread; a cap violation ends the run with status limit.
 * @param {Run} run
 */
export function drainCalls(run) {
  if (run.fast === null || run.drain === null || run.killed !== null || run.phase === 'ended')
    return;
  const text = run.fast.callString(run.drain);
  if (text === '') return;
  for (const entry of text.split('\u0001')) {
    if (run.killed !== null) return;
    acceptCall(run, entry);
  }
}

/**
 * @param {Run} run
 * @param {string} entry "<call id>\n<capability>\n<input JSON or empty>"
 */
export function acceptCall(run, entry) {
  const L = run.limits;
  const a = entry.indexOf('\n');
  const b = a < 0 ? -1 : entry.indexOf('\n', a + 1);
  const callId = a < 0 ? Number.NaN : Number(entry.slice(0, a));
  if (b < 0 || callId !== run.callSeq + 1) {
    run.kill('failed', 'WF_SANDBOX_INTERNAL', 'the guest call queue is inconsistent');
    return;
  }
  run.callSeq = callId;
  const name = entry.slice(a + 1, b);
  const text = entry.slice(b + 1);
  /** @param {string} code @param {string} message */
  const fatal = (code, message) => run.kill('limit', code, message);
  if (run.hostCalls >= L.maxHostCalls)
    return fatal('WF_SANDBOX_HOST_CALL_LIMIT', `more than ${L.maxHostCalls} host calls`);
  if (run.outstanding.size >= L.maxOutstandingCalls) {
    return fatal(
      'WF_SANDBOX_OUTSTANDING_LIMIT',
      `more than ${L.maxOutstandingCalls} host calls outstanding at once`,
    );
  }
  // UTF-8 needs at most 3 bytes per UTF-16 unit, so short inputs skip the exact count.
  if (text.length * 3 > L.maxArgBytes && Buffer.byteLength(text, 'utf8') > L.maxArgBytes) {
    return fatal(
      'WF_SANDBOX_ARGUMENT_TOO_LARGE',
      `a capability input is larger than ${L.maxArgBytes} bytes`,
    );
  }
  // Nesting deeper than maxJsonDepth needs more brackets than that.
  if (text.length > L.maxJsonDepth && !jsonDepthWithin(text, L.maxJsonDepth)) {
    return fatal(
      'WF_SANDBOX_ARGUMENT_TOO_DEEP',
      `a capability input nests deeper than ${L.maxJsonDepth}`,
    );
  }
  run.outstanding.add(callId);
  if (!run.capSet.has(name) || run.phase !== 'running') {
    // Refused without effect; the refusal is delivered like any settlement, in order.
    const envelope =
      run.phase !== 'running'
        ? `{"ok":false,"e":${refusal('WF_SANDBOX_BRIDGE_CLOSED', 'run() has returned; new host calls are refused')}}`
        : `{"ok":false,"e":${refusal('WF_SANDBOX_UNKNOWN_CAPABILITY', 'no such capability')}}`;
    // Settled through the main thread, in order with host settlements (and replayed with them).
    post({ t: FROM_WORKER.call, runId: run.id, callId, name, input: '', refuse: envelope });
    return;
  }
  run.hostCalls += 1;
  post({ t: FROM_WORKER.call, runId: run.id, callId, name, input: text });
}

/**
 * @param {number} runId
 * @param {number} callId
 * @param {string} envelope
 */
export function settle(runId, callId, envelope) {
  const run = runs.get(runId);
  if (run === undefined || run.killed !== null || run.phase === 'ended') return;
  if (!run.ready || run.yielded || run.queue.length > 0) {
    run.queue.push([callId, envelope]);
    return;
  }
  deliver(run, callId, envelope);
}

/**
 * @param {Run} run
 * @param {number} callId
 * @param {string} envelope
 */
export function deliver(run, callId, envelope) {
  if (run.killed !== null || run.phase === 'ended') return;
  const ctx = run.ctx;
  const deliver = run.deliver;
  if (ctx === null || deliver === null || !run.outstanding.delete(callId)) return;
  run.beginSlice();
  try {
    run.fast?.callWithString(deliver, `${callId}:${envelope}`);
    pumpJobs(run, true);
  } catch (e) {
    sliceSlot[1] = 0;
    hostFault(run, e);
    return;
  }
  if (!run.yielded) check(run);
}
