// JSON text shape checks shared by the main thread and the worker: the nesting depth is measured
// by one linear scan over the text, before any JSON.parse (whose recursion it bounds).
// @ts-check

/**
 * True when `text` (assumed to be JSON) never nests arrays/objects deeper than `maxDepth`.
 * @param {string} text
 * @param {number} maxDepth
 * @returns {boolean}
 */
export function jsonDepthWithin(text, maxDepth) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i += 1;
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 123 || c === 91) {
      depth += 1;
      if (depth > maxDepth) return false;
    } else if (c === 125 || c === 93) {
      depth -= 1;
    }
  }
  return true;
}
