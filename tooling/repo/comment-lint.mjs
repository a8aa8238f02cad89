#!/usr/bin/env node
// Comments in shipped code say why, in the present tense: no dates, no measurements, no history.
// Dated figures belong in bench/RESULTS.md. This lint reads every comment (found by the TypeScript
// parser, so strings, template literals and regular expressions are never mistaken for one) of
// the .ts/.js/.mjs/.cjs files under packages/*/{src,bin,scripts} and apps/*/{src,bin,scripts},
// and refuses a comment line that holds one of RULES below. Tests and benches are not read.
// Exported for tooling/repo/test/comment-lint.test.ts; run directly it prints what it refused.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const GROUPS = ['packages', 'apps'];
const FOLDERS = ['src', 'bin', 'scripts'];
const SOURCE = /\.(c|m)?(t|j)s$/;
const MONTH =
  '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const UNIT = '(?:ms|µs|us|ns)';
const NUM = '\\d[\\d.,]*';

/** What a comment may not hold: [name, pattern]. Each pattern is matched per comment line. */
export const RULES = [
  // A calendar date: 2026-12-04, 2026/12/04, Dec 4, 2026, 4 December 2026.
  ['date', /\b(?:19|20)\d\d[-/](?:0[1-9]|1[0-2])[-/](?:0[1-9]|[12]\d|3[01])\b/],
  ['date', new RegExp(`\\b${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?,? (?:19|20)\\d\\d\\b`)],
  ['date', new RegExp(`\\b\\d{1,2} ${MONTH} (?:19|20)\\d\\d\\b`)],
  // A measurement on record: "(measured ...", "measured: ...", "measured on/over/side by side...".
  [
    'measurement',
    /\(measured\b|\b[Mm]easured:|\b[Mm]easured (?:on|over|side by side|in-process|after|before|against|at|with|\d)/,
  ],
  // Sample statistics of a run.
  ['measurement', /\bmedians? of\b|\binterleaved\b|\bp(?:50|90|95|99)\b/],
  // A ratio from a benchmark: 1.44x, 0.79x.
  ['measurement', /\b\d+\.\d+x\b/],
  // A timed cost: "~3 ms", "about 8 ms", "25-29 ms", "took 2.9 s", "184 ms longer".
  ['measurement', new RegExp(`(?:~|\\b(?:about|nearly|roughly|around) )${NUM} ?${UNIT}\\b`)],
  ['measurement', new RegExp(`(?<![\\d^.])\\d+(?:\\.\\d+)?-\\d+(?:\\.\\d+)? ?${UNIT}\\b`)],
  [
    'measurement',
    new RegExp(
      `\\b(?:costs?|took|takes|spent|saves?) (?:about |~)?${NUM}(?:-${NUM})? ?(?:${UNIT}|s)\\b`,
    ),
  ],
  [
    'measurement',
    new RegExp(`\\b${NUM} ?${UNIT} (?:less|more|sooner|later|slower|faster|longer|shorter)\\b`),
  ],
  // History: a figure that changed, or what the code did before.
  ['history', new RegExp(`${NUM} ?(?:${UNIT}|s|x|%|KiB|MiB|KB|MB)? ?(?:->|→) ?~?\\d`)],
  ['history', new RegExp(`\\bfrom ~?${NUM} ?(?:${UNIT}|s|x|%)? to ~?\\d`)],
  ['history', /\(before:|\bused to\b|\bwent from\b|\buntil (?:19|20)\d\d\b/],
];

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir).sort()) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (SOURCE.test(entry) && !entry.endsWith('.d.ts')) yield path;
  }
}

/** The files the lint reads, relative to `root`. */
export function lintedFiles(root) {
  const out = [];
  for (const group of GROUPS) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base).sort())
      for (const folder of FOLDERS) {
        const dir = join(base, name, folder);
        if (existsSync(dir))
          for (const file of sourceFiles(dir)) out.push(relative(root, file).split(sep).join('/'));
      }
  }
  return out;
}

let ts;
/** Every comment of a source text as [start, end) ranges, found by the TypeScript parser. */
function commentRanges(text, file) {
  ts ??= createRequire(import.meta.url)('typescript');
  const kind = /\.(c|m)?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const seen = new Map();
  const add = (ranges) => {
    for (const r of ranges ?? []) seen.set(r.pos, r.end);
  };
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  add(ts.getLeadingCommentRanges(text, 0));
  visit(source);
  return [...seen].sort((a, b) => a[0] - b[0]);
}

/** Problems in one file's text, one per comment line, as `path:line: rule: "match"` (the first). */
export function lintText(file, text) {
  const problems = [];
  for (const [start, end] of commentRanges(text, file)) {
    const firstLine = text.slice(0, start).split('\n').length;
    text
      .slice(start, end)
      .split('\n')
      .forEach((line, i) => {
        const hit = RULES.map(([name, pattern]) => [name, pattern.exec(line)]).find(([, m]) => m);
        if (hit) problems.push(`${file}:${firstLine + i}: ${hit[0]}: "${hit[1][0]}"`);
      });
  }
  return problems;
}

/** Every problem under `root`. */
export function lintComments(root) {
  return lintedFiles(root).flatMap((file) =>
    lintText(file, readFileSync(join(root, file), 'utf8')),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const problems = lintComments(root);
  if (problems.length > 0) {
    process.stderr.write(
      `comment-lint: ${problems.length} comment line(s) with a date, a measurement or history (figures go to bench/RESULTS.md)\n  ${problems.join('\n  ')}\n`,
    );
    process.exitCode = 1;
  } else
    process.stdout.write(
      `comment-lint: ${lintedFiles(root).length} files, no dated or measured comment\n`,
    );
}
