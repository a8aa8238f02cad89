#!/usr/bin/env node
// What the repository's text cites must be in the repository. Over every source, test, script,
// document and changeset (not node_modules, dist or test fixtures), this refuses:
// - an invariant citation ("invariant N", "invariants N and M", "invariants N-M") whose number has
//   no anchor `invariant-N` in docs/design.md; in Markdown outside code, a citation that is not
//   the text of a link to that anchor;
// - a relative Markdown link to a file that does not exist, or to an anchor its target lacks
//   (an explicit id or a heading), and a `design.md#anchor` in code that docs/design.md lacks;
// - a reference to a document outside the repository: the shared design ("DESIGN.md", upper
//   case; ours is docs/design.md), "the team brief", a numbered "contract N", "../shared" or a
//   /work/shared path, spec/SECURITY.md, CONVENTIONS.md, notes/<name>.md;
// - an issue number ("issue 16", "issues 3 and 4"): the reason belongs there instead.
// Exported for tooling/repo/test/design-references.test.ts; run directly it prints the problems
// (`--fix-links` first links the bare invariant citations of Markdown prose).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DESIGN = 'docs/design.md';
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.turbo', 'coverage', 'fixtures']);
const TEXT = /\.(c|m)?(t|j)s$|\.md$|\.json$/;
/** This checker and its test hold the refused words as data. */
const SELF = new Set([
  'tooling/repo/references.mjs',
  'tooling/repo/test/design-references.test.ts',
]);

const OUTSIDE = [
  [/\bDESIGN\.md\b/, 'the shared design (cite docs/design.md)'],
  [/\bteam brief\b/i, 'the team brief (say what it says, or cite docs/design.md)'],
  [/\bcontract \d+\b/i, 'a numbered contract of the team brief (cite docs/design.md)'],
  [/\.\.\/shared\b|\/work\/shared\b/, 'a path outside the repository'],
  [/\bspec\/SECURITY\.md\b/, 'the shared security spec (cite SECURITY.md)'],
  [/\bCONVENTIONS\.md\b/, 'the shared conventions (cite docs/design.md#conventions)'],
  [/\bnotes\/[\w-]+\.md\b/, 'the shared notes (state the fact, or move it into the repository)'],
];
const ISSUE = /\bissues? #?\d+\b/i;
/** "invariant 3", "Invariants 8 and 9", "invariants 1, 8 and 13", "invariants 8-9". */
const CITATION = /\b[Ii]nvariants? (\d+(?:(?:, | and | or |-|–)\d+)*)/g;

function* textFiles(root, dir = root) {
  for (const entry of readdirSync(dir).sort()) {
    if (SKIP_DIRS.has(entry)) continue;
    const path = join(dir, entry);
    const st = statSync(path);
    if (st.isDirectory()) yield* textFiles(root, path);
    else if (TEXT.test(entry) && entry !== 'CHANGELOG.md' && !entry.endsWith('.d.ts'))
      yield relative(root, path).split(sep).join('/');
  }
}

/** The numbers one citation names ("8-9" is 8 and 9). */
function citedNumbers(list) {
  const out = [];
  for (const part of list.split(/, | and | or /)) {
    const range = /^(\d+)[-–](\d+)$/.exec(part);
    if (range) for (let n = Number(range[1]); n <= Number(range[2]); n++) out.push(n);
    else out.push(Number(part));
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_[\]()]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map();
/** The anchors a Markdown file offers: explicit ids and headings. */
function anchorsOf(path) {
  if (anchorCache.has(path)) return anchorCache.get(path);
  const text = readFileSync(path, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const anchors = new Set();
  for (const m of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) anchors.add(slug(m[1]));
  anchorCache.set(path, anchors);
  return anchors;
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/** Markdown with fenced code blocks and inline code blanked (same length, so offsets hold). */
function prose(text) {
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  return text.replace(/^```[\s\S]*?^```/gm, blank).replace(/`[^`\n]*`/g, blank);
}

/**
 * Every problem in the repository at `root`, as `path:line: message`. `files` limits the scan to
 * those paths (relative to root); by default every text file is read.
 */
export function findReferenceProblems(root, files = [...textFiles(root)]) {
  anchorCache.clear();
  const problems = [];
  const designPath = join(root, DESIGN);
  const design = existsSync(designPath) ? anchorsOf(designPath) : new Set();
  for (const file of files) {
    if (SELF.has(file)) continue;
    const text = readFileSync(join(root, file), 'utf8');
    const at = (index, message) => problems.push(`${file}:${lineOf(text, index)}: ${message}`);
    const markdown = file.endsWith('.md');
    const scanned = markdown ? prose(text) : text;

    for (const [pattern, what] of OUTSIDE) {
      for (const m of text.matchAll(new RegExp(pattern.source, `${pattern.flags}g`)))
        at(m.index, `"${m[0]}" refers to ${what}`);
    }
    for (const m of text.matchAll(new RegExp(ISSUE.source, 'gi')))
      at(m.index, `"${m[0]}": say the reason, not the issue number`);

    for (const m of text.matchAll(CITATION)) {
      for (const n of citedNumbers(m[1]))
        if (!design.has(`invariant-${n}`))
          at(m.index, `"${m[0]}": ${DESIGN} has no invariant ${n} (anchor #invariant-${n})`);
    }
    if (markdown) {
      // In prose a citation is the text of a link to its anchor: [invariant 3](...#invariant-3).
      for (const m of scanned.matchAll(CITATION)) {
        const before = scanned.slice(Math.max(0, m.index - 1), m.index);
        const link = /^\]\(([^)\s]*)\)/.exec(scanned.slice(m.index + m[0].length));
        const target = link?.[1] ?? '';
        const numbers = citedNumbers(m[1]);
        const anchor = target.slice(target.indexOf('#') + 1);
        const own = file === DESIGN && target.startsWith('#');
        const toDesign = own || resolve(root, dirname(file), target.split('#')[0]) === designPath;
        if (before !== '[' || !toDesign || !numbers.some((n) => anchor === `invariant-${n}`))
          at(
            m.index,
            `"${m[0]}" is not linked: write [${m[0]}](<path to ${DESIGN}>#invariant-${numbers[0]})`,
          );
      }
      for (const m of scanned.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto:, ...
        const [path, anchor] = target.split('#');
        const full = path === '' ? join(root, file) : resolve(root, dirname(file), path);
        if (!existsSync(full)) {
          at(m.index, `link to ${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && full.endsWith('.md') && !anchorsOf(full).has(anchor))
          at(m.index, `link to ${target}: ${relative(root, full)} has no anchor #${anchor}`);
      }
    } else {
      for (const m of text.matchAll(/\bdesign\.md#([\w-]+)/g))
        if (!design.has(m[1])) at(m.index, `${DESIGN} has no anchor #${m[1]}`);
    }
  }
  return problems;
}

/**
 * Links every bare invariant citation in the prose of the Markdown files under `root` to its
 * anchor in docs/design.md (what `--fix-links` does); code blocks and inline code are left alone.
 * Returns the files it rewrote.
 */
export function linkCitations(root, files = [...textFiles(root)]) {
  const changed = [];
  const bare = /(?<!\[)\b(?:DESIGN\.md )?([Ii]nvariants? (\d+)(?:(?:, | and | or |-|–)\d+)*)/g;
  for (const file of files) {
    if (!file.endsWith('.md') || file === DESIGN || SELF.has(file)) continue;
    const text = readFileSync(join(root, file), 'utf8');
    const rel = relative(dirname(join(root, file)), join(root, DESIGN))
      .split(sep)
      .join('/');
    const link = (_match, cited, n) => `[${cited}](${rel}#invariant-${n})`;
    const out = text
      .split(/(^```[\s\S]*?^```)/m)
      .map((part, i) =>
        i % 2 === 1
          ? part
          : part
              .split(/(`[^`\n]*`)/)
              .map((seg, j) => (j % 2 === 1 ? seg : seg.replace(bare, link)))
              .join(''),
      )
      .join('');
    if (out !== text) {
      writeFileSync(join(root, file), out);
      changed.push(file);
    }
  }
  return changed;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  if (process.argv.includes('--fix-links'))
    for (const file of linkCitations(root)) process.stdout.write(`references: linked ${file}\n`);
  const problems = findReferenceProblems(root);
  if (problems.length > 0) {
    process.stderr.write(`references: ${problems.length} problem(s)\n  ${problems.join('\n  ')}\n`);
    process.exitCode = 1;
  } else process.stdout.write('references: every citation resolves inside the repository\n');
}
