// Parses the text of a unified diff (`git diff`, `git show`, `git diff --binary`, combined merge
// diffs, or a plain `diff -u`) into per-file sections. Pure; loses nothing: lines it cannot place
// are kept on the file they follow and reported as warnings.
import { headerPaths, markerPath, metaPath } from './diff-paths.js';

export type FileChange = 'added' | 'deleted' | 'modified' | 'renamed' | 'copied';

export interface ParsedHunk {
  /** The `@@ ... @@` line as written. */
  readonly header: string;
  readonly oldStart: number;
  readonly oldLines: number;
  readonly newStart: number;
  readonly newLines: number;
  /** Body lines, each with its one-character prefix (` `, `+`, `-`, `\`). */
  readonly lines: string[];
  /** Combined (merge) hunks have one prefix column per parent. */
  readonly combined: boolean;
}

export interface ParsedFile {
  /** 1-based line of the diff where this file's section starts. */
  readonly startLine: number;
  readonly oldPath: string | null;
  readonly newPath: string | null;
  readonly change: FileChange;
  readonly binary: boolean;
  readonly combined: boolean;
  readonly oldMode?: string;
  readonly newMode?: string;
  readonly similarity?: number;
  /** Header lines (`diff --git`, `index`, modes, renames, `---`/`+++`), binary payload excluded. */
  readonly headerLines: string[];
  readonly hunks: ParsedHunk[];
  /** Lines of a `GIT binary patch` payload that were dropped from the header. */
  readonly binaryPayloadLines: number;
  /** Lines found where no hunk expected them; kept so nothing is lost. */
  readonly strayLines: string[];
  readonly additions: number;
  readonly deletions: number;
}

export interface DiffWarning {
  readonly line: number;
  readonly message: string;
}

export type ParseOutcome =
  | { ok: true; preamble: string[]; files: ParsedFile[]; warnings: DiffWarning[] }
  | { ok: false; line: number; message: string; unrecognised: boolean };

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;
// Combined diffs: `@@@ -a,b -c,d +e,f @@@` with one `-` range per parent.
const COMBINED_HUNK = /^(@{3,}) ((?:-\d+(?:,\d+)? )+)\+(\d+)(?:,(\d+))? \1(.*)$/;
const GIT_HEADER = /^diff --git /;
const COMBINED_HEADER = /^diff --(?:cc|combined) /;
// Between file sections of several commits: `git log -p` commit headers, `git format-patch`
// email headers and the "-- " signature before the git version.
const SEPARATOR = /^(?:commit [0-9a-f]{7,64}(?: |$)|From [0-9a-f]{40} |-- $)/;

interface Builder {
  startLine: number;
  oldPath: string | null;
  newPath: string | null;
  headerA: string | null;
  headerB: string | null;
  change: FileChange;
  binary: boolean;
  combined: boolean;
  oldMode?: string;
  newMode?: string;
  similarity?: number;
  headerLines: string[];
  hunks: ParsedHunk[];
  binaryPayloadLines: number;
  strayLines: string[];
  additions: number;
  deletions: number;
  sawMarkers: boolean;
}

function newBuilder(startLine: number, combined: boolean): Builder {
  return {
    startLine,
    oldPath: null,
    newPath: null,
    headerA: null,
    headerB: null,
    change: 'modified',
    binary: false,
    combined,
    headerLines: [],
    hunks: [],
    binaryPayloadLines: 0,
    strayLines: [],
    additions: 0,
    deletions: 0,
    sawMarkers: false,
  };
}

function finishFile(b: Builder): ParsedFile {
  let oldPath = b.oldPath;
  let newPath = b.newPath;
  if (!b.sawMarkers) {
    // Mode-only changes, binary files and pure renames have no `---`/`+++` lines.
    if (b.change === 'added') {
      oldPath = null;
      newPath = newPath ?? b.headerB ?? b.headerA;
    } else if (b.change === 'deleted') {
      newPath = null;
      oldPath = oldPath ?? b.headerA ?? b.headerB;
    } else {
      oldPath = oldPath ?? b.headerA;
      newPath = newPath ?? b.headerB;
    }
  }
  if (oldPath === null && newPath !== null && b.change === 'modified') b.change = 'added';
  if (newPath === null && oldPath !== null && b.change === 'modified') b.change = 'deleted';
  return {
    startLine: b.startLine,
    oldPath,
    newPath,
    change: b.change,
    binary: b.binary,
    combined: b.combined,
    ...optionalFileMeta(b),
    headerLines: b.headerLines,
    hunks: b.hunks,
    binaryPayloadLines: b.binaryPayloadLines,
    strayLines: b.strayLines,
    additions: b.additions,
    deletions: b.deletions,
  };
}

/** A rename or copy header line: sets the change and one side's path. */
function movedPath(
  change: 'renamed' | 'copied',
  side: 'headerA' | 'headerB',
): (b: Builder, value: string) => void {
  return (b, v) => {
    b.change = change;
    b[side] = metaPath(v);
  };
}

/** The optional mode and similarity fields of a file, present only when git wrote them. */
export function optionalFileMeta(f: {
  readonly oldMode?: string | undefined;
  readonly newMode?: string | undefined;
  readonly similarity?: number | undefined;
}): { oldMode?: string; newMode?: string; similarity?: number } {
  return {
    ...(f.oldMode !== undefined ? { oldMode: f.oldMode } : {}),
    ...(f.newMode !== undefined ? { newMode: f.newMode } : {}),
    ...(f.similarity !== undefined ? { similarity: f.similarity } : {}),
  };
}

/** Extended header lines git writes between `diff --git` and the first hunk. */
const EXTENDED_HEADERS: readonly [RegExp, (b: Builder, value: string) => void][] = [
  [/^old mode (\d+)$/, (b, v) => (b.oldMode = v)],
  [/^new mode (\d+)$/, (b, v) => (b.newMode = v)],
  [
    /^new file mode (\d+)$/,
    (b, v) => {
      b.change = 'added';
      b.newMode = v;
    },
  ],
  [
    /^deleted file mode (\d+)$/,
    (b, v) => {
      b.change = 'deleted';
      b.oldMode = v;
    },
  ],
  [/^(?:similarity|dissimilarity) index (\d+)%$/, (b, v) => (b.similarity = Number(v))],
  [/^rename from (.+)$/, movedPath('renamed', 'headerA')],
  [/^rename to (.+)$/, movedPath('renamed', 'headerB')],
  [/^copy from (.+)$/, movedPath('copied', 'headerA')],
  [/^copy to (.+)$/, movedPath('copied', 'headerB')],
  [/^(Binary files .* differ)$/, (b) => (b.binary = true)],
  // Recognised and kept as-is: blob ids, and the mode lines of combined diffs.
  [/^(index [0-9a-f,.]+(?: \d+)?)$/, () => undefined],
  [/^((?:new |deleted )?mode [0-9,.]+)$/, () => undefined],
];

function applyExtendedHeader(b: Builder, line: string): boolean {
  for (const [re, apply] of EXTENDED_HEADERS) {
    const m = re.exec(line);
    if (m) {
      apply(b, m[1] as string);
      return true;
    }
  }
  return false;
}

function isFileStart(line: string, next: string | undefined, plainMode: boolean): boolean {
  if (GIT_HEADER.test(line) || COMBINED_HEADER.test(line)) return true;
  return plainMode && line.startsWith('--- ') && next?.startsWith('+++ ') === true;
}

/** Splits diff text into lines, keeping any `\r` (a CRLF file's lines end in `\r` in its diff). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function parseUnifiedDiff(text: string): ParseOutcome {
  const lines = splitLines(text);
  const warnings: DiffWarning[] = [];
  const gitMode = lines.some((l) => GIT_HEADER.test(l) || COMBINED_HEADER.test(l));
  const plainMode = !gitMode;

  let i = 0;
  const preamble: string[] = [];
  while (i < lines.length && !isFileStart(lines[i] as string, lines[i + 1], plainMode)) {
    preamble.push(lines[i] as string);
    i += 1;
  }
  if (i >= lines.length) {
    if (text.trim() === '') return { ok: true, preamble: [], files: [], warnings };
    return {
      ok: false,
      line: 1,
      unrecognised: true,
      message:
        'no file section found: expected a line starting with "diff --git " (git diff) or a "--- " line followed by "+++ " (diff -u)',
    };
  }

  const files: ParsedFile[] = [];
  // A separator, or the blank line git prints before a `git log -p` commit header.
  const atSeparator = (k: number) =>
    gitMode &&
    (SEPARATOR.test(lines[k] ?? '') || (lines[k] === '' && SEPARATOR.test(lines[k + 1] ?? '')));
  while (i < lines.length) {
    if (!isFileStart(lines[i] as string, lines[i + 1], plainMode)) {
      // Only a separator leads here: keep what follows it, up to the next file, as preamble.
      while (i < lines.length && !isFileStart(lines[i] as string, lines[i + 1], plainMode)) {
        preamble.push(lines[i] as string);
        i += 1;
      }
      continue;
    }
    const first = lines[i] as string;
    const combined = COMBINED_HEADER.test(first);
    const b = newBuilder(i + 1, combined);
    if (GIT_HEADER.test(first)) {
      const paths = headerPaths(first.slice('diff --git '.length));
      if (paths) {
        b.headerA = paths.a;
        b.headerB = paths.b;
      }
      b.headerLines.push(first);
      i += 1;
    } else if (combined) {
      const p = metaPath(first.replace(COMBINED_HEADER, ''));
      b.headerA = p;
      b.headerB = p;
      b.headerLines.push(first);
      i += 1;
    }

    // Extended header lines, up to the first hunk or the next file.
    for (; i < lines.length; i += 1) {
      const line = lines[i] as string;
      if (line.startsWith('@@')) break;
      if (b.headerLines.length > 0 && isFileStart(line, lines[i + 1], plainMode)) break;
      if (atSeparator(i)) break;
      if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
        b.oldPath = markerPath(line.slice(4), plainMode);
        b.newPath = markerPath((lines[i + 1] as string).slice(4), plainMode);
        b.sawMarkers = true;
        b.headerLines.push(line, lines[i + 1] as string);
        i += 1;
        if (plainMode) {
          i += 1;
          break;
        }
        continue;
      }
      if (line === 'GIT binary patch') {
        b.binary = true;
        b.headerLines.push(line);
        // The base85 payload never contains a space, so it cannot look like a file header.
        for (i += 1; i < lines.length; i += 1) {
          const payload = lines[i] as string;
          if (GIT_HEADER.test(payload) || COMBINED_HEADER.test(payload) || atSeparator(i)) break;
          b.binaryPayloadLines += 1;
        }
        i -= 1;
        continue;
      }
      b.headerLines.push(line);
      if (!applyExtendedHeader(b, line)) {
        warnings.push({ line: i + 1, message: `unexpected header line: ${clip(line)}` });
      }
    }

    // Hunks, bounded by their own line counts (a removed line may itself start with "--- ").
    while (i < lines.length && (lines[i] as string).startsWith('@@')) {
      const headerLine = lines[i] as string;
      const plain = HUNK.exec(headerLine);
      const combined = plain ? null : COMBINED_HUNK.exec(headerLine);
      if (!plain && !combined) {
        return {
          ok: false,
          line: i + 1,
          unrecognised: false,
          message: `hunk header does not parse: ${clip(headerLine)}`,
        };
      }
      const hunk: ParsedHunk = plain
        ? {
            header: headerLine,
            oldStart: Number(plain[1]),
            oldLines: plain[2] === undefined ? 1 : Number(plain[2]),
            newStart: Number(plain[3]),
            newLines: plain[4] === undefined ? 1 : Number(plain[4]),
            lines: [],
            combined: false,
          }
        : {
            header: headerLine,
            oldStart: Number((combined?.[2] ?? '-0').slice(1).split(/[, ]/)[0]),
            oldLines: 0,
            newStart: Number(combined?.[3]),
            newLines: combined?.[4] === undefined ? 1 : Number(combined[4]),
            lines: [],
            combined: true,
          };
      i += 1;
      if (hunk.combined) {
        const parents = (combined?.[1] ?? '@@@').length - 1;
        for (; i < lines.length; i += 1) {
          const line = lines[i] as string;
          if (line.startsWith('@@') || isFileStart(line, lines[i + 1], plainMode)) break;
          const cols = line.slice(0, parents);
          if (cols.includes('+')) b.additions += 1;
          else if (cols.includes('-')) b.deletions += 1;
          hunk.lines.push(line);
        }
      } else {
        let oldLeft = hunk.oldLines;
        let newLeft = hunk.newLines;
        for (; i < lines.length && (oldLeft > 0 || newLeft > 0); i += 1) {
          const line = lines[i] as string;
          const c = line[0];
          if (c === '\\') {
            hunk.lines.push(line);
            continue;
          }
          if (c === '+' && newLeft > 0) {
            newLeft -= 1;
            b.additions += 1;
          } else if (c === '-' && oldLeft > 0) {
            oldLeft -= 1;
            b.deletions += 1;
          } else if ((c === ' ' || line === '') && oldLeft > 0 && newLeft > 0) {
            // Some tools strip the space of an empty context line; git apply accepts that too.
            oldLeft -= 1;
            newLeft -= 1;
          } else {
            break;
          }
          hunk.lines.push(line);
        }
        if (oldLeft > 0 || newLeft > 0) {
          warnings.push({
            line: i + 1,
            message: `hunk "${clip(headerLine)}" ends early: ${oldLeft} old and ${newLeft} new line(s) missing (truncated diff?)`,
          });
        }
        // "\ No newline at end of file" may follow the last counted line.
        while (i < lines.length && (lines[i] as string).startsWith('\\')) {
          hunk.lines.push(lines[i] as string);
          i += 1;
        }
      }
      b.hunks.push(hunk);
      // Lines after a hunk that are neither a hunk nor a file start: keep them, warn once.
      const strayStart = i;
      while (
        i < lines.length &&
        !(lines[i] as string).startsWith('@@') &&
        !isFileStart(lines[i] as string, lines[i + 1], plainMode) &&
        !atSeparator(i)
      ) {
        b.strayLines.push(lines[i] as string);
        i += 1;
      }
      if (i > strayStart) {
        warnings.push({
          line: strayStart + 1,
          message: `${i - strayStart} line(s) outside any hunk kept as-is: ${clip(lines[strayStart] as string)}`,
        });
      }
    }
    if (b.headerLines.length === 0 && b.hunks.length === 0) {
      // Cannot happen for well-formed input; guards the loop against not advancing.
      b.strayLines.push(lines[i] as string);
      i += 1;
    }
    files.push(finishFile(b));
  }
  return { ok: true, preamble, files, warnings };
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
