// workflow.d.ts works for authors: a real `tsc` checks JavaScript workflows written with
// `// @ts-check` and JSDoc against it, accepting a correct one and naming each mistake in a bad one.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const fixtures = join(import.meta.dirname, 'fixtures', 'authoring');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// A throwaway tsconfig: an author's editor setup, with no ambient types but the reference.
function check(file: string): { code: number; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'wf-authoring-'));
  const config = join(dir, 'tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        noEmit: true,
        allowJs: true,
        checkJs: true,
        strict: true,
        target: 'es2022',
        lib: ['es2023'],
        types: [],
        pretty: false,
      },
      files: [join(fixtures, file)],
    }),
  );
  try {
    return {
      code: 0,
      out: execFileSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8', stdio: 'pipe' }),
    };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, out: err.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** tsc's errors, one per diagnostic, with continuation lines folded into the message. */
function diagnostics(out: string): { line: number; code: string; message: string }[] {
  const errors: { line: number; code: string; message: string }[] = [];
  for (const row of out.split('\n')) {
    const m = /\((\d+),\d+\): error (TS\d+): (.*)$/.exec(row);
    if (m) errors.push({ line: Number(m[1]), code: m[2] ?? '', message: m[3] ?? '' });
    else if (row.trim() !== '' && errors.length > 0)
      errors[errors.length - 1]!.message += ` ${row.trim()}`;
  }
  return errors;
}

describe('workflow.d.ts for authors', () => {
  it('type-checks a realistic workflow without errors', () => {
    expect(check('review.workflow.js')).toEqual({ code: 0, out: '' });
  });

  it('names each mistake of a sloppy workflow', () => {
    const { code, out } = check('mistakes.workflow.js');
    expect(code).not.toBe(0);
    const errors = diagnostics(out);
    const lines = errors.map((e) => e.line);
    // modelHint outside the closed list
    expect(errors.find((e) => e.line === 7)?.message).toContain('"powerful"');
    // misspelled method, with the suggestion
    expect(errors.find((e) => e.line === 8)?.message).toContain("Did you mean 'runAgent'?");
    // missing prompt
    expect(errors.find((e) => e.line === 9)?.message).toContain("Property 'prompt' is missing");
    // evidence ref without a prefix
    expect(errors.find((e) => e.line === 10)?.message).toContain('"src/a.ts"');
    // remaining() may be null (never Infinity)
    expect(errors.find((e) => e.line === 11)?.message).toContain('possibly');
    // runAgent may resolve null
    expect(errors.find((e) => e.line === 13)?.message).toContain("'result' is possibly 'null'");
    expect(lines).toEqual([7, 8, 9, 10, 11, 13]);
  }, 60_000);
});
