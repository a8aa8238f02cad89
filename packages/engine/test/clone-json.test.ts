// cloneJson: the copy of a trusted-local workflow's result (and of start args) — plain JSON only,
// bounded — and error messages that name the offending value's path (built only on error).
import { describe, expect, it } from 'vitest';
import { cloneJson } from '../src/internal/json.js';

describe('cloneJson', () => {
  it('copies plain JSON, drops undefined members and dangerous keys, nulls undefined items', () => {
    const source = JSON.parse('{"a":[1,{"b":"x"}],"__proto__":{"p":1},"n":null}');
    source.u = undefined;
    source.a.push(undefined);
    const out = cloneJson(source);
    expect(out).toEqual({ ok: true, value: { a: [1, { b: 'x' }, null], n: null } });
    if (!out.ok) throw new Error('unreachable');
    expect((out.value as { a: unknown }).a).not.toBe(source.a);
  });

  it('names the path of the value JSON cannot carry', () => {
    const cyclic: Record<string, unknown> = { k: 1 };
    cyclic.self = { back: cyclic };
    const deep: unknown[] = [];
    let cur = deep;
    for (let i = 0; i < 3; i += 1) {
      const next: unknown[] = [];
      cur.push(next);
      cur = next;
    }
    expect(cloneJson({ a: [1, { b: Number.NaN }] })).toEqual({
      ok: false,
      message: '$.a[1].b is NaN, which JSON cannot carry',
    });
    expect(cloneJson({ list: [0, 1, { f: () => 1 }] })).toEqual({
      ok: false,
      message: '$.list[2].f is a function, which JSON cannot carry',
    });
    expect(cloneJson({ x: [{ when: new Date(0) }] })).toEqual({
      ok: false,
      message: '$.x[0].when is not a plain object',
    });
    expect(cloneJson(cyclic)).toEqual({ ok: false, message: '$.self.back is a cycle' });
    expect(cloneJson({ d: deep }, { maxDepth: 3, maxBytes: 1000 })).toEqual({
      ok: false,
      message: '$.d[0][0][0] is nested deeper than 3',
    });
    // A sibling after a finished subtree is named from its own parent, not the subtree's path.
    expect(cloneJson({ a: { b: { c: 1 } }, z: Number.POSITIVE_INFINITY })).toEqual({
      ok: false,
      message: '$.z is Infinity, which JSON cannot carry',
    });
  });
});
