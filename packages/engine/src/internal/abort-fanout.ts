// One real 'abort' listener per signal, fanned out to any number of waiters. A run's signal is
// shared by every queued child (semaphores, pause gate, launch); a listener per waiter made Node
// print MaxListenersExceededWarning into the live view at 11+ queued agents.

const fanouts = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts; returns the unsubscribe. Never adds a second listener. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = fanouts.get(signal);
  if (!set) {
    const created = new Set<() => void>();
    set = created;
    fanouts.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        fanouts.delete(signal);
        for (const f of [...created]) f();
      },
      { once: true },
    );
  }
  const entry = () => fn();
  set.add(entry);
  const own = set;
  return () => {
    own.delete(entry);
  };
}
