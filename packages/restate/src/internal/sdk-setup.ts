// The Restate SDK (1.17) calls Promise.withResolvers, which Node 20 lacks: without it the SDK
// crashes at the first invocation. Installed once, before the SDK is loaded, only when missing.
const P = Promise as unknown as { withResolvers?: unknown };
if (typeof P.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
// The SDK logs two INFO lines per invocation (several per wf call here); it reads the level once,
// at load. Quiet by default, RESTATE_LOGGING=INFO brings them back.
if (process.env.RESTATE_LOGGING === undefined) process.env.RESTATE_LOGGING = 'WARN';
export {};
