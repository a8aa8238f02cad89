// Host-side JSON crossings (invariant 1): values become size- and depth-capped JSON text, and
// text becomes values with `__proto__`/`constructor`/`prototype` keys dropped.
import { jsonDepthWithin } from './json-shape.js';

const DROPPED = new Set(['__proto__', 'constructor', 'prototype']);

function dropKeys(this: unknown, key: string, value: unknown): unknown {
  if (DROPPED.has(key)) return undefined;
  if (typeof value === 'bigint') throw new TypeError('a BigInt cannot cross as JSON');
  return value;
}

export type JsonTextResult =
  | { ok: true; text: string | undefined }
  | { ok: false; reason: 'not-json' | 'too-large' | 'too-deep'; detail: string };

/** Serializes a host value for the guest; `undefined` stays `undefined` (text omitted). */
export function toJsonText(value: unknown, maxBytes: number, maxDepth: number): JsonTextResult {
  let text: string | undefined;
  try {
    // Primitives have no keys to drop (a BigInt still throws), so they skip the replacer.
    const t = typeof value;
    text =
      t === 'number' || t === 'string' || t === 'boolean' || value === null
        ? JSON.stringify(value)
        : JSON.stringify(value, dropKeys);
  } catch (e) {
    const detail = e instanceof RangeError ? 'it nests too deeply' : 'it is not plain JSON data';
    return { ok: false, reason: e instanceof RangeError ? 'too-deep' : 'not-json', detail };
  }
  if (text === undefined) return { ok: true, text: undefined };
  if (text.length > maxBytes || Buffer.byteLength(text, 'utf8') > maxBytes) {
    return { ok: false, reason: 'too-large', detail: `it is larger than ${maxBytes} bytes` };
  }
  if (!jsonDepthWithin(text, maxDepth)) {
    return { ok: false, reason: 'too-deep', detail: `it nests deeper than ${maxDepth}` };
  }
  return { ok: true, text };
}

function reviveDropping(this: unknown, key: string, value: unknown): unknown {
  return DROPPED.has(key) ? undefined : value;
}

/** Parses JSON text that came from the guest; the depth was checked before (bounded recursion). */
export function parseJsonText(text: string): unknown {
  // Keys may be spelled with escapes (\u005f_proto__), so any escape forces the reviver.
  const needsReviver =
    text.includes('\\u') ||
    text.includes('"__proto__"') ||
    text.includes('"constructor"') ||
    text.includes('"prototype"');
  return needsReviver ? JSON.parse(text, reviveDropping) : JSON.parse(text);
}
