// A guest error's place in the workflow source, shown like a compiler does: the sandbox puts
// `line L:C: ` in front of the message (@wf/sandbox), this prints the lines around it and a caret.
import { terminalText } from '@wf/bridge/terminal-text';

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
 * Source lines are untrusted text: each passes terminalText (tabs shown as one space, so code
 * indented with tabs reads as code), long lines are clipped, and the caret is placed under the
 * column in the line as shown, escapes included.
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
  const shown = (text: string) => terminalText(text.replaceAll('\t', ' '));
  const show = (text: string) => {
    const flat = shown(text);
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };
  const out: string[] = [];
  for (let n = first; n <= last; n += 1) {
    const mark = n === at.line ? '>' : ' ';
    out.push(`${mark} ${String(n).padStart(width)} | ${show(lines[n - 1] ?? '')}`.trimEnd());
    // Escapes widen the text before the column: the caret goes under it as shown.
    const caret = n === at.line ? shown(target.slice(0, at.column - 1)).length : max;
    if (caret < max) out.push(`  ${' '.repeat(width)} | ${' '.repeat(caret)}^`);
  }
  return out.join('\n');
}
