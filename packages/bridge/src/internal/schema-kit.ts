// Small valibot building blocks whose messages are predicates ("must be ..."); the path is prefixed later.
import * as v from 'valibot';
import { DOCUMENT_LIMITS } from '../constants.js';
import { describeValue } from './issues.js';

type AnyIssue = v.BaseIssue<unknown>;

/** A message that ends with what was received. */
export function got(text: string): (issue: AnyIssue) => string {
  return (issue) => `${text} (got ${describeValue(issue.input)})`;
}

/**
 * An object with exactly these keys. Every unknown key is refused naming the key (valibot's
 * strictObject stops at the first); missing required keys are reported as required.
 */
export function exactObject<const TEntries extends v.ObjectEntries>(
  entries: TEntries,
  what = 'an object',
) {
  const allowed = Object.keys(entries).join(', ');
  return v.pipe(
    v.looseObject(entries, (issue) => {
      if (issue.input === undefined && issue.path !== undefined) return 'is required';
      return `must be ${what} (got ${describeValue(issue.input)})`;
    }),
    v.rawCheck(({ dataset, addIssue }) => {
      const value = dataset.value as Record<string, unknown>;
      if (typeof value !== 'object' || value === null) return;
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(entries, key)) continue;
        addIssue({
          message: `is not a known field (allowed: ${allowed})`,
          path: [{ type: 'object', origin: 'key', input: value, key, value: value[key] }],
        });
      }
    }),
  ) as unknown as v.SchemaWithPipe<readonly [v.ObjectSchema<TEntries, undefined>]>;
}

/** A string that is not blank, capped in length. */
export function text(max: number = DOCUMENT_LIMITS.maxTextChars) {
  return v.pipe(
    v.string(got('must be a string')),
    v.check((s) => s.trim().length > 0, 'must not be empty or blank'),
    v.maxLength(max, (issue) => `must be at most ${max} characters (got ${issue.received})`),
  );
}

/** A positive safe integer, one message for every way of not being one. */
export function positiveInteger() {
  const message = got('must be a positive integer');
  return v.pipe(v.number(message), v.safeInteger(message), v.minValue(1, message));
}

/** A non-negative safe integer. */
export function nonNegativeInteger() {
  const message = got('must be a non-negative integer');
  return v.pipe(v.number(message), v.safeInteger(message), v.minValue(0, message));
}

export function boolean() {
  return v.boolean(got('must be a boolean'));
}

/** One of a closed list of strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(options: T) {
  return v.picklist(options, got(`must be one of ${options.join(', ')}`));
}

/** A list of items, optionally required to be non-empty, capped in length. */
export function list<TItem extends v.GenericSchema>(
  item: TItem,
  options: { nonEmpty?: boolean; max?: number } = {},
) {
  const max = options.max ?? DOCUMENT_LIMITS.maxListItems;
  return v.pipe(
    v.array(item, got('must be an array')),
    v.check((a) => options.nonEmpty !== true || a.length > 0, 'must not be empty'),
    v.maxLength(max, (issue) => `must have at most ${max} items (got ${issue.received})`),
  );
}

/** Valibot's object schemas let arrays through; JSON documents must not confuse the two. */
export function objectLike(what: string) {
  return v.custom<Record<string, unknown>>(
    (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
    got(`must be ${what}`),
  );
}

/** `exactObject` that also refuses arrays; use this everywhere except inside a `variant`. */
export function plainObject<const TEntries extends v.ObjectEntries>(
  entries: TEntries,
  what = 'an object',
) {
  return v.pipe(objectLike(what), exactObject(entries, what));
}
