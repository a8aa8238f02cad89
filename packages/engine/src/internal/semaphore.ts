// A FIFO counting semaphore whose waiters can be cancelled (a stopped run must not keep a slot).
import { onAbort as subscribe } from './abort-fanout.js';

export interface Semaphore {
  readonly capacity: number;
  /** Slots currently held. */
  active(): number;
  /** Waiters still queued. */
  queued(): number;
  /** Resolves with a release function once a slot is free; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

export function createSemaphore(capacity: number): Semaphore {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`semaphore capacity must be a positive integer, got ${capacity}`);
  }
  let held = 0;
  const waiters: { grant: () => void }[] = [];

  const releaser = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held -= 1;
      const next = waiters.shift();
      if (next) next.grant();
    };
  };

  return {
    capacity,
    active: () => held,
    queued: () => waiters.length,
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (held < capacity) {
        held += 1;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve, reject) => {
        let unsubscribe = () => {};
        const waiter = {
          grant: () => {
            unsubscribe();
            held += 1;
            resolve(releaser());
          },
        };
        if (signal)
          unsubscribe = subscribe(signal, () => {
            const i = waiters.indexOf(waiter);
            if (i >= 0) waiters.splice(i, 1);
            reject(signal.reason);
          });
        waiters.push(waiter);
      });
    },
  };
}

/** The pause gate: `wait()` resolves immediately unless paused. */
export interface Gate {
  readonly paused: boolean;
  pause(): void;
  resume(): void;
  wait(signal?: AbortSignal): Promise<void>;
}

export function createGate(): Gate {
  let paused = false;
  let waiters: { resolve: () => void; unsubscribe: () => void }[] = [];
  return {
    get paused() {
      return paused;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      const ws = waiters;
      waiters = [];
      for (const w of ws) {
        w.unsubscribe();
        w.resolve();
      }
    },
    wait(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (!paused) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = { resolve, unsubscribe: () => {} };
        if (signal)
          w.unsubscribe = subscribe(signal, () => {
            waiters = waiters.filter((x) => x !== w);
            reject(signal.reason);
          });
        waiters.push(w);
      });
    },
  };
}
