// The comment lint refuses dates, measurements and history in comments of shipped code, and
// nothing else: strings, templates and regular expressions are code, tests and benches are not read.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { lintComments, lintText } from '../comment-lint.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

let root = '';

function scratch(files: Record<string, string>) {
  root = mkdtempSync(join(tmpdir(), 'comment-lint-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = '';
});

describe('comment lint', () => {
  it('finds nothing in the repository', () => {
    expect(lintComments(repo)).toEqual([]);
  });

  it('refuses a planted dated comment in src/', () => {
    scratch({
      'packages/a/src/x.ts':
        '// Batched because it is cheaper (measured 2026-12-04).\nexport const x = 1;\n',
    });
    expect(lintComments(root)).toEqual(['packages/a/src/x.ts:1: date: "2026-12-04"']);
  });

  it('refuses each kind of date, measurement and history', () => {
    const lines = [
      '// on 2026/12/04',
      '// since Dec 4, 2026',
      '// since 4 December 2026',
      '// (measured: it is faster)',
      '// Measured over 20,000 calls',
      '// medians of 25 runs',
      '// in interleaved pairs',
      '// its p95 latency',
      '// 1.44x the floor',
      '// about 8 ms',
      '// ~1.2 µs each',
      '// 25-29 ms to compile',
      '// the first call took 2.9 s',
      '// 184 ms longer',
      '// 13 ms -> 6 ms',
      '// it went from 12 to 4 reads',
      '// (before: wall time)',
      '// the budget used to refuse it',
    ];
    expect(lintText('x.ts', `${lines.join('\n')}\n`).map((p) => p.split(':')[2]?.trim())).toEqual([
      'date',
      'date',
      'date',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'measurement',
      'history',
      'history',
      'history',
      'history',
    ]);
  });

  it('reads block comments and JSDoc line by line, and .cjs/.mjs files as JavaScript', () => {
    expect(
      lintText('x.cjs', "/**\n * Why.\n * Costs ~3 ms.\n */\nconst a = require('a');\n"),
    ).toEqual(['x.cjs:3: measurement: "~3 ms"']);
    expect(lintText('x.mjs', 'export const y = 2; // 1.5x faster\n')).toEqual([
      'x.mjs:1: measurement: "1.5x"',
    ]);
  });

  it('accepts contracts, and never reads strings, templates, regular expressions, tests or benches', () => {
    scratch({
      'packages/a/src/x.ts': [
        '/** How long a line waits for its fsync. Default 1000 ms. */',
        '// Node fires timers above 2^31-1 ms at once: long limits are clamped.',
        "const s = '// measured 2026-12-04, 1.44x';",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted file's template literal
        'const t = `/* ~3 ms */ ${s} // 13 ms -> 6 ms`;',
        'const r = /\\/\\/ about 8 ms/;',
        'export { s, t, r };',
      ].join('\n'),
      'packages/a/test/x.test.ts': '// measured 2026-12-04\n',
      'packages/a/bench/x.bench.ts': '// 1.44x on 2026-12-04\n',
    });
    expect(lintComments(root)).toEqual([]);
  });

  it('reads bin/ and scripts/ of apps and packages too', () => {
    scratch({
      'apps/cli/bin/wf.cjs': '// ~20 ms sooner\n',
      'packages/a/scripts/bundle.mjs': '// measured side by side\n',
    });
    expect(lintComments(root)).toEqual([
      'packages/a/scripts/bundle.mjs:1: measurement: "measured side by side"',
      'apps/cli/bin/wf.cjs:1: measurement: "~20 ms"',
    ]);
  });
});
