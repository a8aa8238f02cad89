// A guest error's place in the workflow source, shown like a compiler does: the sandbox puts
// `line L:C: ` in front of the message (@wf/sandbox), this prints the lines around it and a caret.
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** The `line L:C: ` prefix of a guest error message, when it has one. */
export function guestErrorPosition(message: string): SourcePosition | undefined {
  const m = /^line (\d{1,9}):(\d{1,9}): /.exec(message);
  if (!m) return undefined;
  return { line: Number(m[1]), column: Number(m[2]) };
}

/**
 * Up to `context` lines either side of the position, numbered, `>` on the line itself and a caret
 * under the column; undefined when the position is not in the source (a different program).
 * Source lines are untrusted text: control characters are blanked and long lines clipped.
 */
export function sourceExcerpt(source: string, at: SourcePosition, context = 2): string | undefined {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop(); // the final newline
  const target = lines[at.line - 1];
  if (target === undefined || at.column < 1 || at.column > target.length + 1) return undefined;
  const first = Math.max(1, at.line - context);
  const last = Math.min(lines.length, at.line + context);
  const width = String(last).length;
  const max = 160;
  const show = (text: string) => {
    // one character for one (tabs too), so the caret stays under its column
    const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };
  const out: string[] = [];
  for (let n = first; n <= last; n += 1) {
    const mark = n === at.line ? '>' : ' ';
    out.push(`${mark} ${String(n).padStart(width)} | ${show(lines[n - 1] ?? '')}`.trimEnd());
    if (n === at.line && at.column <= max)
      out.push(`  ${' '.repeat(width)} | ${' '.repeat(at.column - 1)}^`);
  }
  return out.join('\n');
}
