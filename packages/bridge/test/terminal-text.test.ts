// The terminal sanitizer (invariant 13) over generated text: no control code point survives, every
// other code point is kept in order, the escapes read back as the original, and JSON text stays
// the same JSON. The oracle is Unicode's own classes, not the sanitizer's list.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { terminalText } from '../src/terminal-text.js';

/** What must never reach a terminal raw: Cc (C0, DEL, C1), Bidi_Control, Zl and Zp. */
const CONTROL = /[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;
const CONTROL_BUT_LINES = /(?![\n\t])[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;

// Every code point, lone surrogates included, with the controls and their neighbours drawn often.
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  0x61c,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
];
const NEIGHBOURS = [
  0x20, 0x7e, 0xa0, 0xad, 0x61b, 0x61d, 0x200b, 0x200d, 0x2027, 0x202f, 0x2065, 0x206a, 0xfeff,
  0x5c, 0x22,
];
const codePoint = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0x10ffff }) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROLS) },
  { weight: 1, arbitrary: fc.constantFrom(...NEIGHBOURS) },
  { weight: 2, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
);
const char = codePoint.map((cp) => String.fromCodePoint(cp));
const text = fc.string({ unit: char, maxLength: 64 });
const printable = fc.string({ unit: char.filter((c) => !CONTROL.test(c)), maxLength: 64 });

describe('terminalText', () => {
  it('lets no control code point through, in either layout', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(terminalText(s)).not.toMatch(CONTROL);
        expect(terminalText(s, 'lines')).not.toMatch(CONTROL_BUT_LINES);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps text without controls exactly as it is', () => {
    fc.assert(
      fc.property(printable, (s) => {
        expect(terminalText(s)).toBe(s);
        expect(terminalText(s, 'lines')).toBe(s);
      }),
      { numRuns: 1000 },
    );
  });

  it('shows each control as an escape that reads back as the original text', () => {
    // Without `\` and `"` in the input, the output in quotes is a JSON string of the input.
    const plain = text.map((s) => s.replace(/[\\"]/g, ''));
    fc.assert(
      fc.property(plain, (s) => {
        expect(JSON.parse(`"${terminalText(s)}"`)).toBe(s);
        const lines = terminalText(s, 'lines').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
        expect(JSON.parse(`"${lines}"`)).toBe(s.replace(/\r\n/g, '\n'));
      }),
      { numRuns: 1000 },
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(text, (s) => {
        const once = terminalText(s);
        expect(terminalText(once)).toBe(once);
        const lines = terminalText(s, 'lines');
        expect(terminalText(lines, 'lines')).toBe(lines);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves JSON text the same JSON, with no raw control in it', () => {
    const value = fc.jsonValue({ maxDepth: 3, stringUnit: char });
    fc.assert(
      fc.property(value, (v) => {
        const json = JSON.stringify(v, null, 2);
        const shown = terminalText(json, 'lines');
        expect(shown).not.toMatch(CONTROL_BUT_LINES);
        expect(JSON.parse(shown)).toEqual(JSON.parse(json));
      }),
      { numRuns: 500 },
    );
  });

  it('defuses escape sequences and bidi overrides', () => {
    expect(terminalText('\u001b]0;pwned\u0007title')).toBe('\\u001b]0;pwned\\u0007title');
    expect(terminalText('\u001b[2J\u001b[H')).toBe('\\u001b[2J\\u001b[H');
    expect(terminalText('\u009b31m\u009d8;;x\u009c')).toBe('\\u009b31m\\u009d8;;x\\u009c');
    expect(terminalText('\u0090q\u001b\\')).toBe('\\u0090q\\u001b\\');
    expect(terminalText('admin\u202e\u2066txt.exe\u2069')).toBe(
      'admin\\u202e\\u2066txt.exe\\u2069',
    );
    expect(terminalText('a\u200eb\u200fc\u061cd')).toBe('a\\u200eb\\u200fc\\u061cd');
    expect(terminalText('one\ntwo\tthree\r\n')).toBe('one\\ntwo\\tthree\\r\\n');
    expect(terminalText('one\r\ntwo\tthree\rover', 'lines')).toBe('one\ntwo\tthree\\rover');
    expect(terminalText('del\u007f nul\u0000 bs\b ff\f')).toBe('del\\u007f nul\\u0000 bs\\b ff\\f');
    expect(terminalText('héllo, 世界 👋🏽 \u200d')).toBe('héllo, 世界 👋🏽 \u200d');
  });
});
