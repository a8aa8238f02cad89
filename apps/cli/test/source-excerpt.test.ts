// The excerpt `wf run` prints under a guest error: numbered lines, the caret under the column.
import { describe, expect, it } from 'vitest';
import { guestErrorPosition, sourceExcerpt } from '../src/cli/source-excerpt.js';

const SOURCE = [
  'async function run(wf, args) {',
  '  const x = args.items;',
  '  return x.foo.bar;',
  '}',
].join('\n');

describe('source excerpt', () => {
  it('reads the sandbox position prefix, and nothing else', () => {
    expect(guestErrorPosition("line 3:15: TypeError: cannot read property 'bar'")).toEqual({
      line: 3,
      column: 15,
    });
    expect(guestErrorPosition('TypeError: line 3:15: no')).toBeUndefined();
    expect(guestErrorPosition('the workflow threw')).toBeUndefined();
  });

  it('numbers the lines around the error and puts the caret under its column', () => {
    expect(sourceExcerpt(SOURCE, { line: 3, column: 15 })).toBe(
      [
        '  1 | async function run(wf, args) {',
        '  2 |   const x = args.items;',
        '> 3 |   return x.foo.bar;',
        '    |               ^',
        '  4 | }',
      ].join('\n'),
    );
  });

  it('shows nothing for a position outside the source, and escapes control characters', () => {
    expect(sourceExcerpt(SOURCE, { line: 9, column: 1 })).toBeUndefined();
    expect(sourceExcerpt(SOURCE, { line: 1, column: 80 })).toBeUndefined();
    const hostile = 'async function run() {\n  \u001b[2J\u202ethrow 1;\n}';
    const out = (sourceExcerpt(hostile, { line: 2, column: 8 }) ?? '').split('\n');
    expect(out.join('\n')).not.toMatch(/[\u001b\u202e]/);
    // The escapes as shown, and the caret under the column they push to the right.
    expect(out[1]).toBe('> 2 |   \\u001b[2J\\u202ethrow 1;');
    expect(out[2]).toBe(`    | ${' '.repeat(17)}^`);
    expect(out[1]?.indexOf('throw')).toBe(out[2]?.indexOf('^'));
  });

  it('shows a tab as one space, so the caret stays under its column', () => {
    const out = (
      sourceExcerpt('async function run() {\n\t\tthrow 1;\n}', { line: 2, column: 3 }) ?? ''
    ).split('\n');
    expect(out[1]).toBe('> 2 |   throw 1;');
    expect(out[2]?.indexOf('^')).toBe(out[1]?.indexOf('throw'));
  });
});
