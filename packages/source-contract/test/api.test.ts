// The public surface: result shapes, positions, options, the error class.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkWorkflowSource,
  SOURCE_CONTRACT_CODES,
  SOURCE_CONTRACT_ERROR_CODES,
  SourceContractError,
  WF_METHODS,
} from '../src/index.js';
import { errorsOf, inRun } from './helpers.js';

describe('checkWorkflowSource results', () => {
  it('gives every diagnostic code, severity, message, a one-line hint, and 1-based line/column', () => {
    const source =
      'async function run(wf, args) {\n\tconst a = process;\n  debugger;\n  return a.constructor;\n}';
    const result = checkWorkflowSource(source);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((d) => [d.code, d.line, d.column])).toEqual([
      ['WF_SOURCE_FORBIDDEN_NAME', 2, 12], // a tab counts as one column
      ['WF_SOURCE_FORBIDDEN_STATEMENT', 3, 3],
      ['WF_SOURCE_FORBIDDEN_MEMBER', 4, 12],
    ]);
    for (const d of [...result.errors, ...result.warnings]) {
      expect(Object.keys(d).sort()).toEqual([
        'code',
        'column',
        'hint',
        'line',
        'message',
        'severity',
      ]);
      expect(d.hint).toMatch(/^[^\n]{10,}$/);
      expect(Object.values(SOURCE_CONTRACT_CODES)).toContain(d.code);
      // the position points into the source at the offending text
      const line = source.split('\n')[d.line - 1] ?? '';
      expect(d.column).toBeLessThanOrEqual(line.length + 1);
    }
  });

  it('counts columns in UTF-16 units after non-ASCII text', () => {
    const [d] = errorsOf(inRun("const s = '😀é'; return process;"));
    expect(d).toMatchObject({ code: 'WF_SOURCE_FORBIDDEN_NAME', line: 3, column: 27 });
  });

  it('counts CRLF line endings as one line break', () => {
    const [d] = errorsOf(
      'async function run(wf) {\r\n  await wf.runAgent({});\r\n  return process;\r\n}',
    );
    expect(d).toMatchObject({ line: 3, column: 10 });
  });

  it('sorts diagnostics by position and does not repeat one', () => {
    const errors = errorsOf(inRun('return [process, eval, process];'));
    expect(errors.map((d) => d.column)).toEqual([11, 20, 26]);
  });

  it('returns WF_SOURCE_NOT_TEXT for a non-string instead of throwing', () => {
    for (const value of [undefined, null, 42, {}, ['x']]) {
      const result = checkWorkflowSource(value as unknown as string);
      expect(result).toMatchObject({
        ok: false,
        errors: [{ code: 'WF_SOURCE_NOT_TEXT', line: 1, column: 1 }],
      });
    }
  });

  it('accepts an empty filename option and ignores it in diagnostics', () => {
    expect(checkWorkflowSource(inRun('return 1;'), { filename: 'a.js' })).toEqual({
      ok: true,
      warnings: [],
    });
  });
});

describe('options', () => {
  it.each([
    [{ profile: 'strict' }],
    [{ maxBytes: 0 }],
    [{ maxBytes: -1 }],
    [{ maxDepth: 1.5 }],
    [{ maxDepth: Number.NaN }],
  ])('throws SourceContractError WF_SOURCE_INVALID_OPTIONS for %j', (options) => {
    let caught: unknown;
    try {
      checkWorkflowSource('', options as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SourceContractError);
    expect(SourceContractError.is(caught)).toBe(true);
    expect((caught as SourceContractError).code).toBe('WF_SOURCE_INVALID_OPTIONS');
  });

  it('recognises the error by its brand across copies, not by instanceof', () => {
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('@wf/errors.brand')]: '@wf/source-contract',
    });
    expect(SourceContractError.is(foreign)).toBe(true);
    const other = Object.assign(new Error('x'), {
      [Symbol.for('@wf/errors.brand')]: '@wf/sandbox',
    });
    expect(SourceContractError.is(other)).toBe(false);
    expect(SourceContractError.is(new Error('x'))).toBe(false);
    expect(SourceContractError.is(null)).toBe(false);
  });
});

describe('the wf method list', () => {
  it('lists each method once with its kind; agent methods are exactly the four the issue names', () => {
    const names = WF_METHODS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect(WF_METHODS.filter((m) => m.kind === 'agent').map((m) => m.name)).toEqual([
      'runAgent',
      'spawnAgent',
      'synthesize',
      'workflow',
    ]);
    expect(names).toHaveLength(19);
  });
});

describe('documentation', () => {
  const docs = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/errors');
  const readme = readFileSync(
    join(dirname(fileURLToPath(import.meta.url)), '../README.md'),
    'utf8',
  );
  it.each([...Object.keys(SOURCE_CONTRACT_CODES), ...Object.keys(SOURCE_CONTRACT_ERROR_CODES)])(
    '%s has a docs/errors page with a Mitigation section, linked from the README',
    (code) => {
      const page = join(docs, `${code}.md`);
      expect(existsSync(page)).toBe(true);
      const text = readFileSync(page, 'utf8');
      expect(text.startsWith(`# ${code}\n`)).toBe(true);
      expect(text).toContain('## Mitigation');
      expect(readme).toContain(`(../../docs/errors/${code}.md)`);
    },
  );
});
