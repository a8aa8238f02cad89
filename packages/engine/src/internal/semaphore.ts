// A FIFO counting semaphore whose waiters can be cancelled (a stopped run must not keep a slot).

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
        const waiter = {
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            held += 1;
            resolve(releaser());
          },
        };
        const onAbort = () => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
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
  let waiters: {
    resolve: () => void;
    reject: (e: unknown) => void;
    signal?: AbortSignal;
    onAbort: () => void;
  }[] = [];
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
        w.signal?.removeEventListener('abort', w.onAbort);
        w.resolve();
      }
    },
    wait(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (!paused) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = {
          resolve,
          reject,
          ...(signal ? { signal } : {}),
          onAbort: () => {
            waiters = waiters.filter((x) => x !== w);
            reject(signal?.reason);
          },
        };
        signal?.addEventListener('abort', w.onAbort, { once: true });
        waiters.push(w);
      });
    },
  };
}
