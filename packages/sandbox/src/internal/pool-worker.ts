// One worker thread of the pool, as the main thread sees it: the thread, the runs it holds, its
// shared slice slot for the CPU watchdog, and the typed channel of protocol messages to it.
import { Worker } from 'node:worker_threads';
import {
  FROM_WORKER,
  type FromWorkerMessage,
  type RunMessage,
  type ToWorkerMessage,
} from './protocol.js';
import type { Run } from './sandbox-state.js';
import { workerEntry } from './worker-entry.js';

/** Chosen once, when the first worker starts (two stat calls; importing the package does none). */
let entry: URL | null = null;
const WORKER_STACK_MB = 64;

export class PoolWorker {
  readonly id: string;
  readonly worker: Worker;
  readonly runs = new Map<number, Run>();
  readonly ready: Promise<void>;
  /** [slice start (epoch ms), run id or 0, CPU base, base time], written by the worker per slice. */
  readonly slice = new Float64Array(new SharedArrayBuffer(32));
  alive = true;
  /** The worker loaded QuickJS and said so. */
  started = false;
  /** The engine it compiled (a WebAssembly.Module), handed to the workers spawned after it. */
  compiled: unknown = null;
  /** The worker thread's task id (Linux), for reading its CPU clock; null elsewhere. */
  tid: number | null = null;
  /**
   * A slice that used more than EVACUATE_AFTER_MS of CPU: the other runs left this worker, and no
   * run is placed on it until the slice ends.
   */
  hot: { runId: number; started: number } | null = null;
  /** The slice the watchdog is following: its CPU clock when first seen. */
  watch: { runId: number; started: number; wall0: number; cpu0: number } | null = null;

  constructor(
    id: string,
    options: {
      moduleHighWaterBytes: number;
      moduleMaxRuns: number;
      memoryBytes: number;
      wasmModule: unknown;
      /** The main thread posts the compiled engine (TO_WORKER.engine) instead. */
      engineFollows: boolean;
    },
    onMessage: (w: PoolWorker, msg: RunMessage) => void,
    onGone: (w: PoolWorker) => void,
  ) {
    this.id = id;
    entry ??= workerEntry(import.meta.url);
    this.worker = new Worker(entry, {
      workerData: { workerId: id, sliceBuffer: this.slice.buffer, ...options },
      resourceLimits: { stackSizeMb: WORKER_STACK_MB },
      stdout: false,
      stderr: false,
    });
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    this.worker.on('message', (msg: FromWorkerMessage) => {
      if (msg.t === FROM_WORKER.ready) {
        const tid: unknown = msg.tid;
        this.tid = typeof tid === 'number' && Number.isSafeInteger(tid) ? tid : null;
        this.compiled = msg.wasmModule ?? null;
        this.started = true;
        // Booting, the worker holds the process (`await createSandbox()` must not see it exit);
        // ready and idle, it does not: only runs do (hold/release). Not unref()'d before the
        // 'message' listener above: attaching that listener refs the worker again.
        if (this.runs.size === 0) this.worker.unref();
        markReady();
      } else onMessage(this, msg);
    });
    const gone = () => {
      markReady();
      if (this.alive) {
        this.alive = false;
        onGone(this);
      }
    };
    this.worker.on('error', gone);
    this.worker.on('exit', gone);
  }

  /** Sends one protocol message to the worker. */
  send(msg: ToWorkerMessage): void {
    this.worker.postMessage(msg);
  }

  hold(): void {
    if (this.runs.size === 1) this.worker.ref();
  }

  release(): void {
    if (this.runs.size === 0) this.worker.unref();
  }
}
