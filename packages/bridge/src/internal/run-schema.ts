// Runs the plain-JSON walk and a valibot schema together, so one report lists every issue once.
import * as v from 'valibot';
import { capIssues, fromValibot, type ValidationIssue } from './issues.js';
import { checkPlainJson, type JsonCheckOptions, type JsonValue } from './json.js';

export type DocumentResult<T> =
  | { ok: true; value: T; copy: JsonValue }
  | { ok: false; issues: ValidationIssue[]; tooLarge?: boolean };

function under(path: string, prefix: string): boolean {
  if (prefix === path) return true;
  if (!path.startsWith(prefix)) return false;
  const next = path[prefix.length];
  return next === '.' || next === '[';
}

/**
 * Checks `value` is plain JSON, then checks the (null-patched) copy against `schema`. Schema issues
 * at or below a path the JSON walk already refused are left out: the walk's message is the cause.
 */
export function checkDocument<T>(
  schema: v.GenericSchema<unknown, T>,
  value: unknown,
  json: JsonCheckOptions & { rootLabel: string },
): DocumentResult<T> {
  const plain = checkPlainJson(value, json);
  // Past maxNodes nothing more is inspected: the schema is not run on a value this large.
  if (!plain.ok && plain.tooLarge) return { ok: false, issues: plain.issues, tooLarge: true };
  const subject = plain.ok ? plain.value : plain.partial;
  const result = v.safeParse(schema, subject);
  if (plain.ok && result.success) return { ok: true, value: result.output, copy: plain.value };
  const issues: ValidationIssue[] = plain.ok ? [] : [...plain.issues];
  const refused = issues.map((i) => i.path);
  if (!result.success) {
    for (const issue of fromValibot(json.root, json.rootLabel, result.issues)) {
      if (!refused.some((prefix) => under(issue.path, prefix))) issues.push(issue);
    }
  }
  return { ok: false, issues: capIssues(issues, json.root || json.rootLabel) };
}
