// Plain-JSON check and copy: what may cross into the guest or be stored in a capsule (invariant 1).
import { DOCUMENT_LIMITS } from '../constants.js';
import type { JsonValue } from '../json-value.js';
import { formatPath, type PathKey, type ValidationIssue } from './issues.js';

export type { JsonValue };

/** Keys the sandbox drops at the crossing (invariant 1); refused here so nothing is lost silently. */
export const DROPPED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface JsonCheckOptions {
  readonly root: string;
  /** Names the root in messages when `root` is empty (a capsule's paths start at its keys). */
  readonly rootLabel?: string;
  readonly maxDepth?: number;
  /** Most JSON values (nodes) the value may have; past it the walk stops with one issue. */
  readonly maxNodes?: number;
}

export type JsonCheckResult =
  | { ok: true; value: JsonValue }
  | {
      ok: false;
      issues: ValidationIssue[];
      /** The copy with every refused node replaced by null, so schema checks can still run on it. */
      partial: JsonValue;
      /** Set when the walk stopped at `maxNodes`. */
      tooLarge?: boolean;
    };

/**
 * Checks that `value` is plain JSON and returns a fresh copy. Refused: undefined, functions,
 * symbols, bigints, NaN/Infinity/-0, sparse arrays, class instances, accessors, symbol keys,
 * non-enumerable properties, cycles, nesting beyond `maxDepth`.
 */
export function checkPlainJson(value: unknown, options: JsonCheckOptions): JsonCheckResult {
  const maxDepth = options.maxDepth ?? DOCUMENT_LIMITS.maxDepth;
  const maxNodes = options.maxNodes ?? Number.POSITIVE_INFINITY;
  let tooLarge = false;
  const issues: ValidationIssue[] = [];
  const ancestors = new Set<object>();
  const path: PathKey[] = [];
  let budget = DOCUMENT_LIMITS.maxIssues * 2;

  const fail = (message: string): undefined => {
    const at = formatPath(options.root, path) || options.rootLabel || options.root;
    budget--;
    issues.push({ path: at, message: `${at} ${message}` });
    return undefined;
  };

  let nodes = 0;
  const tooMany = (): undefined => {
    budget = 0;
    tooLarge = true;
    const at = options.rootLabel || options.root;
    issues.length = 0;
    issues.push({
      path: at,
      message: `${at} has more than ${maxNodes} JSON values (objects, arrays, strings, numbers...)`,
    });
    return undefined;
  };
  const walk = (item: unknown, depth: number): JsonValue | undefined => {
    if (budget <= 0) return undefined;
    // invariant 6: the walk's work is bounded by maxNodes, whatever the value's shape.
    if (++nodes > maxNodes) return tooMany();
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return item;
      case 'number':
        if (!Number.isFinite(item)) return fail(`must be a finite number (got ${String(item)})`);
        if (Object.is(item, -0)) return fail('must not be -0 (JSON cannot carry it)');
        return item;
      case 'undefined':
        return fail('must be a JSON value (got undefined)');
      case 'object':
        break;
      default:
        return fail(`must be a JSON value (got a ${typeof item})`);
    }
    if (item === null) return null;
    if (ancestors.has(item)) return fail('must not contain a cycle');
    if (depth >= maxDepth) return fail(`nests deeper than ${maxDepth} levels`);
    ancestors.add(item);
    const at = path.length;
    try {
      if (Array.isArray(item)) return walkArray(item, depth);
      return walkObject(item, depth);
    } catch {
      // A proxy or exotic host object threw while being inspected: report it, never rethrow.
      path.length = at;
      return fail('could not be read (inspecting it threw)');
    } finally {
      ancestors.delete(item);
    }
  };

  const walkArray = (item: unknown[], depth: number): JsonValue[] | undefined => {
    if (Object.getPrototypeOf(item) !== Array.prototype) return fail('must be a plain array');
    // Refused before listing its keys: listing alone costs as much as walking.
    if (item.length > maxNodes - nodes) return tooMany();
    const out: JsonValue[] = [];
    const keys = Reflect.ownKeys(item);
    // A dense array without extra properties has exactly its indices and `length` (the common
    // case, checked without a regex per index); holes are reported by the loop below.
    if (keys.length !== item.length + 1) {
      for (const key of keys) {
        if (key === 'length') continue;
        if (typeof key === 'symbol' || !/^(0|[1-9][0-9]*)$/.test(key)) {
          fail(`must be a plain array (it has an extra property ${String(key)})`);
        }
      }
    }
    for (let index = 0; index < item.length && budget > 0; index++) {
      path.push(index);
      const descriptor = Object.getOwnPropertyDescriptor(item, index);
      if (descriptor === undefined) {
        fail('must not be a hole (sparse arrays are not JSON)');
        out.push(null);
      } else if (!('value' in descriptor)) {
        fail('must be a data property, not an accessor');
        out.push(null);
      } else {
        const copy = walk(descriptor.value, depth + 1);
        out.push(copy ?? null);
      }
      path.pop();
    }
    return out;
  };

  const walkObject = (item: object, depth: number): JsonValue | undefined => {
    const proto = Object.getPrototypeOf(item);
    if (proto !== Object.prototype && proto !== null) {
      return fail('must be a plain object (got a class instance)');
    }
    const out: Record<string, JsonValue> = {};
    for (const key of Reflect.ownKeys(item)) {
      if (budget <= 0) break;
      if (typeof key === 'symbol') {
        fail(`must not have symbol keys (${String(key)})`);
        continue;
      }
      path.push(key);
      const descriptor = Object.getOwnPropertyDescriptor(item, key)!;
      // Refused everywhere: the sandbox and valibot would both drop them silently.
      if (DROPPED_KEYS.has(key)) {
        fail('is a reserved key (__proto__, constructor and prototype are never accepted)');
      } else if (!('value' in descriptor)) {
        fail('must be a data property, not an accessor');
      } else if (descriptor.enumerable !== true) {
        fail('must be an enumerable property');
      } else {
        // Assignment is safe: `__proto__`, the one key it would not copy as data, is refused above.
        out[key] = walk(descriptor.value, depth + 1) ?? null;
      }
      path.pop();
    }
    return out;
  };

  const copy = walk(value, 0) ?? null;
  if (issues.length > 0) {
    return tooLarge
      ? { ok: false, issues, partial: null, tooLarge: true }
      : { ok: false, issues, partial: copy };
  }
  return { ok: true, value: copy };
}
