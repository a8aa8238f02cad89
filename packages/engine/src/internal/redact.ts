// Provider error messages are host data: before one reaches a workflow (inside a task result,
// which the sandbox passes through as a value) absolute paths, stack lines and runtime versions
// are removed and the length is capped.
const MAX_MESSAGE = 500;

export function redactHostMessage(message: string): string {
  return message
    .split('\n')
    .filter((line) => !/^\s*at\s/.test(line))
    .join(' ')
    .replace(/file:\/\/\S+/g, '<path>')
    .replace(/(^|[\s'"`(=:,[])(?:\/[^\s'"`()\],:]+)+/g, '$1<path>')
    .replace(/(^|[\s'"`(=,[])[A-Za-z]:\\[^\s'"`()\],]+/g, '$1<path>')
    .replace(/node:internal\/\S+/g, '<internal>')
    .replace(/\bv\d+\.\d+\.\d+\S*/g, '<version>')
    .replace(/\bnode(?:\.js)?\s+\d+\.\d+\.\d+\S*/gi, 'node <version>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_MESSAGE);
}
