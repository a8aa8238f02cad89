// Turns valibot issues and our own walk results into `{ path, message }` issues that name where and what.
import type * as v from 'valibot';
import { DOCUMENT_LIMITS } from '../constants.js';
import type { ValidationIssue } from '../validation-issue.js';

export type { ValidationIssue };

export type PathKey = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Formats a path: `root.key`, `root[3]`, `root["odd key"]`; a bare first key when root is empty. */
export function formatPath(root: string, keys: readonly PathKey[]): string {
  let out = root;
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}...` : key)}]`;
  }
  return out;
}

/** A short, safe rendering of an offending value for a message (never the whole value). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    return String(value);
  }
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Converts valibot issues (already carrying our predicate messages) into path-named issues (uncapped). */
export function fromValibot(
  root: string,
  rootLabel: string,
  issues: readonly v.BaseIssue<unknown>[],
): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const keys: PathKey[] = [];
    for (const item of issue.path ?? []) {
      const key = (item as { key?: unknown }).key;
      if (typeof key === 'string' || typeof key === 'number') keys.push(key);
    }
    const path = formatPath(root, keys) || rootLabel;
    const message = `${path} ${issue.message}`;
    // A union of pipes can report the same fact twice; say it once.
    if (seen.has(message)) continue;
    seen.add(message);
    out.push({ path, message });
  }
  return out;
}

/** Bounds the issue list so a hostile document cannot produce an unbounded report. */
export function capIssues(issues: ValidationIssue[], root: string): ValidationIssue[] {
  const max = DOCUMENT_LIMITS.maxIssues;
  if (issues.length <= max) return issues;
  const kept = issues.slice(0, max - 1);
  kept.push({
    path: root,
    message: `${root}: ${issues.length - kept.length} more issues were left off`,
  });
  return kept;
}
