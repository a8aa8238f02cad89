// Main-thread state of one sandbox: its worker pool, counters, and the host-side record of each
// run (what a replay needs, outstanding capability calls, how its outcome resolves).
import type { Capability, SandboxLimits, SandboxOutcome } from '../types.js';
import type { PoolWorker } from './pool-worker.js';
import type { StartFields, WorkerStats } from './protocol.js';

export const MAX_ERROR_CHARS = 2000;

export interface Ending {
  status: SandboxOutcome['status'];
  code: string;
  message: string;
  valueText?: string | null;
  guestCode?: string;
}

export interface Call {
  abort: () => void;
  done: Promise<void>;
}

export interface Run {
  id: number;
  start: StartFields;
  /** Settlements in the order they were sent to the worker: replayed after a worker loss. */
  log: [number, string][];
  /** Highest call id dispatched; a replay re-issues calls up to it, which are not re-run. */
  dispatched: number;
  replays: number;
  /** Workers this run left while they were hot; they may still hold its copy until it is closed. */
  left: Set<PoolWorker>;
  limits: SandboxLimits;
  capabilities: Record<string, Capability>;
  seed: number;
  startTime: number;
  t0: number;
  worker: PoolWorker;
  calls: Map<number, Call>;
  /** The worker reported the end (or the run was ended on the host side). */
  ended: boolean;
  /** The outcome promise has been resolved. */
  done: boolean;
  resolve: (o: SandboxOutcome) => void;
  stats: WorkerStats;
  watchdog: ReturnType<typeof setTimeout> | null;
  detachSignal: (() => void) | null;
  disposed: (() => void) | null;
}

/** The mutable state createSandbox() shares with the pool, capability and run-end modules. */
export interface SandboxState {
  closed: boolean;
  runSeq: number;
  workerSeq: number;
  pool: PoolWorker[];
  /**
   * options.poolSize: the workers the pool keeps (the first at creation, more on demand, the rest
   * in the background BACKGROUND_BOOT_MS later); it holds up to EXTRA_WORKERS more while
   * bystanders leave hot ones.
   */
  poolSize: number;
  /** The background boot of the rest of the pool and the spare, until it fires. */
  bootTimer: ReturnType<typeof setTimeout> | null;
  /** Workers that died before they ever became ready, in a row (a broken install, not a guest). */
  earlyDeaths: number;
  /**
   * A started worker kept out of the pool, so that runs replayed after a worker loss do not wait
   * for a thread to boot and load QuickJS (the cost: one idle worker).
   */
  spare: PoolWorker | null;
  /** The engine this thread is compiling for the first worker (see spawn), or null. */
  engine: Promise<unknown> | null;
  workerOptions: {
    moduleHighWaterBytes: number;
    moduleMaxRuns: number;
    memoryBytes: number;
    wasmModule: unknown;
    /** Each worker sets V8's --liftoff-only first thing (options.wasmTierUp false). */
    liftoffOnly: boolean;
  };
}

export function emptyStats(): WorkerStats {
  return {
    cpuMs: 0,
    hostCalls: 0,
    peakMemoryBytes: 0,
    workerId: '',
    moduleId: '',
    retiredAfterTrouble: 0,
  };
}

/** Node fires timers above 2^31-1 ms at once; long limits are clamped instead (~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
export const timerMs = (ms: number): number => Math.min(ms, MAX_TIMER_MS);

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, timerMs(ms));
  });
}
