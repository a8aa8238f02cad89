// What the repository cites must be in the repository (tooling/repo/references.mjs): every
// invariant citation has its anchor in docs/design.md, every relative link and anchor exists, and
// nothing refers to a document outside the repository or to an issue number.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findReferenceProblems, linkCitations } from '../references.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let root = '';

/** A scratch repository with a two-invariant design and the given files. */
function scratch(files: Record<string, string>): string[] {
  root = mkdtempSync(join(tmpdir(), 'references-'));
  const all: Record<string, string> = {
    'docs/design.md':
      '# Design\n\n## Layers\n\n<a id="invariant-1"></a>\n**1. One.**\n\n<a id="invariant-2"></a>\n**2. Two.** See [invariant 1](#invariant-1).\n',
    ...files,
  };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return findReferenceProblems(root);
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = '';
});

describe('references', () => {
  it('every citation in the repository resolves inside it', () => {
    expect(findReferenceProblems(repo)).toEqual([]);
  });

  it('accepts citations with a target, in code and linked in Markdown', () => {
    expect(
      scratch({
        'packages/a/src/x.ts':
          '// invariant 1: why\n// Invariants 1 and 2, invariants 1-2 (design.md#layers)\nexport const x = 1;\n',
        'packages/a/README.md':
          '- **One** ([invariant 1](../../docs/design.md#invariant-1)); [layers](../../docs/design.md#layers)\n\n```ts\n// invariant 2 in a code block\n```\n',
        'packages/a/test/fixtures/data.md': 'issue 4, DESIGN.md: fixtures are data\n',
      }),
    ).toEqual([]);
  });

  it('refuses a citation with no target', () => {
    expect(
      scratch({
        'packages/a/src/x.ts': '// invariant 3: no such invariant\n// invariants 1-3\n',
        'packages/a/test/t.test.ts': '/** design.md#nowhere */\n',
      }),
    ).toEqual([
      'packages/a/src/x.ts:1: "invariant 3": docs/design.md has no invariant 3 (anchor #invariant-3)',
      'packages/a/src/x.ts:2: "invariants 1-3": docs/design.md has no invariant 3 (anchor #invariant-3)',
      'packages/a/test/t.test.ts:1: docs/design.md has no anchor #nowhere',
    ]);
  });

  it('refuses an unlinked or mislinked citation in Markdown, and a broken link', () => {
    expect(
      scratch({
        'docs/a.md':
          'Bare (invariant 1).\n[invariant 2](design.md#invariant-1)\n[invariant 1](other.md#invariant-1)\n[here](design.md#nope) [gone](missing.md)\n',
      }),
    ).toEqual([
      'docs/a.md:1: "invariant 1" is not linked: write [invariant 1](<path to docs/design.md>#invariant-1)',
      'docs/a.md:2: "invariant 2" is not linked: write [invariant 2](<path to docs/design.md>#invariant-2)',
      'docs/a.md:3: "invariant 1" is not linked: write [invariant 1](<path to docs/design.md>#invariant-1)',
      'docs/a.md:3: link to other.md#invariant-1: no such file',
      'docs/a.md:4: link to design.md#nope: docs/design.md has no anchor #nope',
      'docs/a.md:4: link to missing.md: no such file',
    ]);
  });

  it('refuses references to documents outside the repository, and issue numbers', () => {
    expect(
      scratch({
        'packages/a/src/x.ts': [
          '// (DESIGN.md section 3)',
          '// contract 1 of the team brief',
          '// see ../shared/notes/quickjs.md and spec/SECURITY.md',
          '// CONVENTIONS.md says so; /work/shared/DESIGN.md too',
          '// added for issue 16 (Issues 3)',
        ].join('\n'),
      }),
    ).toEqual([
      'packages/a/src/x.ts:1: "DESIGN.md" refers to the shared design (cite docs/design.md)',
      'packages/a/src/x.ts:4: "DESIGN.md" refers to the shared design (cite docs/design.md)',
      'packages/a/src/x.ts:2: "team brief" refers to the team brief (say what it says, or cite docs/design.md)',
      'packages/a/src/x.ts:2: "contract 1" refers to a numbered contract of the team brief (cite docs/design.md)',
      'packages/a/src/x.ts:3: "../shared" refers to a path outside the repository',
      'packages/a/src/x.ts:4: "/work/shared" refers to a path outside the repository',
      'packages/a/src/x.ts:3: "spec/SECURITY.md" refers to the shared security spec (cite SECURITY.md)',
      'packages/a/src/x.ts:4: "CONVENTIONS.md" refers to the shared conventions (cite docs/design.md#conventions)',
      'packages/a/src/x.ts:3: "notes/quickjs.md" refers to the shared notes (state the fact, or move it into the repository)',
      'packages/a/src/x.ts:5: "issue 16": say the reason, not the issue number',
      'packages/a/src/x.ts:5: "Issues 3": say the reason, not the issue number',
    ]);
  });

  it('--fix-links links bare citations in Markdown prose, and the result passes', () => {
    scratch({
      'packages/a/README.md':
        '- **One** (invariant 1); (DESIGN.md invariants 1 and 2)\n\n```ts\n// invariant 2\n```\n`invariant 1`\n',
    });
    expect(linkCitations(root)).toEqual(['packages/a/README.md']);
    expect(readFileSync(join(root, 'packages/a/README.md'), 'utf8')).toBe(
      '- **One** ([invariant 1](../../docs/design.md#invariant-1)); ([invariants 1 and 2](../../docs/design.md#invariant-1))\n\n```ts\n// invariant 2\n```\n`invariant 1`\n',
    );
    expect(findReferenceProblems(root)).toEqual([]);
    expect(linkCitations(root)).toEqual([]);
  });
});
