// Git path syntax in diff headers: C-style quoted names, the a/ b/ (and other) prefixes, the two
// paths of a `diff --git` line, and `---`/`+++` and rename/copy paths.

/** Decodes a C-style quoted git path (`"a/caf\303\251"`) to a string. */
export function unquoteGitPath(text: string): string | null {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return null;
  const body = text.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };
  for (let i = 0; i < body.length; i += 1) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return null;
    if (/[0-7]/.test(next)) {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) return null;
      bytes.push(Number.parseInt(oct, 8));
      i += 3;
    } else if (next in simple) {
      bytes.push(simple[next] as number);
      i += 1;
    } else {
      for (const b of Buffer.from(next, 'utf8')) bytes.push(b);
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Takes one path token (quoted or not) from the start of `text`; returns it and the rest. */
function takeQuoted(text: string): { token: string; rest: string } | null {
  let i = 1;
  while (i < text.length) {
    if (text[i] === '\\') i += 2;
    else if (text[i] === '"') break;
    else i += 1;
  }
  if (i >= text.length) return null;
  const raw = text.slice(0, i + 1);
  const token = unquoteGitPath(raw);
  return token === null ? null : { token, rest: text.slice(i + 1) };
}

const PREFIX = /^[abciwo12]\//;
function stripPrefix(path: string): string {
  return PREFIX.test(path) ? path.slice(2) : path;
}

/** The two paths of a `diff --git A B` header, when they can be told apart. */
export function headerPaths(rest: string): { a: string; b: string } | null {
  if (rest.startsWith('"')) {
    const first = takeQuoted(rest);
    if (!first?.rest.startsWith(' ')) return null;
    const second = first.rest.slice(1);
    const b = second.startsWith('"') ? takeQuoted(second)?.token : second;
    return b === undefined ? null : { a: stripPrefix(first.token), b: stripPrefix(b) };
  }
  if (rest.endsWith('"')) {
    const at = rest.lastIndexOf(' "');
    if (at < 0) return null;
    const b = unquoteGitPath(rest.slice(at + 1));
    return b === null ? null : { a: stripPrefix(rest.slice(0, at)), b: stripPrefix(b) };
  }
  // Unquoted and (for anything but a rename/copy) the same path twice: `a/P b/P`.
  if ((rest.length - 1) % 2 === 0) {
    const half = (rest.length - 1) / 2;
    const a = rest.slice(0, half);
    const b = rest.slice(half + 1);
    if (rest[half] === ' ' && stripPrefix(a) === stripPrefix(b)) {
      return { a: stripPrefix(a), b: stripPrefix(b) };
    }
  }
  return null;
}

/** A `---`/`+++` path: `/dev/null` is null; git appends a tab after names with spaces. */
export function markerPath(text: string, plain: boolean): string | null {
  let value = text;
  if (value.startsWith('"')) {
    const q = takeQuoted(value);
    value = q ? q.token : value;
  } else {
    const tab = value.indexOf('\t');
    if (tab >= 0) value = value.slice(0, tab);
  }
  if (value === '/dev/null') return null;
  return plain ? value : stripPrefix(value);
}

export function metaPath(text: string): string {
  return text.startsWith('"') ? (unquoteGitPath(text) ?? text) : text;
}
