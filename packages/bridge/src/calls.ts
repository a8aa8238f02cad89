// Input schemas of every host-crossing `wf` call, and `validateCall`, which the dispatcher runs
// before the engine sees a call (invariant 2: a guest call is validated before any effect).
import * as v from 'valibot';
import { ISOLATION_MODES, MODEL_HINTS, WORKFLOW_NAME_PATTERN } from './constants.js';
import { BRIDGE_ERROR_CODES } from './errors.js';
import { capIssues, type ValidationIssue } from './internal/issues.js';
import type { JsonValue } from './internal/json.js';
import { checkDocument } from './internal/run-schema.js';
import {
  boolean,
  got,
  list,
  nonNegativeInteger,
  objectLike,
  oneOf,
  plainObject,
  positiveInteger,
  text,
} from './internal/schema-kit.js';
import { WF_METHODS, type WfMethodName } from './methods.js';

/** Size bounds of call fields (the sandbox also caps each crossing as a whole). */
export const CALL_LIMITS = {
  /** A task name, phase name, artifact name, model or provider name. */
  maxNameChars: 200,
  /** A prompt, a rubric, a `send` text. */
  maxPromptChars: 1_000_000,
  /** A workspace-relative path. */
  maxPathChars: 4_096,
  /** `wait` timeout: about 24.8 days, the largest a host timer takes. */
  maxTimeoutMs: 2_147_483_647,
  /**
   * JSON values (nodes) in one call's input. invariant 6: validation runs on the host thread, in
   * time linear in the values, and a large input of small objects would hold that thread for
   * seconds. Past this bound the call fails `WF_BRIDGE_CALL_TOO_LARGE` before any schema runs.
   */
  maxNodes: 20_000,
} as const;

/** The evidence-ref prefixes a task may cite. */
export const EVIDENCE_PREFIXES = ['file:', 'diff:', 'finding:', 'task_id:'] as const;

const name = () => text(CALL_LIMITS.maxNameChars);
const long = () => text(CALL_LIMITS.maxPromptChars);
const taskId = () => text(CALL_LIMITS.maxNameChars);

const evidenceRef = v.pipe(
  v.string(got('must be a string')),
  v.check(
    (ref: string) =>
      EVIDENCE_PREFIXES.some((p) => ref.startsWith(p) && ref.trim().length > p.length),
    got(`must start with ${EVIDENCE_PREFIXES.join(', ')} followed by a reference`),
  ),
  v.maxLength(
    CALL_LIMITS.maxPathChars,
    got(`must be at most ${CALL_LIMITS.maxPathChars} characters`),
  ),
);

const verificationSchema = plainObject({
  enforcement: v.exactOptional(oneOf(['hard', 'warn'])),
  requiresMutation: v.exactOptional(boolean()),
  requiredChangedPaths: v.exactOptional(list(text(CALL_LIMITS.maxPathChars))),
  requiredReadPaths: v.exactOptional(list(text(CALL_LIMITS.maxPathChars))),
  minFinalTextChars: v.exactOptional(nonNegativeInteger()),
  rejectPreparatoryFinalText: v.exactOptional(boolean()),
});

// The engine validates with a full JSON Schema validator; here only the root shape is fixed.
const outputSchemaSchema = v.pipe(
  objectLike('a JSON Schema object'),
  v.check(
    (s: Record<string, unknown>) => s.type === 'object',
    (issue) =>
      `must have type "object" at the root (got type ${JSON.stringify((issue.input as { type?: unknown }).type) ?? 'undefined'})`,
  ),
);

/** The fields of a child task, as `spawnAgent` and `runAgent` take them. */
export const taskInputSchema = plainObject({
  name: name(),
  prompt: long(),
  phase: v.exactOptional(name()),
  scopeSummary: v.exactOptional(long()),
  constraints: v.exactOptional(list(long())),
  readOnly: v.exactOptional(boolean()),
  subagentType: v.exactOptional(name()),
  modelHint: v.exactOptional(oneOf(MODEL_HINTS)),
  provider: v.exactOptional(name()),
  model: v.exactOptional(name()),
  isolation: v.exactOptional(oneOf(ISOLATION_MODES)),
  effort: v.exactOptional(name()),
  maxTokens: v.exactOptional(positiveInteger()),
  evidenceRefs: v.exactOptional(list(evidenceRef)),
  verification: v.exactOptional(verificationSchema),
  outputSchema: v.exactOptional(outputSchemaSchema),
  terseResult: v.exactOptional(boolean()),
});

/** Every host call's input schema, keyed by method. Inputs are objects with exact keys. */
export const CALL_SCHEMAS = {
  // The prelude reports both edges of `wf.phase(name, fn)`, so events nest like the phases.
  phase: plainObject({ name: name(), state: oneOf(['started', 'completed']) }),
  spawnAgent: taskInputSchema,
  runAgent: taskInputSchema,
  wait: plainObject({
    taskId: taskId(),
    timeoutMs: v.exactOptional(
      v.pipe(
        positiveInteger(),
        v.maxValue(CALL_LIMITS.maxTimeoutMs, got(`must be at most ${CALL_LIMITS.maxTimeoutMs}`)),
      ),
    ),
  }),
  snapshot: plainObject({ taskId: taskId() }),
  output: plainObject({ taskId: taskId() }),
  send: plainObject({ taskId: taskId(), text: long() }),
  stop: plainObject({ taskId: taskId(), reason: v.exactOptional(text(CALL_LIMITS.maxPathChars)) }),
  synthesize: plainObject({
    inputs: v.unknown(),
    rubric: long(),
  }),
  workflow: plainObject({
    name: v.pipe(
      v.string(got('must be a string')),
      v.regex(WORKFLOW_NAME_PATTERN, got('must be a workflow name (kebab-case, 1-64 characters)')),
    ),
    args: v.exactOptional(v.unknown()),
  }),
  artifact: plainObject({ name: name(), value: v.unknown() }),
  log: plainObject({
    message: v.pipe(
      v.string(got('must be a string')),
      v.maxLength(
        CALL_LIMITS.maxPromptChars,
        got(`must be at most ${CALL_LIMITS.maxPromptChars} characters`),
      ),
    ),
    data: v.exactOptional(v.unknown()),
  }),
  readFile: plainObject({
    path: v.pipe(
      text(CALL_LIMITS.maxPathChars),
      v.check((p: string) => !p.includes('\0'), 'must not contain a NUL character'),
    ),
  }),
} as const satisfies Partial<Record<WfMethodName, v.GenericSchema>>;

export type HostCallName = keyof typeof CALL_SCHEMAS;

/** What the run knows when a call arrives, for the checks that depend on it. */
export interface CallContext {
  /** Task ids of this run; with it, a `task_id:` evidence ref must name one of them. */
  readonly taskIds?: { has(taskId: string): boolean };
}

export type ValidateCallResult =
  | { ok: true; value: JsonValue }
  | {
      ok: false;
      issues: ValidationIssue[];
      /** Set when the input has more than `CALL_LIMITS.maxNodes` values. */
      code?: typeof BRIDGE_ERROR_CODES.WF_BRIDGE_CALL_TOO_LARGE;
    };

const HOST_CALL_NAMES: ReadonlySet<string> = new Set(Object.keys(CALL_SCHEMAS));

/**
 * Validates one host call's input. Input must be plain JSON (checked first) and match the
 * method's schema exactly. Messages name the method and field:
 * `wf.runAgent: input.modelHint must be one of fast, balanced, deep (got "powerful")`.
 * Returns a fresh copy of the input.
 */
export function validateCall(
  method: string,
  input: unknown,
  context: CallContext = {},
): ValidateCallResult {
  if (!HOST_CALL_NAMES.has(method)) {
    const known = WF_METHODS.filter((m) => m.hostCall).map((m) => m.name);
    const member = WF_METHODS.find((m) => m.name === method);
    const why = member
      ? `is answered inside the sandbox, not by a host call`
      : `is not a wf method (host calls: ${known.join(', ')})`;
    return {
      ok: false,
      issues: [{ path: 'method', message: `wf.${String(method).slice(0, 64)} ${why}` }],
    };
  }
  const schema = CALL_SCHEMAS[method as HostCallName] as v.GenericSchema;
  const result = checkDocument(schema, input, {
    root: 'input',
    rootLabel: 'input',
    maxNodes: CALL_LIMITS.maxNodes,
  });
  const prefix = `wf.${method}: `;
  if (!result.ok) {
    const issues = result.issues.map((i) => ({ path: i.path, message: prefix + i.message }));
    return result.tooLarge
      ? { ok: false, issues, code: BRIDGE_ERROR_CODES.WF_BRIDGE_CALL_TOO_LARGE }
      : { ok: false, issues };
  }
  const issues: ValidationIssue[] = [];
  if ((method === 'spawnAgent' || method === 'runAgent') && context.taskIds !== undefined) {
    const refs = (result.copy as { evidenceRefs?: string[] }).evidenceRefs ?? [];
    refs.forEach((ref, index) => {
      if (!ref.startsWith('task_id:')) return;
      const id = ref.slice('task_id:'.length);
      if (!context.taskIds?.has(id)) {
        const path = `input.evidenceRefs[${index}]`;
        issues.push({
          path,
          message: `${prefix}${path} must name a task of this run (no task ${JSON.stringify(id.slice(0, 64))})`,
        });
      }
    });
  }
  if (issues.length > 0) return { ok: false, issues: capIssues(issues, 'input') };
  return { ok: true, value: result.copy };
}
