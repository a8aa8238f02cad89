// Catalog state and names: the options resolved once into CatalogState, file names per entry kind,
// archive ids, root opening, entry descriptions, capsule reading and the checks before a write.
import { randomBytes } from './crypto.js';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowCapsule } from '@wf/bridge';
import { CatalogFsCode, CatalogFsError, type OperationError } from '../errors.js';
import type {
  CatalogEntry,
  CatalogEntryKind,
  CatalogLimits,
  CatalogScope,
} from '../catalog-types.js';
import {
  checkCapsuleBytes,
  checkCapsuleValue,
  isWorkflowName,
  serializeCapsule,
} from './capsule-text.js';
import {
  type ErrorCodes,
  openChildDir,
  openRootDir,
  readRegularFile,
  type SafeDir,
  withDir,
} from './safe-dir.js';

/** Everything a catalog instance knows, resolved once at open; the modules below take it first. */
export interface CatalogState {
  readonly limits: CatalogLimits;
  readonly allowSymlinkedRoot: boolean;
  readonly lockOptions: {
    readonly timeoutMs: number;
    readonly staleMs: number;
    readonly codes: typeof CODES;
  };
  readonly rootPaths: Record<CatalogScope, string | undefined>;
  /** Lookup order: project shadows personal. */
  readonly scopes: readonly CatalogScope[];
}

export const CODES: ErrorCodes & {
  busy: typeof CatalogFsCode.Busy;
  tooLarge: typeof CatalogFsCode.TooLarge;
} = {
  unsafe: CatalogFsCode.UnsafePath,
  io: CatalogFsCode.Io,
  busy: CatalogFsCode.Busy,
  tooLarge: CatalogFsCode.TooLarge,
};

export const CAPSULE_SUFFIX = '.workflow.json';
export const ARCHIVE_DIR = '.archive';
export const INTENT_PREFIX = '.wf-intent-';
export const SOURCE_KINDS = ['ts', 'mjs', 'js'] as const;
// Precedence within one directory: a capsule beats a source file; `.ts` > `.mjs` > `.js`.
export const KIND_RANK: Record<CatalogEntryKind, number> = { capsule: 0, ts: 1, mjs: 2, js: 3 };
export const ARCHIVE_PATTERN = /^(.+)--(\d{8}T\d{9}Z)-([0-9a-f]{8})\.workflow\.json$/;

export function fileName(name: string, kind: CatalogEntryKind): string {
  return kind === 'capsule' ? `${name}${CAPSULE_SUFFIX}` : `${name}.${kind}`;
}

export function parseFileName(file: string): { base: string; kind: CatalogEntryKind } | undefined {
  if (file.startsWith('.')) return undefined;
  if (file.endsWith(CAPSULE_SUFFIX))
    return { base: file.slice(0, -CAPSULE_SUFFIX.length), kind: 'capsule' };
  if (file.endsWith('.d.ts')) return undefined;
  for (const kind of SOURCE_KINDS) {
    if (file.endsWith(`.${kind}`)) return { base: file.slice(0, -(kind.length + 1)), kind };
  }
  return undefined;
}

export function archiveStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:.]/g, '');
}

export function stampToIso(stamp: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(stamp);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : stamp;
}

export function newArchiveName(name: string): string {
  return `${name}--${archiveStamp()}-${randomBytes(4).toString('hex')}${CAPSULE_SUFFIX}`;
}

export function invalidName(name: unknown): CatalogFsError {
  return new CatalogFsError(
    CatalogFsCode.InvalidName,
    `workflow name ${JSON.stringify(String(name)).slice(0, 80)} is not strict kebab-case (a lowercase letter, then up to 63 of a-z, 0-9 and "-")`,
  );
}

export async function inode(path: string): Promise<number | undefined> {
  try {
    const st = await fsp.lstat(path);
    return st.ino;
  } catch {
    return undefined;
  }
}

export async function unlinkQuiet(path: string): Promise<void> {
  await fsp.unlink(path).catch(() => undefined);
}
/** Opens (creating) a root's `.archive` directory, where every replaced or deleted version goes. */
export async function openArchiveDir(root: SafeDir): Promise<SafeDir> {
  const archive = await openChildDir(root, ARCHIVE_DIR, { create: true, codes: CODES });
  if (!archive) throw new CatalogFsError(CatalogFsCode.Io, `could not open ${root.path}/.archive`);
  return archive;
}

/** Rollback of a publish that failed after archiving: the live version stays, its copy goes. */
export async function dropArchived(archive: SafeDir, archived: string): Promise<void> {
  await unlinkQuiet(archive.at(archived));
  await archive.sync();
}

export async function openRoot(
  c: CatalogState,
  scope: CatalogScope,
  create: boolean,
): Promise<SafeDir | undefined> {
  const path = c.rootPaths[scope];
  if (path === undefined) {
    throw new CatalogFsError(
      CatalogFsCode.Unsupported,
      `no ${scope} catalog directory is configured`,
    );
  }
  return openRootDir(path, {
    create,
    allowSymlinkedRoot: c.allowSymlinkedRoot,
    codes: CODES,
    label: `${scope} catalog root`,
  });
}

export function entryFor(
  scope: CatalogScope,
  root: SafeDir,
  name: string,
  kind: CatalogEntryKind,
  problem?: { code: OperationError['code']; message: string },
): CatalogEntry {
  return {
    name,
    scope,
    execution: kind === 'capsule' ? 'capability-generated' : 'trusted-local',
    kind,
    path: join(root.path, fileName(name, kind)),
    valid: problem === undefined,
    ...(problem ? { error: problem.message, errorCode: problem.code } : {}),
  };
}

/** Reads and validates one capsule file; the data form of every way it can be bad. */
export async function readCapsule(
  c: CatalogState,
  root: SafeDir,
  name: string,
): Promise<
  | { ok: true; capsule: WorkflowCapsule; ino: number }
  | { ok: false; code: OperationError['code']; message: string }
  | undefined
> {
  let file: Awaited<ReturnType<typeof readRegularFile>>;
  try {
    file = await readRegularFile(root, fileName(name, 'capsule'), c.limits.maxCapsuleBytes, CODES);
  } catch (error) {
    if (CatalogFsError.is(error)) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
  if (!file) return undefined;
  const checked = checkCapsuleBytes(file.data, name, c.limits.manifest);
  return checked.ok
    ? { ok: true, capsule: checked.capsule, ino: file.ino }
    : { ok: false, code: CatalogFsCode.InvalidCapsule, message: checked.message };
}

export async function locate(
  c: CatalogState,
  name: string,
  scope: CatalogScope | undefined,
): Promise<{ scope: CatalogScope; kind: CatalogEntryKind } | undefined> {
  for (const s of scope ? [scope] : c.scopes) {
    const found = await withDir(await openRoot(c, s, false), async (root) => {
      for (const kind of ['capsule', ...SOURCE_KINDS] as CatalogEntryKind[]) {
        const st = await fsp.lstat(root.at(fileName(name, kind))).catch(() => undefined);
        if (st) return kind;
      }
      return undefined;
    });
    if (found) return { scope: s, kind: found };
  }
  return undefined;
}

export async function countCapsules(root: SafeDir): Promise<number> {
  const names = await fsp.readdir(root.self);
  return names.filter((n) => !n.startsWith('.') && n.endsWith(CAPSULE_SUFFIX)).length;
}

export function prepare(c: CatalogState, name: string, capsule: unknown) {
  if (!isWorkflowName(name)) throw invalidName(name);
  const checked = checkCapsuleValue(capsule, name, c.limits.manifest);
  if (!checked.ok) throw new CatalogFsError(CatalogFsCode.InvalidCapsule, checked.message);
  const text = serializeCapsule(checked.capsule);
  const bytes = Buffer.byteLength(text);
  if (bytes > c.limits.maxCapsuleBytes) {
    throw new CatalogFsError(
      CatalogFsCode.TooLarge,
      `capsule "${name}" is ${bytes} bytes, over the limit of ${c.limits.maxCapsuleBytes} bytes`,
    );
  }
  return text;
}
