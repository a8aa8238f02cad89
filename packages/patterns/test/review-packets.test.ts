// The packet builder's contract on small, hand-checked inputs: errors as data naming what and
// where, warnings that lose nothing, options validation, budget invariants under random options.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildReviewPackets,
  PATTERNS_ERROR_CODES,
  type ReviewPacketOptions,
} from '../src/index.js';

const simple = [
  'diff --git a/src/a.ts b/src/a.ts',
  'index 1111111..2222222 100644',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,3 +1,3 @@',
  ' one',
  '-two',
  '+TWO',
  ' three',
  '',
].join('\n');

function okOf(diff: string, options?: ReviewPacketOptions) {
  const r = buildReviewPackets(diff, options);
  if (!r.ok) throw new Error(r.error.message);
  return r;
}

describe('buildReviewPackets errors', () => {
  it('returns an empty range for an empty diff', () => {
    const r = okOf('');
    expect(r.packets).toEqual([]);
    expect(r.files).toEqual([]);
    expect(okOf('\n\n').packets).toEqual([]);
  });

  it('refuses text that is not a diff, saying what it expected', () => {
    const r = buildReviewPackets('hello\nworld\n');
    expect(r).toEqual({
      ok: false,
      error: {
        code: PATTERNS_ERROR_CODES.WF_PATTERNS_DIFF_UNRECOGNISED,
        message: expect.stringContaining('expected a line starting with "diff --git "'),
        line: 1,
      },
    });
  });

  it('refuses a hunk header that does not parse, naming the line', () => {
    const bad = simple.replace('@@ -1,3 +1,3 @@', '@@ -x +y @@');
    const r = buildReviewPackets(bad);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('WF_PATTERNS_DIFF_MALFORMED');
    expect(r.error.line).toBe(5);
    expect(r.error.message).toBe('diff line 5: hunk header does not parse: @@ -x +y @@');
  });

  it('refuses a non-string diff and bad options, naming the option', () => {
    const notText = buildReviewPackets(42 as unknown as string);
    expect(notText.ok || notText.error.message).toBe('diff must be a string (got number)');
    const cases: [unknown, string][] = [
      [{ maxPacketBytes: 10 }, 'options.maxPacketBytes must be an integer from 4096'],
      [{ maxLineChars: 1.5 }, 'options.maxLineChars must be an integer'],
      [{ routingRisk: 'extreme' }, 'options.routingRisk must be "normal" or "high"'],
      [{ highRiskPaths: [''] }, 'options.highRiskPaths must be an array of non-empty path globs'],
      [{ workspaceGroups: ['a/b'] }, 'options.workspaceGroups must be an array of top-level'],
      [{ maxPacketByte: 5000 }, 'options.maxPacketByte is not a known option'],
      ['big', 'options must be an object'],
    ];
    for (const [options, message] of cases) {
      const r = buildReviewPackets(simple, options as ReviewPacketOptions);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.error.code).toBe('WF_PATTERNS_OPTIONS_INVALID');
      expect(r.error.message).toContain(message);
    }
  });

  it('keeps a truncated hunk and warns where it ends early', () => {
    const truncated = simple.split('\n').slice(0, 7).join('\n');
    const r = okOf(truncated);
    expect(r.warnings).toEqual([
      {
        line: 8,
        message:
          'hunk "@@ -1,3 +1,3 @@" ends early: 1 old and 2 new line(s) missing (truncated diff?)',
      },
    ]);
    expect(r.packets[0]?.diff).toBe(`${truncated}\n`);
  });

  it('keeps lines outside any hunk and warns about them', () => {
    const extra = `${simple}garbage after the hunk\n`;
    const r = okOf(extra);
    expect(r.warnings.map((w) => w.line)).toEqual([10]);
    expect(r.warnings[0]?.message).toContain('garbage after the hunk');
    expect(r.packets[0]?.diff).toBe(extra);
  });

  it('takes the paths of a pure rename or copy from its rename/copy lines', () => {
    // The `diff --git` line is ambiguous (both paths contain " b/"), so only the extended
    // header lines can say which path is which.
    for (const [verb, change] of [
      ['rename', 'renamed'],
      ['copy', 'copied'],
    ] as const) {
      const diff = [
        'diff --git a/old b/x.ts b/new b/x.ts',
        'similarity index 100%',
        `${verb} from old b/x.ts`,
        `${verb} to new b/x.ts`,
        '',
      ].join('\n');
      expect(okOf(diff).files).toEqual([
        expect.objectContaining({
          path: 'new b/x.ts',
          oldPath: 'old b/x.ts',
          change,
          similarity: 100,
        }),
      ]);
    }
  });

  it('accepts an empty context line whose space was stripped', () => {
    const stripped = simple.replace('\n one\n', '\n\n').replace('-1,3 +1,3', '-1,3 +1,3');
    const r = okOf(stripped);
    expect(r.warnings).toEqual([]);
    expect(r.files[0]).toMatchObject({ additions: 1, deletions: 1 });
  });
});

describe('buildReviewPackets classification', () => {
  const file = (path: string) =>
    [
      `diff --git a/${path} b/${path}`,
      `--- a/${path}`,
      `+++ b/${path}`,
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '',
    ].join('\n');

  it('assigns areas and categories by path', () => {
    const paths = [
      'packages/engine/src/run.ts',
      'packages/engine/test/run.test.ts',
      'packages/engine/README.md',
      'packages/engine/package.json',
      'apps/plugin/src/index.ts',
      'README.md',
      'pnpm-lock.yaml',
      '.github/workflows/ci.yml',
      'src/util_test.go',
      'assets/logo.svg',
    ];
    const r = okOf(paths.map(file).join(''), { highRiskPaths: ['nothing'] });
    expect(r.files.map((f) => `${f.area}/${f.category}`)).toEqual([
      'packages/engine/source',
      'packages/engine/tests',
      'packages/engine/docs',
      'packages/engine/config',
      'apps/plugin/source',
      'root/docs',
      'root/config',
      '.github/config',
      'src/tests',
      'assets/other',
    ]);
    expect(r.packets.map((p) => p.partition)).toEqual([
      'packages/engine/source',
      'packages/engine/tests',
      'packages/engine/docs',
      'packages/engine/config',
      'apps/plugin/source',
      'root/docs',
      'root/config',
      '.github/config',
      'src/tests',
      'assets/other',
    ]);
  });

  it('matches high-risk globs with ** and *', () => {
    const r = okOf(
      [file('src/auth/login.ts'), file('lib/tokens.ts'), file('.github/workflows/ci.yml')].join(''),
    );
    expect(r.files.map((f) => f.risk)).toEqual(['high', 'normal', 'high']);
    const custom = okOf([file('lib/tokens.ts'), file('lib/x/tokens.ts')].join(''), {
      highRiskPaths: ['lib/*.ts'],
    });
    expect(custom.files.map((f) => f.risk)).toEqual(['high', 'normal']);
  });
});

describe('buildReviewPackets budget invariants', () => {
  // A synthetic but well-formed diff: many files, long and short lines, one large file.
  const body = (n: number, width: number) =>
    Array.from({ length: n }, (_, i) => `+${String(i).padEnd(width, 'x')}`).join('\n');
  const files = Array.from({ length: 12 }, (_, k) => {
    const n = k === 3 ? 900 : 5 + k * 7;
    const width = k % 4 === 0 ? 3_000 : 40;
    return [
      `diff --git a/pkg/f${k}.ts b/pkg/f${k}.ts`,
      'new file mode 100644',
      '--- /dev/null',
      `+++ b/pkg/f${k}.ts`,
      `@@ -0,0 +1,${n} @@`,
      body(n, width),
      '',
    ].join('\n');
  });
  const diff = files.join('');

  it('keeps every packet within bytes, lines and line length for any valid options', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4_096, max: 200_000 }),
        fc.integer({ min: 50, max: 3_000 }),
        fc.integer({ min: 80, max: 4_000 }),
        fc.integer({ min: 1, max: 30 }),
        (maxPacketBytes, maxPacketLines, maxLineChars, maxFilesPerPacket) => {
          const options = { maxPacketBytes, maxPacketLines, maxLineChars, maxFilesPerPacket };
          const r = okOf(diff, options);
          let added = 0;
          for (const p of r.packets) {
            expect(p.oversize).toBe(false);
            expect(p.bytes).toBeLessThanOrEqual(maxPacketBytes);
            expect(p.lines).toBeLessThanOrEqual(maxPacketLines);
            expect(p.files.length).toBeLessThanOrEqual(maxFilesPerPacket);
            for (const l of p.diff.split('\n'))
              expect(l.length).toBeLessThanOrEqual(maxLineChars + 2);
            added += p.diff.split('\n').filter((l) => /^\+\d/.test(l)).length;
          }
          // Every added line appears exactly once across packets (continuations excluded).
          expect(added).toBe(r.files.reduce((n, f) => n + f.additions, 0));
          expect(r.files.every((f) => f.packetIds.length >= 1)).toBe(true);
        },
      ),
      { numRuns: 25, seed: 20261201 },
    );
  });
});

describe('buildReviewPackets on arbitrary input', () => {
  // Lines that look like parts of a diff, in any order, plus arbitrary text: the builder must
  // always answer with data (never throw, never hang) and keep its budget invariants.
  const diffish = fc.oneof(
    fc.constantFrom(
      'diff --git a/x.ts b/x.ts',
      'diff --git "a/q\\303\\251.ts" "b/q\\303\\251.ts"',
      'diff --cc m.ts',
      '--- a/x.ts',
      '+++ b/x.ts',
      '--- /dev/null',
      '+++ /dev/null',
      '@@ -1,2 +1,3 @@',
      '@@ -0,0 +1 @@',
      '@@@ -1,2 -1,2 +1,2 @@@',
      '@@ broken',
      'new file mode 100644',
      'deleted file mode 100755',
      'rename from a.ts',
      'rename to b.ts',
      'similarity index 90%',
      'GIT binary patch',
      'literal 12',
      'Binary files a/x and b/x differ',
      '\\ No newline at end of file',
      '',
    ),
    fc.string({ maxLength: 30 }).map((t) => `+${t}`),
    fc.string({ maxLength: 30 }).map((t) => `-${t}`),
    fc.string({ maxLength: 30 }).map((t) => ` ${t}`),
    fc.string({ maxLength: 300 }),
  );

  it('answers with data and keeps budgets for any sequence of diff-like lines', () => {
    fc.assert(
      fc.property(fc.array(diffish, { maxLength: 60 }), (parts) => {
        const r = buildReviewPackets(parts.join('\n'), { maxPacketBytes: 4_096, maxLineChars: 80 });
        if (!r.ok) {
          expect(Object.values(PATTERNS_ERROR_CODES)).toContain(r.error.code);
          expect(r.error.message.length).toBeGreaterThan(0);
          return;
        }
        for (const p of r.packets) {
          expect(p.id).toMatch(/^pkt-[0-9a-f]{16}$/);
          if (!p.oversize) expect(p.bytes).toBeLessThanOrEqual(4_096);
          expect(p.bytes).toBe(Buffer.byteLength(p.diff));
        }
        expect(r.files.every((f) => f.packetIds.length > 0)).toBe(true);
      }),
      { numRuns: 400, seed: 7 },
    );
  });
});
