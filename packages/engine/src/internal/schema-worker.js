// Worker thread that compiles guest-supplied output schemas with ajv and validates answers against
// them, so ajv's code generation and validation never run on the host's event loop (invariant 6).
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { Ajv } from 'ajv';
import { RE2JS } from 're2js';

/**
 * ajv runs `pattern` / `patternProperties` regexes itself; a catastrophic pattern on a
 * backtracking engine would hold this worker until its timeout. RE2 matches in linear time.
 */
const linearRegExp = Object.assign(
  /** @param {string} pattern */
  (pattern) => {
    const re = RE2JS.compile(pattern);
    return { test: (/** @type {string} */ text) => re.test(text) };
  },
  { code: 'RE2JS' },
);

// addUsedSchema: false so a guest `$id` never registers across schemas; no loadSchema, so a
// remote `$ref` cannot fetch anything (it fails compilation instead).
const ajv = new Ajv({
  strict: false,
  allErrors: false,
  addUsedSchema: false,
  logger: false,
  code: { regExp: /** @type {never} */ (linearRegExp) },
});

/** @type {Map<string, import('ajv').ValidateFunction>} */
const cache = new Map();

/** @param {string} schemaText */
function compiled(schemaText) {
  const hit = cache.get(schemaText);
  if (hit) return hit;
  const validate = ajv.compile(JSON.parse(schemaText));
  if (cache.size >= 64) cache.clear();
  cache.set(schemaText, validate);
  return validate;
}

/** @param {import('ajv').ValidateFunction} validate */
function describe(validate) {
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

/**
 * @param {{ id: number; schema: string; value?: string }} job
 * @returns {{ id: number; ok: true } | { id: number; ok: false; stage: 'compile' | 'validate'; message: string }}
 */
function answer(job) {
  let validate;
  try {
    validate = compiled(job.schema);
  } catch (e) {
    return {
      id: job.id,
      ok: false,
      stage: 'compile',
      message: String(/** @type {Error} */ (e)?.message ?? e).slice(0, 300),
    };
  }
  if (job.value === undefined) return { id: job.id, ok: true };
  try {
    if (validate(JSON.parse(job.value))) return { id: job.id, ok: true };
    return { id: job.id, ok: false, stage: 'validate', message: describe(validate) };
  } catch (e) {
    // A recursive schema on a deep answer can exhaust this worker's stack.
    return {
      id: job.id,
      ok: false,
      stage: 'validate',
      message: `validation failed: ${String(/** @type {Error} */ (e)?.message ?? e).slice(0, 200)}`,
    };
  }
}

/** This thread's OS task id (Linux), so the host can bound a job in this thread's CPU time. */
function taskId() {
  try {
    const link = readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isSafeInteger(tid) ? tid : null;
  } catch {
    return null;
  }
}

parentPort?.postMessage({ ready: true, tid: taskId() });
parentPort?.on('message', (/** @type {{ id: number; schema: string; value?: string }} */ job) => {
  parentPort?.postMessage(answer(job));
});
