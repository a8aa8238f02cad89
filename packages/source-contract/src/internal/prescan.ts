// Pre-parse guards: the size cap and a bracket-depth scan, both linear and iterative, so that
// hostile input (a 100,000-deep nest) is refused before the recursive-descent parser sees it.
// The depth scan is approximate around regex/division ambiguity; the parse also catches stack
// exhaustion as a backstop, so an approximation can only cost precision, never a crash.

export interface DepthFinding {
  index: number;
  depth: number;
}

enum State {
  Code = 0,
  LineComment = 1,
  BlockComment = 2,
  Single = 3,
  Double = 4,
  Template = 5,
  Regex = 6,
  RegexClass = 7,
}

// Keywords after which `/` starts a regular expression rather than a division.
const REGEX_AFTER_WORD = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

function isIdentChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 36 ||
    c === 95 ||
    c === 92 ||
    c > 127
  );
}

function onlySpaceBetween(source: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = source.charCodeAt(k);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  }
  return true;
}

/** UTF-8 byte length, without allocating. */
export function utf8Length(source: string): number {
  let bytes = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < source.length) {
      const d = source.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The first bracket (`(`, `[`, `{`, `${`) that opens deeper than maxDepth, or null. */
export function findExcessiveNesting(source: string, maxDepth: number): DepthFinding | null {
  // Fast path: depth never exceeds the number of opening brackets (`${` includes a `{`).
  let opens = 0;
  for (let k = 0; k < source.length; k++) {
    const c = source.charCodeAt(k);
    if (c === 40 || c === 91 || c === 123) opens++;
  }
  if (opens <= maxDepth) return null;
  let state: State = State.Code;
  let depth = 0;
  let regexAllowed = true;
  let lastWordStart = 0;
  let lastWordEnd = -1;
  // Brace depths at which a template substitution `${` was opened.
  const templates: number[] = [];
  const n = source.length;
  let i = 0;
  while (i < n) {
    const c = source.charCodeAt(i);
    switch (state) {
      case State.Code: {
        if (c === 47 /* / */) {
          const next = source.charCodeAt(i + 1);
          if (next === 47) {
            state = State.LineComment;
            i += 2;
            continue;
          }
          if (next === 42) {
            state = State.BlockComment;
            i += 2;
            continue;
          }
          if (lastWordEnd === i || (lastWordEnd >= 0 && onlySpaceBetween(source, lastWordEnd, i))) {
            // `/` after a word: a regex only after a keyword like `return`, else a division.
            const first = source.charCodeAt(lastWordStart);
            regexAllowed =
              !(first >= 48 && first <= 57) &&
              REGEX_AFTER_WORD.has(source.slice(lastWordStart, lastWordEnd));
          }
          lastWordEnd = -1;
          if (regexAllowed) {
            state = State.Regex;
            i++;
            continue;
          }
          regexAllowed = true;
          i++;
          continue;
        }
        if (c === 39) {
          state = State.Single;
        } else if (c === 34) {
          state = State.Double;
        } else if (c === 96) {
          state = State.Template;
        } else if (c === 40 || c === 91 || c === 123) {
          depth++;
          if (depth > maxDepth) return { index: i, depth };
          regexAllowed = true;
        } else if (c === 41 || c === 93) {
          if (depth > 0) depth--;
          regexAllowed = false;
        } else if (c === 125) {
          if (templates.length > 0 && templates[templates.length - 1] === depth) {
            templates.pop();
            if (depth > 0) depth--;
            state = State.Template;
          } else {
            if (depth > 0) depth--;
            regexAllowed = true;
          }
        } else if (isIdentChar(c)) {
          // Words are only classified (sliced) if a `/` follows them; see above.
          lastWordStart = i;
          while (i < n && isIdentChar(source.charCodeAt(i))) i++;
          lastWordEnd = i;
          regexAllowed = false;
          continue;
        } else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) {
          regexAllowed = true;
          lastWordEnd = -1;
          i++;
          continue;
        }
        i++;
        continue;
      }
      case State.LineComment:
        if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) state = State.Code;
        i++;
        continue;
      case State.BlockComment:
        if (c === 42 && source.charCodeAt(i + 1) === 47) {
          state = State.Code;
          i += 2;
          continue;
        }
        i++;
        continue;
      case State.Single:
      case State.Double:
        if (c === 92) {
          i += 2;
          continue;
        }
        if ((state === State.Single && c === 39) || (state === State.Double && c === 34)) {
          state = State.Code;
          regexAllowed = false;
        } else if (c === 10 || c === 13) {
          state = State.Code; // unterminated: the parser will report it
        }
        i++;
        continue;
      case State.Template:
        if (c === 92) {
          i += 2;
          continue;
        }
        if (c === 96) {
          state = State.Code;
          regexAllowed = false;
          i++;
          continue;
        }
        if (c === 36 && source.charCodeAt(i + 1) === 123) {
          depth++;
          if (depth > maxDepth) return { index: i, depth };
          templates.push(depth);
          state = State.Code;
          regexAllowed = true;
          i += 2;
          continue;
        }
        i++;
        continue;
      case State.Regex:
        if (c === 92) {
          i += 2;
          continue;
        }
        if (c === 91) state = State.RegexClass;
        else if (c === 47) {
          state = State.Code;
          regexAllowed = false;
        } else if (c === 10 || c === 13) state = State.Code;
        i++;
        continue;
      case State.RegexClass:
        if (c === 92) {
          i += 2;
          continue;
        }
        if (c === 93) state = State.Regex;
        else if (c === 10 || c === 13) state = State.Code;
        i++;
        continue;
    }
  }
  return null;
}

/** 1-based line and 1-based column (UTF-16 code units) of a source index. */
export function positionAt(source: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(index, source.length);
  for (let i = 0; i < end; i++) {
    const c = source.charCodeAt(i);
    if (c === 10 || c === 0x2028 || c === 0x2029 || (c === 13 && source.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
