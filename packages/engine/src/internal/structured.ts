// Structured output: compile a task's JSON Schema with ajv (before launch, so a bad schema is
// refused before anything runs), pull a value out of a child's answer, validate it.
import { Ajv, type ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';

/**
 * ajv runs `pattern` / `patternProperties` regexes on the host thread; a guest-supplied
 * catastrophic pattern on a backtracking engine would stall the whole host (invariant 6). RE2
 * semantics match in linear time; patterns RE2 cannot express (backreferences, lookaround) fail
 * compilation, so the task is refused before launch.
 */
const linearRegExp = Object.assign(
  (pattern: string) => {
    const re = RE2JS.compile(pattern);
    return { test: (text: string) => re.test(text) };
  },
  { code: 'RE2JS' },
);

/**
 * ajv compiles a schema into code on the host thread in superlinear time (about 0.3 s for 32 KB
 * and 3 s for 150 KB of properties on the CI machine; larger ones overflow its stack), so a
 * guest-supplied schema is bounded before compiling (invariant 6).
 */
export const MAX_SCHEMA_CHARS = 32 * 1024;

/** invariant 6: true when `keyword` is set to true anywhere in a JSON schema. */
function usesKeyword(schema: unknown, keyword: string): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node) && (node as Record<string, unknown>)[keyword] === true) return true;
    for (const child of Object.values(node)) stack.push(child);
  }
  return false;
}

export interface SchemaCheck {
  /** `{ ok: false }` when the schema itself is unusable. */
  compile(
    schema: unknown,
  ): { ok: true; validate: ValidateFunction } | { ok: false; message: string };
}

export function createSchemaCheck(): SchemaCheck {
  // addUsedSchema: false so a guest `$id` never registers globally across runs; no loadSchema,
  // so a remote `$ref` cannot fetch anything (it fails compilation instead).
  const ajv = new Ajv({
    strict: false,
    allErrors: false,
    addUsedSchema: false,
    logger: false,
    code: { regExp: linearRegExp as never },
  });
  const cache = new Map<string, ValidateFunction>();
  return {
    compile(schema) {
      const key = JSON.stringify(schema);
      if (key.length > MAX_SCHEMA_CHARS) {
        return {
          ok: false,
          message: `it is ${key.length} characters of JSON, more than the ${MAX_SCHEMA_CHARS} allowed`,
        };
      }
      if (usesKeyword(schema, 'uniqueItems')) {
        return {
          ok: false,
          message:
            'uniqueItems is not supported: ajv checks it in quadratic time on the host thread (20,000 objects took 5 s)',
        };
      }
      const hit = cache.get(key);
      if (hit) return { ok: true, validate: hit };
      try {
        const validate = ajv.compile(schema as object);
        if (cache.size > 256) cache.clear();
        cache.set(key, validate);
        return { ok: true, validate };
      } catch (e) {
        return { ok: false, message: (e as Error).message.slice(0, 300) };
      }
    },
  };
}

export function describeErrors(validate: ValidateFunction): string {
  const errs = validate.errors ?? [];
  return errs
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

/** The last fenced ```json block, else the first balanced JSON object/array in the text. */
export function extractJson(text: string): { found: true; value: unknown } | { found: false } {
  const fences = fenceBodies(text);
  for (let i = fences.length - 1; i >= 0; i -= 1) {
    try {
      return { found: true, value: JSON.parse(fences[i] ?? '') };
    } catch {
      // try the next candidate
    }
  }
  // invariant 6: the child's text is steerable by the workflow; without a bound, a text of
  // unbalanced brackets costs one full scan per bracket (60 KB of '{' took 5 s on the host thread).
  const budget = { steps: MAX_SCAN_STEPS };
  for (let start = 0; start < text.length && start < 100_000 && budget.steps > 0; start += 1) {
    const c = text[start];
    if (c !== '{' && c !== '[') continue;
    const end = balancedEnd(text, start, budget);
    if (end < 0) continue;
    try {
      return { found: true, value: JSON.parse(text.slice(start, end + 1)) };
    } catch {
      // keep scanning
    }
  }
  return { found: false };
}

/** Character steps the bracket search may take for one answer (a few tens of ms). */
const MAX_SCAN_STEPS = 4_000_000;

/**
 * The bodies of ```json fenced blocks, as /```(?:json)?\s*\n([\s\S]*?)```/g finds them, in one
 * linear pass (that regex backtracks quadratically on a fence followed by many newlines).
 */
function fenceBodies(text: string): string[] {
  const out: string[] = [];
  let at = text.indexOf('```');
  while (at >= 0) {
    let i = at + 3;
    if (text.startsWith('json', i)) i += 4;
    let newline = -1;
    while (i < text.length && /\s/.test(text[i] ?? '')) {
      if (text[i] === '\n') newline = i;
      i += 1;
    }
    if (newline < 0) {
      at = text.indexOf('```', at + 1);
      continue;
    }
    const close = text.indexOf('```', newline + 1);
    if (close < 0) break;
    out.push(text.slice(newline + 1, close));
    at = text.indexOf('```', close + 3);
  }
  return out;
}

function balancedEnd(text: string, start: number, budget: { steps: number }): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    if (--budget.steps <= 0) return -1;
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}
