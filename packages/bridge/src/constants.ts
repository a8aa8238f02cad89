// The fixed vocabulary of the dsh.workflow v1 format: names every other module and package checks against.

/** The `format` of every capsule. */
export const CAPSULE_FORMAT = 'dsh.workflow' as const;
/** The capsule format version this package reads and writes. */
export const CAPSULE_VERSION = 1 as const;
/** The `wf` API version capsules are written against. */
export const WORKFLOW_API_VERSION = 1 as const;

/** A workflow name: kebab-case, 1 to 64 characters, starting with a letter. */
export const WORKFLOW_NAME_PATTERN: RegExp = /^[a-z][a-z0-9-]{0,63}$/;

/** The closed vocabulary of `manifest.patterns` (the six orchestration patterns). */
export const PATTERN_IDS = [
  'classify-and-act',
  'fan-out-and-synthesize',
  'adversarial-verification',
  'generate-and-filter',
  'tournament',
  'loop-until-done',
] as const;
export type PatternId = (typeof PATTERN_IDS)[number];

/** Model tiers a task may ask for and a capsule may require. */
export const MODEL_HINTS = ['fast', 'balanced', 'deep'] as const;
export type ModelHint = (typeof MODEL_HINTS)[number];

/** Environment requirements a capsule may declare. */
export const ENVIRONMENT_REQUIREMENTS = ['git-repo', 'worktree-capable'] as const;
export type EnvironmentRequirement = (typeof ENVIRONMENT_REQUIREMENTS)[number];

/** Task isolation modes. */
export const ISOLATION_MODES = ['shared-cwd', 'worktree'] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];

/** Structural bounds every parser applies, so a hostile document cannot make validation expensive. */
export const DOCUMENT_LIMITS = {
  /** Maximum nesting of any JSON document or args value (objects and arrays). */
  maxDepth: 64,
  /** Maximum characters of a capsule's `source`. */
  maxSourceChars: 1_048_576,
  /** Maximum characters of a short text field (names, descriptions, phases, versions). */
  maxTextChars: 16_384,
  /** Maximum items of a list field (phases, patterns, tools, examples ...). */
  maxListItems: 256,
  /** Maximum issues reported for one document; the last one says how many were left off. */
  maxIssues: 100,
} as const;
