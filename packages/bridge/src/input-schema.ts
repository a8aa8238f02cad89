// The small JSON-schema subset a manifest may declare for its args, and the valibot schema that reads it.
import * as v from 'valibot';
import { describeValue } from './internal/issues.js';
import { exactObject, got, list, objectLike, text } from './internal/schema-kit.js';

/**
 * The args schema subset of dsh.workflow v1: objects (properties, required, additionalProperties),
 * arrays (items), strings (enum, const), numbers, integers, booleans, and `json` (any JSON value,
 * kept for capsules written for the earlier plugin). Nothing else is accepted.
 */
export type InputSchema =
  | InputObjectSchema
  | InputArraySchema
  | InputStringSchema
  | { readonly type: 'number'; readonly const?: number }
  | { readonly type: 'integer'; readonly const?: number }
  | { readonly type: 'boolean'; readonly const?: boolean }
  | { readonly type: 'json'; readonly const?: null | boolean | number | string };

export interface InputObjectSchema {
  readonly type: 'object';
  readonly properties?: { readonly [name: string]: InputSchema };
  readonly required?: readonly string[];
  /** Default true, as in JSON Schema. */
  readonly additionalProperties?: boolean;
}
export interface InputArraySchema {
  readonly type: 'array';
  readonly items: InputSchema;
}
export interface InputStringSchema {
  readonly type: 'string';
  readonly enum?: readonly string[];
  readonly const?: string;
}

export const INPUT_SCHEMA_TYPES = [
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
  'json',
] as const;

const finite = got('must be a finite number');

const objectSchema = v.pipe(
  exactObject(
    {
      type: v.literal('object'),
      properties: v.exactOptional(
        v.pipe(
          objectLike('an object mapping property names to schemas'),
          v.record(
            v.string(),
            v.lazy(() => inputSchemaSchema),
          ),
          v.rawCheck(({ dataset, addIssue }) => {
            const value = dataset.value as Record<string, unknown>;
            for (const key of Object.keys(value)) {
              // Object schemas read a key with `in`: an inherited name would look present.
              if (!(key in Object.prototype)) continue;
              addIssue({
                message: 'is not allowed as a property name (it names an Object.prototype member)',
                path: [{ type: 'object', origin: 'key', input: value, key, value: value[key] }],
              });
            }
          }),
        ),
      ),
      required: v.exactOptional(
        v.pipe(
          list(text()),
          v.check((names) => new Set(names).size === names.length, 'must not repeat a name'),
        ),
      ),
      additionalProperties: v.exactOptional(
        v.boolean(got('must be a boolean (schemas as additionalProperties are not supported)')),
      ),
    },
    'a schema object',
  ),
  v.forward(
    v.partialCheck(
      [['required']],
      // Only `required` must be well-typed: property names are known even when a property's schema is bad.
      (s) => {
        const declared = (s as { properties?: object }).properties ?? {};
        return (s.required ?? []).every((name) => Object.hasOwn(declared, name));
      },
      (issue) => {
        const s = issue.input as { properties?: object; required?: string[] };
        const missing = (s.required ?? []).filter((n) => !Object.hasOwn(s.properties ?? {}, n));
        return `must name only declared properties (not declared: ${missing.join(', ')})`;
      },
    ),
    ['required'],
  ),
);

const arraySchema = exactObject(
  { type: v.literal('array'), items: v.lazy(() => inputSchemaSchema) },
  'a schema object',
);

const stringSchema = exactObject(
  {
    type: v.literal('string'),
    enum: v.exactOptional(list(v.string(got('must be a string')), { nonEmpty: true })),
    const: v.exactOptional(v.string(got('must be a string (the const of a string schema)'))),
  },
  'a schema object',
);

const numberSchema = exactObject(
  {
    type: v.literal('number'),
    const: v.exactOptional(v.pipe(v.number(finite), v.finite(finite))),
  },
  'a schema object',
);

const integerSchema = exactObject(
  {
    type: v.literal('integer'),
    const: v.exactOptional(
      v.pipe(v.number(got('must be an integer')), v.safeInteger(got('must be an integer'))),
    ),
  },
  'a schema object',
);

const booleanSchema = exactObject(
  { type: v.literal('boolean'), const: v.exactOptional(v.boolean(got('must be a boolean'))) },
  'a schema object',
);

const jsonSchema = exactObject(
  {
    type: v.literal('json'),
    const: v.exactOptional(
      v.union(
        [v.null(), v.boolean(), v.pipe(v.number(), v.finite()), v.string()],
        got('must be a JSON primitive (null, boolean, number or string)'),
      ),
    ),
  },
  'a schema object',
);

/** Reads one schema node; recursion goes through `properties` and `items`. */
export const inputSchemaSchema: v.GenericSchema<InputSchema> = v.pipe(
  objectLike('a schema object'),
  v.variant(
    'type',
    [
      objectSchema,
      arraySchema,
      stringSchema,
      numberSchema,
      integerSchema,
      booleanSchema,
      jsonSchema,
    ],
    (issue) => {
      if (issue.path === undefined)
        return `must be a schema object (got ${describeValue(issue.input)})`;
      const types = INPUT_SCHEMA_TYPES.join(', ');
      if (issue.input === undefined) return `is required (one of ${types})`;
      return `must be one of ${types} (got ${describeValue(issue.input)})`;
    },
  ),
) as unknown as v.GenericSchema<InputSchema>;
