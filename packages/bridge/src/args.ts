// Checks a run's args against its manifest: the declared input schema, or plain JSON without one.
import * as v from 'valibot';
import type { InputSchema } from './input-schema.js';
import { describeValue, type ValidationIssue } from './internal/issues.js';
import type { JsonValue } from './internal/json.js';
import { checkDocument } from './internal/run-schema.js';
import { exactObject, got, objectLike } from './internal/schema-kit.js';
import { isParsedManifest, parseManifest, type WorkflowManifest } from './manifest.js';

export type ValidateArgsResult =
  | { ok: true; args: JsonValue }
  | { ok: false; issues: ValidationIssue[] };

// Converted schemas are cached per (frozen) schema object; manifests are read once, args many times.
const compiled = new WeakMap<object, v.GenericSchema>();

function compile(schema: InputSchema): v.GenericSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const out = build(schema);
  compiled.set(schema, out);
  return out;
}

function withConst(base: v.GenericSchema, expected: unknown): v.GenericSchema {
  if (expected === undefined) return base;
  return v.pipe(
    base as v.GenericSchema<unknown>,
    v.check((x: unknown) => x === expected, got(`must be ${JSON.stringify(expected)}`)),
  );
}

function build(schema: InputSchema): v.GenericSchema {
  switch (schema.type) {
    case 'object': {
      const required = new Set(schema.required ?? []);
      const entries: Record<string, v.GenericSchema> = {};
      for (const [name, child] of Object.entries(schema.properties ?? {})) {
        entries[name] = required.has(name) ? compile(child) : v.exactOptional(compile(child));
      }
      // A required name is always declared (the manifest parser checks it).
      if (schema.additionalProperties === false) {
        return v.pipe(objectLike('an object'), exactObject(entries));
      }
      return v.pipe(
        objectLike('an object'),
        v.looseObject(entries, (issue) =>
          issue.input === undefined && issue.path !== undefined
            ? 'is required'
            : `must be an object (got ${describeValue(issue.input)})`,
        ),
      );
    }
    case 'array':
      return v.array(compile(schema.items), got('must be an array'));
    case 'string': {
      const allowed = schema.enum;
      let out: v.GenericSchema = v.string(got('must be a string'));
      if (allowed !== undefined) {
        out = v.pipe(
          out,
          v.check(
            (s: unknown) => allowed.includes(s as string),
            got(`must be one of ${allowed.join(', ')}`),
          ),
        );
      }
      return withConst(out, schema.const);
    }
    case 'number':
    case 'integer': {
      const what = schema.type === 'integer' ? 'an integer' : 'a number';
      const base = v.pipe(
        v.number(got(`must be ${what}`)),
        v.check(
          (n: number) => (schema.type === 'integer' ? Number.isSafeInteger(n) : Number.isFinite(n)),
          got(`must be ${what}`),
        ),
      );
      return withConst(base, schema.const);
    }
    case 'boolean': {
      const base = v.boolean(got('must be a boolean'));
      return withConst(base, schema.const);
    }
    case 'json':
      // Plain-JSON-ness was checked by the walk before this schema runs.
      return withConst(v.unknown(), schema.const);
  }
}

/**
 * Checks args for a run of `manifest`. Args must always be plain JSON (finite numbers, no -0, no
 * cycles, plain objects and arrays only, depth-capped, no `__proto__`/`constructor`/`prototype`
 * keys); with an `inputSchema` they must also match it. Missing args are `{}` for an object schema
 * and `null` otherwise. A manifest that did not come from `parseManifest`/`parseCapsule` is
 * read first, and its issues (`manifest.*`) are returned if it is malformed. Returns a fresh copy.
 */
export function validateArgs(manifest: WorkflowManifest, args: unknown): ValidateArgsResult {
  // A manifest built by hand (trusted-local workflows, tests) is read first: its schema is
  // compiled only once it is known to be well-formed, so a bad one is reported, never thrown.
  let checked = manifest;
  if (!isParsedManifest(manifest)) {
    const read = parseManifest(manifest);
    if (!read.ok) return read;
    checked = read.manifest;
  }
  const schema = checked.inputSchema;
  const given = args === undefined ? (schema?.type === 'object' ? {} : null) : args;
  const result = checkDocument(schema === undefined ? v.unknown() : compile(schema), given, {
    root: 'args',
    rootLabel: 'args',
  });
  if (!result.ok) return result;
  return { ok: true, args: result.copy };
}
