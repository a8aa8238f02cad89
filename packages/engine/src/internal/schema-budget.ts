// Before-launch checks of a guest-supplied JSON Schema, linear in its size: its expansion cost (how
// many schema nodes ajv may apply once every `$ref` is inlined, memoized per node) and its shape.
//
// invariant 6: a 1 KB schema nesting anyOf/allOf of $refs 12-16 levels deep expands to millions of
// nodes (each level multiplies ajv's work by the number of refs it holds): 10-50 s of host CPU per
// validation and, with a failing leaf, an OOM of the host. Such schemas are refused before launch.

/** Largest expanded size (schema nodes, `$ref`s inlined) an outputSchema may have. */
export const MAX_SCHEMA_EXPANSION = 20_000;

/** Keywords whose values are data, never subschemas ajv applies. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'description', 'title']);
/** Keywords holding definitions: applied only through a `$ref`, so not counted where they sit. */
const DEFINITION_KEYWORDS = new Set(['$defs', 'definitions']);
/**
 * Keywords that change how a `$ref` resolves (base URI, anchors, dynamic scope). The budget can
 * only follow local JSON-pointer refs, so a schema using these is refused instead of mis-counted.
 */
const UNSUPPORTED_KEYWORDS = [
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
] as const;

export type ExpansionResult =
  | { readonly ok: true; readonly cost: number }
  | { readonly ok: false; readonly message: string };

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The expanded size of `schema`, or why it is refused. A `$ref` back to a node still being
 * expanded (a recursive schema) costs 1: its real cost grows with the depth of the answer, which
 * the validation worker's time and memory limits bound instead.
 */
export function schemaExpansion(schema: unknown, budget = MAX_SCHEMA_EXPANSION): ExpansionResult {
  const memo = new Map<object, number>();
  const onStack = new Set<object>();
  // Pointers of the nodes, so a refusal names where the multiplication happens.
  let refusal: string | undefined;

  const cost = (node: unknown, pointer: string): number => {
    if (refusal !== undefined) return budget + 1;
    if (typeof node !== 'object' || node === null) return 0;
    const known = memo.get(node);
    if (known !== undefined) return known;
    if (onStack.has(node)) return 1;
    onStack.add(node);
    let total = Array.isArray(node) ? 0 : 1;
    const entries = Array.isArray(node)
      ? node.map((v, i) => [String(i), v] as const)
      : Object.entries(node as Record<string, unknown>);
    for (const [key, value] of entries) {
      if (refusal !== undefined) break;
      if (!Array.isArray(node)) {
        if (DATA_KEYWORDS.has(key) || DEFINITION_KEYWORDS.has(key)) continue;
        if ((UNSUPPORTED_KEYWORDS as readonly string[]).includes(key)) {
          refusal = `${pointer}/${escapePointer(key)}: ${key} is not supported (only local "#/..." $refs are)`;
          break;
        }
        if (key === '$id' && pointer !== '#') {
          refusal = `${pointer}/$id: a nested $id is not supported (it changes what "#/..." refs mean)`;
          break;
        }
        if (key === '$ref' && typeof value === 'string') {
          if (value !== '#' && !value.startsWith('#/')) {
            refusal = `${pointer}/$ref: "${value.slice(0, 100)}" is not a local "#/..." reference`;
            break;
          }
          const target = resolvePointer(schema, value);
          if (target === undefined) {
            refusal = `${pointer}/$ref: "${value.slice(0, 100)}" does not resolve inside the schema`;
            break;
          }
          total += cost(target, value);
          continue;
        }
      }
      total += cost(value, `${pointer}/${escapePointer(key)}`);
      if (total > budget) break;
    }
    onStack.delete(node);
    if (total > budget && refusal === undefined) {
      refusal = `at ${pointer} the schema expands to more than ${budget} nodes once its $refs are inlined (allOf/anyOf/oneOf of $refs multiply the validation work at every level)`;
    }
    memo.set(node, total);
    return total;
  };

  const total = cost(schema, '#');
  if (refusal !== undefined) return { ok: false, message: refusal };
  return { ok: true, cost: total };
}

const TYPE_NAMES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const SCHEMA_KEYWORDS = [
  'not',
  'if',
  'then',
  'else',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const;
const SCHEMA_MAP_KEYWORDS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
] as const;
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const NUMBER_KEYWORDS = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;

/**
 * The first structural mistake of a schema (unknown `type`, a keyword that must hold a schema
 * holding something else), with its pointer; undefined when none. This replaces compiling the
 * JSON Schema meta-schema on the host (360 ms on first use); what it misses, ajv reports when the
 * schema worker compiles the schema, and the task then fails `WF_ENGINE_OUTPUT_INVALID`.
 */
export function schemaShapeIssue(schema: unknown): string | undefined {
  const check = (node: unknown, pointer: string, depth: number): string | undefined => {
    if (typeof node === 'boolean') return undefined;
    if (typeof node !== 'object' || node === null || Array.isArray(node))
      return `${pointer} must be a schema (an object or a boolean)`;
    if (depth > 128) return `${pointer} nests deeper than 128 schemas`;
    const s = node as Record<string, unknown>;
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      for (const t of types)
        if (typeof t !== 'string' || !TYPE_NAMES.has(t))
          return `${pointer}/type ${JSON.stringify(t)?.slice(0, 60)} is not a JSON Schema type (${[...TYPE_NAMES].join(', ')})`;
    }
    for (const k of NUMBER_KEYWORDS)
      if (s[k] !== undefined && typeof s[k] !== 'number') return `${pointer}/${k} must be a number`;
    if (s.required !== undefined) {
      if (!Array.isArray(s.required) || s.required.some((r) => typeof r !== 'string'))
        return `${pointer}/required must be an array of strings`;
    }
    for (const k of SCHEMA_KEYWORDS) {
      if (s[k] === undefined) continue;
      const issue = check(s[k], `${pointer}/${k}`, depth + 1);
      if (issue) return issue;
    }
    if (s.items !== undefined) {
      const list = Array.isArray(s.items) ? s.items : [s.items];
      for (let i = 0; i < list.length; i += 1) {
        const at = Array.isArray(s.items) ? `${pointer}/items/${i}` : `${pointer}/items`;
        const issue = check(list[i], at, depth + 1);
        if (issue) return issue;
      }
    }
    for (const k of SCHEMA_MAP_KEYWORDS) {
      const map = s[k];
      if (map === undefined) continue;
      if (typeof map !== 'object' || map === null || Array.isArray(map))
        return `${pointer}/${k} must be an object of schemas`;
      for (const [name, child] of Object.entries(map)) {
        const issue = check(child, `${pointer}/${k}/${escapePointer(name)}`, depth + 1);
        if (issue) return issue;
      }
    }
    for (const k of SCHEMA_LIST_KEYWORDS) {
      const list = s[k];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0)
        return `${pointer}/${k} must be a non-empty array of schemas`;
      for (let i = 0; i < list.length; i += 1) {
        const issue = check(list[i], `${pointer}/${k}/${i}`, depth + 1);
        if (issue) return issue;
      }
    }
    return undefined;
  };
  return check(schema, '#', 0);
}
