// Size and nesting caps: checked before parsing, so hostile sizes give diagnostics, not crashes.
import { describe, expect, it } from 'vitest';
import {
  checkWorkflowSource,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_DEPTH,
  MAX_DIAGNOSTICS,
} from '../src/index.js';
import { errorCodes, errorsOf, inRun } from './helpers.js';

describe('size cap', () => {
  it('refuses a source one byte over the default 512 KiB cap, at 1:1', () => {
    const base = inRun('return 1;');
    const source = base + ' '.repeat(DEFAULT_MAX_BYTES - base.length + 1);
    const [d] = errorsOf(source);
    expect(d).toMatchObject({ code: 'WF_SOURCE_TOO_LARGE', line: 1, column: 1 });
    expect(d?.message).toContain(String(DEFAULT_MAX_BYTES));
  });

  it('accepts a source exactly at the cap', () => {
    const base = inRun('return 1;');
    expect(errorCodes(base + ' '.repeat(DEFAULT_MAX_BYTES - base.length))).toEqual([]);
  });

  it('counts UTF-8 bytes, not UTF-16 units', () => {
    const body = `return '${'é'.repeat(600)}${'😀'.repeat(100)}';`; // 1200 + 400 bytes
    const source = inRun(body);
    const bytes = Buffer.byteLength(source, 'utf8');
    expect(errorCodes(source, { maxBytes: bytes })).toEqual([]);
    expect(errorCodes(source, { maxBytes: bytes - 1 })).toEqual(['WF_SOURCE_TOO_LARGE']);
    expect(source.length).toBeLessThan(bytes - 1);
  });

  it('refuses 10 MB quickly without parsing it', () => {
    expect(errorCodes('('.repeat(10_000_000))).toEqual(['WF_SOURCE_TOO_LARGE']);
  });
});

describe('nesting cap', () => {
  it.each([10_000, 100_000])('refuses a %i-deep bracket nest with a diagnostic', (n) => {
    for (const [open, close] of [
      ['(', ')'],
      ['[', ']'],
      ['{', '}'],
    ] as const) {
      const source = inRun(`return ${open.repeat(n)}1${close.repeat(n)};`);
      const [d] = errorsOf(source, { maxBytes: 4 * n + 1000 });
      expect(d?.code).toBe('WF_SOURCE_TOO_DEEP');
      expect(d?.line).toBe(3);
    }
  });

  it('reports the bracket that crosses the cap', () => {
    const [d] = errorsOf('('.repeat(DEFAULT_MAX_DEPTH + 5));
    expect(d).toMatchObject({ code: 'WF_SOURCE_TOO_DEEP', line: 1, column: DEFAULT_MAX_DEPTH + 1 });
  });

  it('counts template substitutions as nesting', () => {
    const n = 300;
    const source = inRun(`return ${'`${'.repeat(n)}1${'}`'.repeat(n)};`);
    expect(errorCodes(source)).toEqual(['WF_SOURCE_TOO_DEEP']);
  });

  it('accepts nesting at the cap and honours a custom cap', () => {
    const body = (n: number) => `return ${'['.repeat(n)}${']'.repeat(n)};`;
    // inRun adds one level (the function body brace) plus the call's parentheses do not stay open.
    expect(errorCodes(inRun(body(DEFAULT_MAX_DEPTH - 1)))).toEqual([]);
    expect(errorCodes(inRun(body(DEFAULT_MAX_DEPTH)))).toEqual(['WF_SOURCE_TOO_DEEP']);
    expect(errorCodes(inRun(body(10)), { maxDepth: 10 })).toEqual(['WF_SOURCE_TOO_DEEP']);
    expect(errorCodes(inRun(body(9)), { maxDepth: 10 })).toEqual([]);
  });

  it.each([
    ['a string', `'${'('.repeat(1000)}'`],
    ['a double-quoted string', `"${'{'.repeat(1000)}"`],
    ['a template', `\`${'['.repeat(1000)}\``],
    ['a line comment', `1 // ${'('.repeat(1000)}\n`],
    ['a block comment', `/* ${'('.repeat(1000)} */ 1`],
    ['a regex class', `/[${'('.repeat(1000)}]/`],
    ['an escaped regex paren', `/${'\\('.repeat(1000)}/`],
  ])('does not count brackets inside %s', (_name, expr) => {
    expect(errorCodes(inRun(`return ${expr};`))).toEqual([]);
  });

  it.each([
    ['logical not', (n: number) => '!'.repeat(n) + 'args'],
    ['unary minus', (n: number) => '- '.repeat(n) + 'args.n'],
    ['typeof', (n: number) => 'typeof '.repeat(n) + 'args'],
    ['a ternary chain', (n: number) => 'args.a ? 1 : '.repeat(n) + '0'],
    ['an addition chain', (n: number) => '1 + '.repeat(n) + '1'],
    ['an arrow chain', (n: number) => 'x => '.repeat(n) + 'x'],
    ['an await chain', (n: number) => 'await '.repeat(n) + 'args'],
  ])('survives 100,000 levels of %s without crashing', (_name, build) => {
    const source = inRun(`return ${build(100_000)};`);
    const result = checkWorkflowSource(source, { maxBytes: 2_000_000 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]?.code).toBe('WF_SOURCE_TOO_DEEP');
  });

  it('accepts long flat code: 2,000 statements and a 1,000-term sum', () => {
    const statements = Array.from({ length: 2000 }, (_, i) => `const v${i} = args.n + ${i};`).join(
      '\n',
    );
    const sum = Array.from({ length: 1000 }, (_, i) => `v${i}`).join(' + ');
    expect(errorCodes(inRun(`${statements}\n  return ${sum};`))).toEqual([]);
  });
});

describe('output bounds', () => {
  it('returns at most MAX_DIAGNOSTICS errors and warnings, the first ones by position', () => {
    const source = inRun(
      `${'wf.runAgent({});\n'.repeat(300)}return [${'args.constructor, '.repeat(300)}];`,
    );
    const result = checkWorkflowSource(source);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(MAX_DIAGNOSTICS);
    expect(result.warnings).toHaveLength(MAX_DIAGNOSTICS);
    expect(result.warnings[0]?.line).toBe(3);
  });

  it('keeps a regular-expression message short even for a huge pattern', () => {
    const [d] = errorsOf(inRun(`return /${'('.repeat(50_000)}/;`), { maxBytes: 1e6 });
    expect(d?.code).toBe('WF_SOURCE_SYNTAX');
    expect(d?.message.length).toBeLessThan(200);
  });
});
