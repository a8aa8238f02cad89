import { describe, expect, it } from 'vitest';
import { jsonDepthWithin } from '../src/internal/json-shape.js';
import { parseJsonText, toJsonText } from '../src/internal/json.js';

describe('jsonDepthWithin', () => {
  it('counts nesting outside strings only', () => {
    expect(jsonDepthWithin('[[[]]]', 3)).toBe(true);
    expect(jsonDepthWithin('[[[]]]', 2)).toBe(false);
    expect(jsonDepthWithin('{"a":{"b":[1]}}', 3)).toBe(true);
    expect(jsonDepthWithin('{"a":{"b":[1]}}', 2)).toBe(false);
    expect(jsonDepthWithin('"[[[[[[[["', 1)).toBe(true);
    expect(jsonDepthWithin('["\\"[[[[", 1]', 1)).toBe(true);
    expect(jsonDepthWithin('1', 0)).toBe(true);
  });
});

describe('toJsonText', () => {
  it('drops dangerous keys and keeps the rest', () => {
    const v = JSON.parse(
      '{"__proto__": {"x": 1}, "constructor": 1, "prototype": 2, "a": {"prototype": 3, "b": 4}}',
    );
    expect(toJsonText(v, 1000, 10)).toEqual({ ok: true, text: '{"a":{"b":4}}' });
  });
  it('keeps undefined as no text', () => {
    expect(toJsonText(undefined, 10, 10)).toEqual({ ok: true, text: undefined });
  });
  it('refuses BigInt, cycles, oversize and over-deep values with a reason', () => {
    expect(toJsonText({ n: 1n }, 100, 10)).toMatchObject({ ok: false, reason: 'not-json' });
    const c: Record<string, unknown> = {};
    c.c = c;
    expect(toJsonText(c, 100, 10)).toMatchObject({ ok: false, reason: 'not-json' });
    expect(toJsonText('x'.repeat(50), 20, 10)).toMatchObject({ ok: false, reason: 'too-large' });
    expect(toJsonText('é'.repeat(15), 20, 10)).toMatchObject({ ok: false, reason: 'too-large' });
    expect(toJsonText([[[[1]]]], 100, 3)).toMatchObject({ ok: false, reason: 'too-deep' });
  });
});

describe('parseJsonText', () => {
  it('drops dangerous keys, including escaped spellings', () => {
    const v = parseJsonText(
      '{"\\u005f_proto__": {"p": 1}, "a": [{"constructor": {"prototype": {}}}], "k": "\\u0041"}',
    ) as Record<string, unknown>;
    expect(v).toEqual({ a: [{}], k: 'A' });
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  });
  it('parses plain JSON unchanged', () => {
    expect(parseJsonText('{"a":[1,"two",null,true]}')).toEqual({ a: [1, 'two', null, true] });
  });
});
