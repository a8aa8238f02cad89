import { describe, expect, it } from 'vitest';
import { utcMinute } from '../src/format.js';

// What `wf runs` and `wf show` printed before utcMinute: its output must not change.
const viaIso = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

describe('utcMinute', () => {
  it('prints the UTC minute toISOString gives, at every field boundary and across years 0-9999', () => {
    const at = [
      0,
      Date.UTC(2026, 11, 5, 9, 7, 59, 999),
      Date.UTC(1999, 11, 31, 23, 59),
      Date.UTC(2000, 1, 29, 0, 0),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(0, 0, 1) - 0, // year 1900 (Date.UTC maps 0-99 to 19xx)
      new Date('0000-01-01T00:00:00Z').getTime(),
      new Date('0042-03-04T05:06:00Z').getTime(),
      -1,
    ];
    // a deterministic spread over 0000-9999 (no Math.random: a failure must reproduce)
    const lo = new Date('0000-01-01T00:00:00Z').getTime();
    const hi = new Date('9999-12-31T23:59:59Z').getTime();
    for (let i = 0; i <= 2000; i += 1)
      at.push(lo + Math.floor(((hi - lo) * i) / 2000) + i * 61_001);
    for (const ms of at) expect(utcMinute(ms), String(ms)).toBe(viaIso(ms));
  });

  it('keeps the extended form outside years 0-9999 and prints ? for a time that is not one', () => {
    const far = new Date('+012345-06-07T08:09:00Z').getTime();
    const before = new Date('-000001-12-31T23:59:00Z').getTime();
    expect(utcMinute(far)).toBe(viaIso(far));
    expect(utcMinute(before)).toBe(viaIso(before));
    expect(utcMinute(Number.NaN)).toBe('?');
    expect(utcMinute(Number.POSITIVE_INFINITY)).toBe('?');
    expect(utcMinute(8.64e15 + 1)).toBe('?');
  });
});
