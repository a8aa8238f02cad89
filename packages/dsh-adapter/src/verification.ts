// Verification evidence for a finished child, as its task's `verification` asks: mutation
// evidence is a successful mutating tool call AND a changed git workspace fingerprint; read
// evidence is every string argument of successful read/grep/glob calls.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import type { VerificationRequest } from '@wf/engine';
import type { ChildToolCall } from './session-events.js';

/** Tools whose successful call counts as a mutation attempt. */
export const MUTATION_TOOLS: readonly string[] = [
  'write',
  'edit',
  'str_replace_editor',
  'bash',
  'pwsh',
];
/** Tools whose string arguments count as read paths. */
export const READ_TOOLS: readonly string[] = ['read', 'read_image', 'grep', 'glob'];
const PREPARATORY = /\b(i will|i'll|next,? i)\b|准备|接下来我会/i;

function git(cwd: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(
      'git',
      ['-C', cwd, ...args],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (error, stdout) => done(error ? undefined : (stdout as Buffer).toString('latin1')),
    );
  });
}

export interface WorkspaceFingerprint {
  /** sha256 over `git status --porcelain` and `git diff --binary HEAD`; undefined outside git. */
  readonly workspace: string | undefined;
  /** Per required path: sha256 of its bytes (or `absent`) and its git status line. */
  readonly paths: ReadonlyMap<string, string>;
}

/** Fingerprints a workspace (and the given paths) so a before/after pair shows change. */
export async function fingerprintWorkspace(
  cwd: string,
  paths: readonly string[] = [],
): Promise<WorkspaceFingerprint> {
  const [status, diff] = await Promise.all([
    git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all']),
    git(cwd, ['diff', '--binary', 'HEAD']),
  ]);
  const workspace =
    status === undefined
      ? undefined
      : createHash('sha256')
          .update(status)
          .update('\0')
          .update(diff ?? '')
          .digest('hex');
  const per = new Map<string, string>();
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let content = 'absent';
    try {
      content = createHash('sha256')
        .update(await readFile(abs))
        .digest('hex');
    } catch {
      // missing or unreadable counts as `absent`
    }
    const line =
      status === undefined ? '' : ((await git(cwd, ['status', '--porcelain=v1', '--', abs])) ?? '');
    per.set(p, `${content}:${line}`);
  }
  return { workspace, paths: per };
}

function stringLeaves(value: unknown, out: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out, depth + 1);
  else if (value && typeof value === 'object')
    for (const v of Object.values(value)) stringLeaves(v, out, depth + 1);
}

export interface Evidence {
  readonly readPaths: readonly string[];
  readonly mutationCalls: number;
}

export function collectEvidence(calls: readonly ChildToolCall[]): Evidence {
  const readPaths: string[] = [];
  let mutationCalls = 0;
  for (const c of calls) {
    if (!c.ok) continue;
    if (READ_TOOLS.includes(c.name)) stringLeaves(c.arguments, readPaths);
    if (MUTATION_TOOLS.includes(c.name)) mutationCalls += 1;
  }
  return { readPaths: [...new Set(readPaths)], mutationCalls };
}

const samePath = (cwd: string, a: string, b: string): boolean => {
  const ra = isAbsolute(a) ? a : resolve(cwd, a);
  const rb = isAbsolute(b) ? b : resolve(cwd, b);
  return ra === rb || relative(rb, ra) === '';
};

export interface VerificationOutcome {
  readonly ok: boolean;
  readonly reasons: readonly string[];
  readonly readPaths: readonly string[];
  readonly changedPaths: readonly string[];
}

/** Checks a child's evidence against its task's verification request. */
export function evaluateVerification(input: {
  readonly request: VerificationRequest;
  readonly cwd: string;
  readonly evidence: Evidence;
  readonly finalText: string;
  readonly before: WorkspaceFingerprint | undefined;
  readonly after: WorkspaceFingerprint | undefined;
}): VerificationOutcome {
  const { request, evidence, cwd, before, after } = input;
  const reasons: string[] = [];
  const changedPaths: string[] = [];
  for (const [p, fp] of before?.paths ?? []) if (after?.paths.get(p) !== fp) changedPaths.push(p);
  if (request.requiresMutation) {
    if (evidence.mutationCalls === 0) reasons.push('no successful write/edit/bash call');
    else if (before?.workspace !== undefined && after?.workspace !== undefined) {
      if (before.workspace === after.workspace) reasons.push('the git workspace did not change');
    } else reasons.push('mutation evidence unavailable: the workspace is not a git repository');
  }
  for (const p of request.requiredChangedPaths ?? [])
    if (!changedPaths.includes(p)) reasons.push(`required path was not changed: ${p}`);
  for (const p of request.requiredReadPaths ?? [])
    if (!evidence.readPaths.some((r) => samePath(cwd, r, p)))
      reasons.push(`required path was not read: ${p}`);
  if (
    request.minFinalTextChars !== undefined &&
    input.finalText.trim().length < request.minFinalTextChars
  )
    reasons.push(`final text is shorter than ${request.minFinalTextChars} characters`);
  if (request.rejectPreparatoryFinalText && PREPARATORY.test(input.finalText))
    reasons.push('final text announces work instead of reporting it');
  return { ok: reasons.length === 0, reasons, readPaths: evidence.readPaths, changedPaths };
}

/** Whether a request asks for anything that needs before/after fingerprints. */
export const needsFingerprint = (request: VerificationRequest | undefined): boolean =>
  !!request &&
  (request.requiresMutation === true || (request.requiredChangedPaths?.length ?? 0) > 0);
