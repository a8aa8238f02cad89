// The one sanitizer for text on its way to a terminal that came from a guest, a run record, a
// catalog entry or a file name (invariant 13): every code point a terminal acts on instead of
// printing, or that reorders what is printed, becomes a visible escape. Both apps print through it.
//
// Escaped: C0 controls (U+0000-001F: ESC starts every CSI, OSC and DCS sequence, BEL ends an OSC,
// CR and BS overwrite what was printed), DEL (U+007F), C1 controls (U+0080-009F: a terminal that
// honours 8-bit controls reads U+009B as CSI, U+009D as OSC, U+0090 as DCS), the Unicode bidi
// controls (Bidi_Control: U+061C, U+200E, U+200F, U+202A-202E, U+2066-2069, which reorder the
// characters shown around them, "Trojan Source") and the line and paragraph separators U+2028 and
// U+2029. With the introducer of a sequence escaped, the rest of it is plain printable text.
// The escapes are JSON's own (`\n`, `\t`, `\r`, `\b`, `\f`, otherwise `\u` and four hex digits),
// so JSON text passed through in `lines` layout stays the same JSON, and a text without `\` or
// `"` reads back exactly with JSON.parse of it in quotes. Every other code point is kept as is.

/** `line` (default): a field on one line, line breaks and tabs escaped too. `lines`: multi-line text, `\n` and tabs kept, CRLF read as `\n`. */
export type TerminalTextLayout = 'line' | 'lines';

const CONTROLS =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// The same set less tab and line feed; a CRLF pair is one line break.
const CONTROLS_KEEPING_LINES =
  /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Readonly<Record<string, string>> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
  '\r\n': '\n',
};

function escapeControl(control: string): string {
  return SHORT[control] ?? `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` as it may reach a terminal: each control code point (see the head of this file) shown as
 * its escape, everything else unchanged. Idempotent, and a no-op on text without controls.
 */
export function terminalText(text: string, layout: TerminalTextLayout = 'line'): string {
  // A record read from disk may hold anything where a string belongs: it is shown, not thrown on.
  const value = typeof text === 'string' ? text : String(text);
  return value.replace(layout === 'lines' ? CONTROLS_KEEPING_LINES : CONTROLS, escapeControl);
}
