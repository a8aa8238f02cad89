// JSON cloning with caps for values crossing between a workflow and the host (invariant 1):
// plain data only, finite numbers, bounded depth and size, dangerous keys dropped.

const DROPPED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface CloneLimits {
  readonly maxDepth: number;
  readonly maxBytes: number;
}

export const DEFAULT_CLONE_LIMITS: CloneLimits = { maxDepth: 64, maxBytes: 4 * 1024 * 1024 };

export type CloneResult = { ok: true; value: unknown } | { ok: false; message: string };

/** Deep-copies plain JSON data; `undefined` at the top becomes null, in objects it is omitted. */
export function cloneJson(value: unknown, limits: CloneLimits = DEFAULT_CLONE_LIMITS): CloneResult {
  let bytes = 0;
  const seen = new Set<object>();
  // The path is only spelled out for an error, not built for every value: a large trusted-local
  // result clones noticeably faster.
  const keys: (string | number)[] = [];
  const at = (): string =>
    keys.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), '$');
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > limits.maxDepth)
      throw new Error(`${at()} is nested deeper than ${limits.maxDepth}`);
    if (v === null) return null;
    switch (typeof v) {
      case 'string':
        bytes += v.length + 2;
        if (bytes > limits.maxBytes)
          throw new Error(`value is larger than ${limits.maxBytes} bytes`);
        return v;
      case 'number':
        if (!Number.isFinite(v)) throw new Error(`${at()} is ${v}, which JSON cannot carry`);
        bytes += 8;
        return v;
      case 'boolean':
        bytes += 5;
        return v;
      case 'undefined':
        return undefined;
      case 'object':
        break;
      default:
        throw new Error(`${at()} is a ${typeof v}, which JSON cannot carry`);
    }
    const obj = v as object;
    if (seen.has(obj)) throw new Error(`${at()} is a cycle`);
    seen.add(obj);
    try {
      if (Array.isArray(obj)) {
        const out: unknown[] = [];
        for (let i = 0; i < obj.length; i += 1) {
          keys.push(i);
          const item = walk(obj[i], depth + 1);
          keys.pop();
          out.push(item === undefined ? null : item);
        }
        bytes += 2 + obj.length;
        return out;
      }
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) {
        throw new Error(`${at()} is not a plain object`);
      }
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(obj)) {
        if (DROPPED_KEYS.has(key)) continue;
        keys.push(key);
        const item = walk((obj as Record<string, unknown>)[key], depth + 1);
        keys.pop();
        if (item === undefined) continue;
        bytes += key.length + 3;
        out[key] = item;
      }
      bytes += 2;
      return out;
    } finally {
      seen.delete(obj);
    }
  };
  try {
    const value2 = walk(value, 0);
    return { ok: true, value: value2 === undefined ? null : value2 };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

/** Recursively freezes a fresh JSON value. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Stable text for comparing journaled inputs (inputs are fresh JSON clones, key order kept). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}
