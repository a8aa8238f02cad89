// invariant 5: the guest's local-time Date methods must behave as UTC whatever the host TZ is.
// QuickJS asks the Emscripten runtime for local time through the worker realm's Date, and that
// realm runs nothing else, so pinning its local-time view to UTC pins the guest's.
// @ts-check

/** Pins this realm's local-time Date view to UTC (call once, before any module loads). */
export function pinLocalTimeToUtc() {
  const P = Date.prototype;
  const pairs = /** @type {const} */ ([
    ['getFullYear', 'getUTCFullYear'],
    ['getMonth', 'getUTCMonth'],
    ['getDate', 'getUTCDate'],
    ['getDay', 'getUTCDay'],
    ['getHours', 'getUTCHours'],
    ['getMinutes', 'getUTCMinutes'],
    ['getSeconds', 'getUTCSeconds'],
    ['getMilliseconds', 'getUTCMilliseconds'],
  ]);
  for (const [local, utc] of pairs) {
    Object.defineProperty(P, local, { value: P[utc], writable: true, configurable: true });
  }
  Object.defineProperty(P, 'getTimezoneOffset', {
    value: () => 0,
    writable: true,
    configurable: true,
  });
  const RealDate = Date;
  /** A Date whose multi-argument (local-time) constructor is read as UTC. */
  const UtcDate = new Proxy(RealDate, {
    construct(target, args, newTarget) {
      if (args.length > 1) {
        return Reflect.construct(
          target,
          [RealDate.UTC(.../** @type {[number, number]} */ (args))],
          newTarget,
        );
      }
      return Reflect.construct(target, args, newTarget);
    },
  });
  globalThis.Date = UtcDate;
}
