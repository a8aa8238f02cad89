// Structured output: check a task's JSON Schema before launch (on the host, in linear time), then
// compile and validate with ajv in a schema worker (never on the host's event loop), and pull a
// value out of a child's answer.
import { createRequire } from 'node:module';
import { MAX_SCHEMA_EXPANSION, schemaExpansion, schemaShapeIssue } from './schema-budget.js';
import { type SchemaPool, sharedSchemaPool } from './schema-pool.js';

/**
 * ajv compiles a schema into code in superlinear time (about 0.3 s for 32 KB and 3 s for 150 KB
 * of properties on the CI machine; larger ones overflow its stack). Compiling now happens in a
 * schema worker, but the bound still refuses absurd schemas before launch (invariant 6).
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

/** Every `pattern` and `patternProperties` key, for the linear-time engine check. */
function patternsOf(schema: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node)) {
      const rec = node as Record<string, unknown>;
      if (typeof rec.pattern === 'string') out.push(rec.pattern);
      const pp = rec.patternProperties;
      if (typeof pp === 'object' && pp !== null) out.push(...Object.keys(pp));
    }
    for (const child of Object.values(node)) stack.push(child);
  }
  return out;
}

export type SchemaVerdict =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly why: string; readonly final: boolean };

export interface SchemaCheck {
  /**
   * Before launch, on the host: size, `uniqueItems`, expansion budget, patterns the linear-time
   * engine can run, the schema's shape. Linear in the schema's size.
   */
  compile(schema: unknown): { ok: true } | { ok: false; message: string };
  /**
   * Validates `value` in a schema worker. `final` marks a failure a repair cannot fix (the
   * schema is unusable, or validation hit the worker's time or memory bound). `owner` (the run)
   * is the unit of fairness in the worker queue.
   */
  validate(schema: unknown, value: unknown, owner?: object): Promise<SchemaVerdict>;
}

type LinearRegex = typeof import('re2js')['RE2JS'];
let re2: LinearRegex | undefined;

/** re2js (260 KB) loads on the first schema that has a `pattern`, not with the engine. */
function linearRegex(): LinearRegex {
  re2 ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return re2;
}

export function createSchemaCheck(pool: SchemaPool = sharedSchemaPool()): SchemaCheck {
  const checked = new Map<string, true>();
  return {
    compile(schema) {
      const key = JSON.stringify(schema);
      if (key.length > MAX_SCHEMA_CHARS) {
        return {
          ok: false,
          message: `it is ${key.length} characters of JSON, more than the ${MAX_SCHEMA_CHARS} allowed`,
        };
      }
      if (checked.has(key)) return { ok: true };
      if (usesKeyword(schema, 'uniqueItems')) {
        return {
          ok: false,
          message:
            'uniqueItems is not supported: ajv checks it in quadratic time (20,000 objects took 5 s)',
        };
      }
      const expansion = schemaExpansion(schema, MAX_SCHEMA_EXPANSION);
      if (!expansion.ok) return { ok: false, message: expansion.message };
      for (const pattern of patternsOf(schema)) {
        try {
          linearRegex().compile(pattern);
        } catch (e) {
          return {
            ok: false,
            message: `pattern ${JSON.stringify(pattern.slice(0, 100))} is not supported by the linear-time regex engine: ${(e as Error).message.slice(0, 200)}`,
          };
        }
      }
      const shape = schemaShapeIssue(schema);
      if (shape !== undefined) return { ok: false, message: shape };
      if (checked.size > 256) checked.clear();
      checked.set(key, true);
      return { ok: true };
    },
    async validate(schema, value, owner) {
      const result = await pool.run(JSON.stringify(schema), JSON.stringify(value ?? null), owner);
      if (result.ok) return { ok: true, value };
      return { ok: false, why: result.message, final: result.stage !== 'validate' };
    },
  };
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
  // unbalanced brackets costs one full scan per bracket, seconds of the host thread for 60 KB.
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
