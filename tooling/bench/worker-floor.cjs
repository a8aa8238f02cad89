// The worker side of workerQuickJs() (index.js): bare quickjs-emscripten in a worker thread whose
// host calls cross to the main thread as JSON text and back, the messages shaped like the
// sandbox's. No hardening, no limits, no validation: the floor of the sandbox's isolation model.
// @ts-check
const { parentPort } = require('node:worker_threads');
const { bareQuickJs } = require('./bare-quickjs.cjs');

if (parentPort === null) throw new Error('worker-floor.cjs runs in a worker thread');
const port = parentPort;
/** @type {Map<number, (v: number) => void>} */
const waiting = new Map();
let callSeq = 0;

bareQuickJs().then((bare) => {
  port.on('message', (/** @type {any} */ msg) => {
    if (msg.t === 'settle') {
      const answer = waiting.get(msg.callId);
      waiting.delete(msg.callId);
      answer?.(JSON.parse(msg.env));
      return;
    }
    const runId = msg.runId;
    const ask = (/** @type {number} */ v) =>
      new Promise((/** @type {(v: number) => void} */ resolve) => {
        callSeq += 1;
        waiting.set(callSeq, resolve);
        port.postMessage({
          t: 'call',
          runId,
          callId: callSeq,
          name: 'x',
          input: JSON.stringify(v),
        });
      });
    bare.evaluateAsync(msg.source, ask).then(
      (value) =>
        port.postMessage({ t: 'end', runId, status: 'completed', value: JSON.stringify(value) }),
      (e) => port.postMessage({ t: 'end', runId, status: 'failed', value: String(e) }),
    );
  });
  port.postMessage({ t: 'ready' });
});
