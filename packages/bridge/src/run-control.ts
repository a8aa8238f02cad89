// The run-control marker (invariant 2): an error whose `data.runControl` is true fails the whole
// run even when the workflow catches it. One definition, read by the engine (host), the dispatch
// (which marks refused calls) and the guest prelude (which embeds the same predicate as text).

/** The JSON an error carries across the sandbox boundary; `runControl` marks run control. */
export interface RunControlData {
  readonly runControl: boolean;
  readonly [key: string]: unknown;
}

/**
 * The predicate as guest source text, embedded by the prelude. Text rather than a stringified
 * function, so no build tool can inject helpers into it; `isRunControlError` below is the host
 * form and a test runs both over the same cases.
 */
export const RUN_CONTROL_CHECK_SOURCE =
  "(e) => e !== null && typeof e === 'object' && e.data !== null && " +
  "typeof e.data === 'object' && e.data.runControl === true";

/** True for any error (engine, bridge, guest-rebuilt, journal-replayed) marked as run control. */
export function isRunControlError(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const data = (value as { data?: unknown }).data;
  return (
    typeof data === 'object' &&
    data !== null &&
    (data as { runControl?: unknown }).runControl === true
  );
}

/**
 * Sets `data` on `error` (enumerable, so the sandbox copies it onto the guest's error) with
 * `runControl` as given; returns the same error.
 */
export function withRunControlData<E extends Error>(
  error: E,
  runControl: boolean,
  data: { readonly [key: string]: unknown } = {},
): E & { readonly data: RunControlData } {
  Object.defineProperty(error, 'data', {
    value: { ...data, runControl },
    enumerable: true,
    configurable: false,
    writable: false,
  });
  return error as E & { readonly data: RunControlData };
}
