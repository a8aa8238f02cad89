// Worker-thread entry: owns reusable QuickJS WASM modules and runs many guest programs, each in a
// fresh runtime + context, pumping their promise jobs and relaying capability calls to the main
// thread as JSON text. Plain ESM JavaScript so it loads unchanged from src/ (tests) and dist/.
// @ts-check
import { settle } from './worker-calls.js';
import { threadTaskId } from './cpu-clock.js';
import { receiveEngine } from './module-pool.js';
import { finishKilled, pool, start, tearDown } from './worker-lifecycle.js';
import { FROM_WORKER, TO_WORKER } from './protocol.js';
import { port, post, runs } from './worker-thread.js';

port.on('message', (/** @type {import('./protocol.js').ToWorkerMessage} */ msg) => {
  // Runs first: idle-time slot building waits until messages stop arriving.
  pool.touch();
  switch (msg.t) {
    case TO_WORKER.start:
      void start(msg);
      break;
    case TO_WORKER.settle:
      settle(msg.runId, msg.callId, msg.env);
      break;
    case TO_WORKER.close: {
      const run = runs.get(msg.runId);
      if (run === undefined || run.phase === 'ended') break;
      if (msg.reason === 'aborted')
        run.kill('aborted', 'WF_SANDBOX_ABORTED', 'the run was aborted by its caller');
      else
        run.kill(
          'timeout',
          'WF_SANDBOX_WALL_TIMEOUT',
          `the run exceeded its wall-clock limit of ${run.limits.wallMs} ms`,
        );
      finishKilled(run);
      break;
    }
    case TO_WORKER.engine:
      receiveEngine(msg.wasmModule);
      break;
    case TO_WORKER.dispose: {
      const run = runs.get(msg.runId);
      if (run !== undefined) tearDown(run);
      post({ t: FROM_WORKER.disposed, runId: msg.runId });
      break;
    }
    default:
      break;
  }
});

// Ready once the engine is instantiated, before the first hardened slot is built (tens of ms on
// cold code): the main thread's turn (createSandbox resolving, the caller's first run, its start
// message) then overlaps that build, and the start waits for it in this thread's queue. The
// task id lets the main thread read this thread's CPU clock for its slice watchdog; the compiled
// engine goes back too, for the workers spawned later (this one may have compiled it itself).
const tid = threadTaskId();
let announced = false;
const ready = () => {
  if (announced) return;
  announced = true;
  post({ t: FROM_WORKER.ready, tid, wasmModule: pool.engine });
};
void pool.warmUp(ready).then(ready, ready);
