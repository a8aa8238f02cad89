// The workflow manifest: what a workflow declares about itself, read exactly (unknown keys refused).
import * as v from 'valibot';
import { PATTERN_IDS, type PatternId, WORKFLOW_NAME_PATTERN } from './constants.js';
import { type InputSchema, inputSchemaSchema } from './input-schema.js';
import type { ValidationIssue } from './internal/issues.js';
import { checkDocument } from './internal/run-schema.js';
import {
  boolean,
  got,
  list,
  oneOf,
  plainObject,
  positiveInteger,
  text,
} from './internal/schema-kit.js';

/** A workflow's self-description: name, phases, limits, patterns and args schema. */
export interface WorkflowManifest {
  readonly name: string;
  readonly description: string;
  readonly phases: readonly string[];
  readonly readOnly: boolean;
  readonly plannedAgents?: number;
  readonly maxAgents: number;
  readonly maxConcurrency: number;
  readonly tokenBudget?: number;
  readonly mayUseWorktree?: boolean;
  readonly patterns: readonly PatternId[];
  readonly inputSchema?: InputSchema;
}

/** Deployment ceilings a host may impose on top of the manifest's own rules. */
export interface ManifestLimits {
  readonly maxAgents?: number;
  readonly maxConcurrency?: number;
}

export interface ParseManifestOptions {
  readonly limits?: ManifestLimits;
}

export type ParseManifestResult =
  | { ok: true; manifest: WorkflowManifest }
  | { ok: false; issues: ValidationIssue[] };

interface ManifestShape {
  plannedAgents?: number;
  maxAgents: number;
  maxConcurrency: number;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0;
}

function buildManifestSchema(limits: ManifestLimits) {
  const ceiling = (max: number | undefined, label: string) =>
    v.check<number, (issue: v.CheckIssue<number>) => string>(
      (n) => max === undefined || n <= max,
      (issue) =>
        `must not exceed the deployment ceiling for ${label} (${max}) (got ${issue.input})`,
    );
  return v.pipe(
    plainObject({
      name: v.pipe(
        v.string(got('must be a string')),
        v.regex(
          WORKFLOW_NAME_PATTERN,
          got(
            'must be kebab-case: a lowercase letter, then up to 63 lowercase letters, digits or hyphens',
          ),
        ),
      ),
      description: text(),
      phases: list(text(), { nonEmpty: true }),
      readOnly: boolean(),
      plannedAgents: v.exactOptional(positiveInteger()),
      maxAgents: v.pipe(positiveInteger(), ceiling(limits.maxAgents, 'maxAgents')),
      maxConcurrency: v.pipe(positiveInteger(), ceiling(limits.maxConcurrency, 'maxConcurrency')),
      tokenBudget: v.exactOptional(positiveInteger()),
      mayUseWorktree: v.exactOptional(boolean()),
      patterns: list(oneOf(PATTERN_IDS), { nonEmpty: true }),
      inputSchema: v.exactOptional(inputSchemaSchema),
    }),
    v.forward(
      v.partialCheck(
        [['plannedAgents'], ['maxAgents']],
        // Validation issues leave the object 'typed': compare only two valid counts.
        (m: ManifestShape) =>
          !isCount(m.plannedAgents) || !isCount(m.maxAgents) || m.plannedAgents <= m.maxAgents,
        (issue) => {
          const m = issue.input as ManifestShape;
          return `must not exceed maxAgents (${m.maxAgents}) (got ${m.plannedAgents})`;
        },
      ),
      ['plannedAgents'],
    ),
    v.forward(
      v.partialCheck(
        [['maxConcurrency'], ['maxAgents']],
        (m: ManifestShape) =>
          !isCount(m.maxConcurrency) || !isCount(m.maxAgents) || m.maxConcurrency <= m.maxAgents,
        (issue) => {
          const m = issue.input as ManifestShape;
          return `must not exceed maxAgents (${m.maxAgents}) (got ${m.maxConcurrency})`;
        },
      ),
      ['maxConcurrency'],
    ),
  );
}

const defaultSchema = buildManifestSchema({});

/** The valibot schema of a manifest (no deployment ceilings), for composing into other schemas. */
export const manifestSchema: v.GenericSchema<WorkflowManifest> =
  defaultSchema as unknown as v.GenericSchema<WorkflowManifest>;

/** @internal the schema with ceilings, for the capsule parser. */
export function manifestSchemaFor(
  limits: ManifestLimits | undefined,
): v.GenericSchema<WorkflowManifest> {
  if (
    limits === undefined ||
    (limits.maxAgents === undefined && limits.maxConcurrency === undefined)
  ) {
    return manifestSchema;
  }
  return buildManifestSchema(limits) as unknown as v.GenericSchema<WorkflowManifest>;
}

/**
 * Reads a manifest. Every issue is reported with its path (`manifest.maxConcurrency`) and a
 * message naming the rule; the returned manifest is a fresh deep-frozen copy.
 */
export function parseManifest(
  json: unknown,
  options: ParseManifestOptions = {},
): ParseManifestResult {
  const result = checkDocument(manifestSchemaFor(options.limits), json, {
    root: 'manifest',
    rootLabel: 'manifest',
  });
  if (!result.ok) return result;
  return { ok: true, manifest: markParsed(deepFreeze(result.value)) };
}

/** The fields `withManifestDefaults` may fill in (every field an inline run needs). */
export const DEFAULTED_MANIFEST_FIELDS = [
  'name',
  'description',
  'phases',
  'readOnly',
  'maxAgents',
  'maxConcurrency',
  'patterns',
] as const;

/**
 * An inline manifest (authored in a conversation) completed from `defaults`: a missing field,
 * and an empty `phases` or `patterns` list, takes the default's value; a missing
 * `maxConcurrency` is capped at the given `maxAgents`. Fields that are present are kept as given
 * (unknown keys too), so `parseManifest` still refuses a wrong value by name.
 */
export function withManifestDefaults(
  input: Readonly<Record<string, unknown>>,
  defaults: WorkflowManifest,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  for (const field of DEFAULTED_MANIFEST_FIELDS) {
    const given = out[field];
    const emptyList =
      (field === 'phases' || field === 'patterns') && Array.isArray(given) && given.length === 0;
    if (given === undefined || emptyList) out[field] = defaults[field];
  }
  if (input.maxConcurrency === undefined && isCount(out.maxAgents)) {
    out.maxConcurrency = Math.min(defaults.maxConcurrency, out.maxAgents);
  }
  return out;
}

// Manifests this package produced (deep-frozen, so they cannot have changed since).
const parsed = new WeakSet<object>();

/** @internal */
export function markParsed<T extends WorkflowManifest>(manifest: T): T {
  parsed.add(manifest);
  return manifest;
}

/** @internal True for a manifest returned by parseManifest/parseCapsule. */
export function isParsedManifest(manifest: unknown): manifest is WorkflowManifest {
  return typeof manifest === 'object' && manifest !== null && parsed.has(manifest);
}

/** @internal */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
