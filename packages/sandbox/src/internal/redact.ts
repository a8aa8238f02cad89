// Redaction of host detail from any message that reaches the guest or an outcome: absolute
// paths, stack lines, Node versions and internals are removed and the length is capped.

const MAX_CHARS = 500;

export function redactHostMessage(message: string, maxChars: number = MAX_CHARS): string {
  let s = message
    .split(/\r?\n/)
    .filter((line) => !/^\s*at\s/.test(line))
    .join(' ');
  s = s.replace(/file:\/\/\S+/g, '<path>');
  s = s.replace(/\bnode:[\w/:.-]+/g, '<internal>');
  s = s.replace(/(?:\b[A-Za-z]:\\|\\\\)[^\s'"`)]+/g, '<path>');
  s = s.replace(/(^|[\s'"`(=:,[{])~?\/[^\s'"`)\]}]+/g, '$1<path>');
  s = s.replace(/\bNode(?:\.js)?\s*v?\d+(?:\.\d+)*/gi, '<runtime>');
  s = s.replace(/\bv\d+\.\d+\.\d+\b/g, '<version>');
  s = s.replace(/\s+/g, ' ').trim();
  if (s.length > maxChars) s = `${s.slice(0, maxChars - 1)}…`;
  return s;
}
