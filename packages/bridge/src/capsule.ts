// The dsh.workflow v1 capsule: a saved workflow (manifest + source + metadata), read exactly.
import * as v from 'valibot';
import {
  CAPSULE_FORMAT,
  CAPSULE_VERSION,
  DOCUMENT_LIMITS,
  ENVIRONMENT_REQUIREMENTS,
  type EnvironmentRequirement,
  MODEL_HINTS,
  type ModelHint,
  WORKFLOW_API_VERSION,
} from './constants.js';
import type { ValidationIssue } from './internal/issues.js';
import type { JsonValue } from './internal/json.js';
import { checkDocument } from './internal/run-schema.js';
import { boolean, got, list, oneOf, plainObject, text } from './internal/schema-kit.js';
import {
  deepFreeze,
  type ManifestLimits,
  manifestSchemaFor,
  markParsed,
  type WorkflowManifest,
} from './manifest.js';

/** What the workflow is for, recorded by authoring to help reuse. */
export interface CapsuleIntent {
  readonly taskClass: string;
  readonly patterns?: readonly string[];
  readonly originalRequest?: string;
  readonly reusableFor?: readonly string[];
  readonly notFor?: readonly string[];
}

/** A description of the args and example args. */
export interface CapsuleInputs {
  readonly description: string;
  readonly examples?: readonly JsonValue[];
}

/** What the host must provide before the workflow may start (checked at preflight). */
export interface CapsuleRequires {
  readonly environment?: readonly EnvironmentRequirement[];
  readonly tools?: readonly string[];
  readonly mcp?: readonly string[];
  readonly skills?: readonly string[];
  readonly modelTiers?: readonly ModelHint[];
  readonly userInteraction?: boolean;
}

/** Where the capsule came from. */
export interface CapsuleProvenance {
  readonly fromRunId?: string;
  readonly fromWorkflowName?: string;
  readonly revisionOf?: string;
  readonly replacesWorkflowName?: string;
  readonly createdAt: string;
  readonly dshVersion: string;
  readonly pluginVersion: string;
}

/** A `.workflow.json` file, format `dsh.workflow` version 1. */
export interface WorkflowCapsule {
  readonly format: typeof CAPSULE_FORMAT;
  readonly version: typeof CAPSULE_VERSION;
  readonly workflowApiVersion: typeof WORKFLOW_API_VERSION;
  readonly minDshVersion: string;
  readonly manifest: WorkflowManifest;
  readonly source: string;
  readonly intent?: CapsuleIntent;
  readonly inputs?: CapsuleInputs;
  readonly requires?: CapsuleRequires;
  readonly provenance?: CapsuleProvenance;
}

export interface ParseCapsuleOptions {
  /** Deployment ceilings applied to `manifest.maxAgents` / `manifest.maxConcurrency`. */
  readonly limits?: ManifestLimits;
}

export type ParseCapsuleResult =
  | { ok: true; capsule: WorkflowCapsule }
  | { ok: false; issues: ValidationIssue[] };

const strings = () => list(text());

const intentSchema = plainObject({
  taskClass: text(),
  patterns: v.exactOptional(strings()),
  originalRequest: v.exactOptional(text()),
  reusableFor: v.exactOptional(strings()),
  notFor: v.exactOptional(strings()),
});

const inputsSchema = plainObject({
  description: text(),
  // Already checked to be plain JSON by the document walk.
  examples: v.exactOptional(list(v.unknown())),
});

const requiresSchema = plainObject({
  environment: v.exactOptional(list(oneOf(ENVIRONMENT_REQUIREMENTS))),
  tools: v.exactOptional(strings()),
  mcp: v.exactOptional(strings()),
  skills: v.exactOptional(strings()),
  modelTiers: v.exactOptional(list(oneOf(MODEL_HINTS))),
  userInteraction: v.exactOptional(boolean()),
});

const provenanceSchema = plainObject({
  fromRunId: v.exactOptional(text()),
  fromWorkflowName: v.exactOptional(text()),
  revisionOf: v.exactOptional(text()),
  replacesWorkflowName: v.exactOptional(text()),
  createdAt: text(),
  dshVersion: text(),
  pluginVersion: text(),
});

function buildCapsuleSchema(limits: ManifestLimits | undefined) {
  return plainObject(
    {
      format: v.literal(CAPSULE_FORMAT, got(`must be "${CAPSULE_FORMAT}"`)),
      version: v.literal(
        CAPSULE_VERSION,
        got(`must be ${CAPSULE_VERSION} (the only supported version)`),
      ),
      workflowApiVersion: v.literal(
        WORKFLOW_API_VERSION,
        got(`must be ${WORKFLOW_API_VERSION} (the only supported wf API version)`),
      ),
      minDshVersion: text(),
      manifest: manifestSchemaFor(limits),
      source: text(DOCUMENT_LIMITS.maxSourceChars),
      intent: v.exactOptional(intentSchema),
      inputs: v.exactOptional(inputsSchema),
      requires: v.exactOptional(requiresSchema),
      provenance: v.exactOptional(provenanceSchema),
    },
    'a workflow capsule object',
  );
}

const defaultCapsuleSchema = buildCapsuleSchema(undefined);

/**
 * Reads a capsule (the parsed JSON of a `.workflow.json`). Every issue names its path from the
 * capsule root (`manifest.maxConcurrency`, `provenance.createdAt`; `capsule` for the root itself).
 * The returned capsule is a fresh deep-frozen copy.
 */
export function parseCapsule(json: unknown, options: ParseCapsuleOptions = {}): ParseCapsuleResult {
  const schema =
    options.limits === undefined ? defaultCapsuleSchema : buildCapsuleSchema(options.limits);
  const result = checkDocument(schema, json, { root: '', rootLabel: 'capsule' });
  if (!result.ok) return result;
  const capsule = deepFreeze(result.value as WorkflowCapsule);
  markParsed(capsule.manifest);
  return { ok: true, capsule };
}

/** The fields of a capsule an author supplies; format and versions are filled in. */
export type CapsuleDraft = Omit<WorkflowCapsule, 'format' | 'version' | 'workflowApiVersion'>;

/** Builds a capsule from its parts and validates it like `parseCapsule`. */
export function createCapsule(
  draft: CapsuleDraft,
  options: ParseCapsuleOptions = {},
): ParseCapsuleResult {
  return parseCapsule(
    {
      format: CAPSULE_FORMAT,
      version: CAPSULE_VERSION,
      workflowApiVersion: WORKFLOW_API_VERSION,
      ...draft,
    },
    options,
  );
}
