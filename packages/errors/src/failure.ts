// The one failure shape of single-error operations, and the code-table helper. Validators that
// report many findings keep their own `issues`/`errors` lists; everything else fails with this.
import type { ErrorInfo } from './error.js';

/** A failed single-error operation: `{ ok: false, error: { code, message, hint? } }`. */
export interface Failure<C extends string = string> {
  readonly ok: false;
  readonly error: ErrorInfo<C>;
}

/** A single-error operation's result: `T` and `ok: true`, or a `Failure`. */
export type Outcome<T extends object, C extends string = string> =
  | ({ readonly ok: true } & T)
  | Failure<C>;

/** Builds a `Failure`; `hint` is left out rather than set to undefined. */
export function failure<C extends string>(code: C, message: string, hint?: string): Failure<C> {
  return {
    ok: false,
    error: hint === undefined ? { code, message } : { code, message, hint },
  };
}

/** The codes of a table, as a union type (`keyof`, since keys equal values). */
export type CodeOf<T extends Readonly<Record<string, string>>> = keyof T & string;

/**
 * True when a code table is keyed CODE -> CODE and every code starts with `prefix`: the shape
 * the repository's conformance test requires of each package's table.
 */
export function isCodeTable(table: unknown, prefix: string): boolean {
  if (typeof table !== 'object' || table === null) return false;
  const entries = Object.entries(table);
  return (
    entries.length > 0 &&
    entries.every(
      ([key, value]) => key === value && key.startsWith(prefix) && /^WF_[A-Z0-9_]+$/.test(key),
    )
  );
}
