// The workflow catalog: discovery with precedence, and crash-safe save / replace / rename / delete /
// restore of `.workflow.json` capsules below a project and a personal root (invariants 8 and 10).
import { createHash, randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ManifestLimits, WorkflowCapsule } from '@wf/bridge';
import {
  CatalogFsCode,
  CatalogFsError,
  isCatalogFsError,
  type OperationError,
  type Result,
} from './errors.js';
import {
  checkCapsuleBytes,
  checkCapsuleValue,
  isWorkflowName,
  serializeCapsule,
} from './internal/capsule-text.js';
import { clearStaleBreaker, withLock } from './internal/lock.js';
import {
  type ErrorCodes,
  errno,
  ioError,
  isAbandonedTemp,
  openChildDir,
  openRootDir,
  readRegularFile,
  type SafeDir,
  step,
  TEMP_PREFIX,
  withDir,
  writeFileAtomic,
  writeTempFile,
} from './internal/safe-dir.js';

export type CatalogScope = 'project' | 'personal';
export type CatalogEntryKind = 'capsule' | 'ts' | 'mjs' | 'js';
export type CatalogExecution = 'capability-generated' | 'trusted-local';

export interface CatalogEntry {
  readonly name: string;
  readonly scope: CatalogScope;
  readonly execution: CatalogExecution;
  readonly kind: CatalogEntryKind;
  /** Absolute path of the file (for display; operations re-resolve from the root). */
  readonly path: string;
  /** False for an entry that can never be run; `error` says why. */
  readonly valid: boolean;
  readonly error?: string;
  readonly errorCode?: OperationError['code'];
}

export interface CatalogListing {
  readonly entries: readonly CatalogEntry[];
  /** True when more than `maxCatalogEntries` names were found. */
  readonly truncated: boolean;
  /** Roots that could not be read (a symlinked root, permissions...). */
  readonly problems: readonly { readonly scope: CatalogScope; readonly error: OperationError }[];
}

export interface ArchivedEntry {
  /** Stable id: the archive file name without `.workflow.json`. */
  readonly id: string;
  readonly name: string;
  readonly scope: CatalogScope;
  /** ISO time the version was archived. */
  readonly archivedAt: string;
  readonly path: string;
  readonly valid: boolean;
  readonly error?: string;
}

export interface CatalogLimits {
  /** Largest capsule file read or written, in bytes. Default 512 KiB. */
  readonly maxCapsuleBytes: number;
  /** Most entries `list()` returns, and most capsules one scope may hold. Default 200. */
  readonly maxCatalogEntries: number;
  /** Deployment ceilings passed to the capsule parser. */
  readonly manifest?: ManifestLimits;
}

export interface CatalogOptions {
  /** Project catalog directory, normally `<cwd>/.dsh/workflows`. */
  readonly project: string;
  /** Personal catalog directory, normally `$DSH_HOME/workflows` or `~/.dsh/workflows`. */
  readonly personal?: string;
  readonly limits?: Partial<CatalogLimits>;
  /** Accept roots reached through symlinks (their canonical path is used). Default false. */
  readonly allowSymlinkedRoot?: boolean;
  /** How long a mutation waits for another process's catalog lock. Default 10 s. */
  readonly lockTimeoutMs?: number;
}

export interface SaveOptions {
  readonly scope?: CatalogScope;
  /** Replace an existing capsule, archiving the old version. Default false (create-only). */
  readonly replace?: boolean;
}

export interface TrustedLocalModule {
  readonly entry: CatalogEntry;
  /** The module's `run(wf, args)` function. */
  readonly run: (...args: unknown[]) => unknown;
  /** The module's `manifest` or `meta` export, unvalidated (the caller applies its defaults). */
  readonly manifest: unknown;
  /** The URL it was imported from (with its content-hash cache-buster). */
  readonly url: string;
}

export interface Catalog {
  readonly roots: { readonly project: string; readonly personal?: string };
  list(): Promise<CatalogListing>;
  load(name: string): Promise<Result<{ entry: CatalogEntry; capsule?: WorkflowCapsule }>>;
  save(
    name: string,
    capsule: unknown,
    options?: SaveOptions,
  ): Promise<Result<{ entry: CatalogEntry; archived?: string }>>;
  rename(
    from: string,
    to: string,
    options?: { readonly scope?: CatalogScope },
  ): Promise<Result<{ entry: CatalogEntry; archived: string }>>;
  delete(
    name: string,
    options?: { readonly scope?: CatalogScope },
  ): Promise<Result<{ archived: string }>>;
  /** Archived versions, newest first; pass a name (or `{ name, scope }`) to filter. */
  archive(
    options?: string | { readonly name?: string; readonly scope?: CatalogScope },
  ): Promise<Result<{ entries: readonly ArchivedEntry[] }>>;
  restore(
    id: string,
    options?: { readonly scope?: CatalogScope; readonly as?: string; readonly replace?: boolean },
  ): Promise<Result<{ entry: CatalogEntry; archived?: string }>>;
  importTrustedLocal(
    entry: Pick<CatalogEntry, 'name' | 'scope' | 'kind'>,
    options?: { readonly confirmed?: boolean },
  ): Promise<Result<{ module: TrustedLocalModule }>>;
}

export const DEFAULT_CATALOG_LIMITS: CatalogLimits = {
  maxCapsuleBytes: 512 * 1024,
  maxCatalogEntries: 200,
};

const CODES: ErrorCodes & {
  busy: typeof CatalogFsCode.Busy;
  tooLarge: typeof CatalogFsCode.TooLarge;
} = {
  unsafe: CatalogFsCode.UnsafePath,
  io: CatalogFsCode.Io,
  busy: CatalogFsCode.Busy,
  tooLarge: CatalogFsCode.TooLarge,
};

const CAPSULE_SUFFIX = '.workflow.json';
const ARCHIVE_DIR = '.archive';
const INTENT_PREFIX = '.wf-intent-';
const SOURCE_KINDS = ['ts', 'mjs', 'js'] as const;
// Precedence within one directory: a capsule beats a source file; `.ts` > `.mjs` > `.js`.
const KIND_RANK: Record<CatalogEntryKind, number> = { capsule: 0, ts: 1, mjs: 2, js: 3 };
const ARCHIVE_PATTERN = /^(.+)--(\d{8}T\d{9}Z)-([0-9a-f]{8})\.workflow\.json$/;

function fileName(name: string, kind: CatalogEntryKind): string {
  return kind === 'capsule' ? `${name}${CAPSULE_SUFFIX}` : `${name}.${kind}`;
}

function parseFileName(file: string): { base: string; kind: CatalogEntryKind } | undefined {
  if (file.startsWith('.')) return undefined;
  if (file.endsWith(CAPSULE_SUFFIX))
    return { base: file.slice(0, -CAPSULE_SUFFIX.length), kind: 'capsule' };
  if (file.endsWith('.d.ts')) return undefined;
  for (const kind of SOURCE_KINDS) {
    if (file.endsWith(`.${kind}`)) return { base: file.slice(0, -(kind.length + 1)), kind };
  }
  return undefined;
}

function archiveStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:.]/g, '');
}

function stampToIso(stamp: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(stamp);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : stamp;
}

function newArchiveName(name: string): string {
  return `${name}--${archiveStamp()}-${randomBytes(4).toString('hex')}${CAPSULE_SUFFIX}`;
}

function fail(error: unknown): { ok: false; error: OperationError } {
  if (isCatalogFsError(error))
    return { ok: false, error: { code: error.code, message: error.message } };
  throw error;
}

function invalidName(name: unknown): CatalogFsError {
  return new CatalogFsError(
    CatalogFsCode.InvalidName,
    `workflow name ${JSON.stringify(String(name)).slice(0, 80)} is not strict kebab-case (a lowercase letter, then up to 63 of a-z, 0-9 and "-")`,
  );
}

/** The rename/delete intent record replayed at open (see README "Recovery rules"). */
interface RenameIntent {
  readonly op: 'rename';
  readonly from: string;
  readonly to: string;
  readonly temp: string;
  readonly archive: string;
}

async function inode(path: string): Promise<number | undefined> {
  try {
    const st = await fsp.lstat(path);
    return st.ino;
  } catch {
    return undefined;
  }
}

async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function unlinkQuiet(path: string): Promise<void> {
  await fsp.unlink(path).catch(() => undefined);
}

/**
 * Opens the catalog. At open, each existing root is repaired under its lock: interrupted renames
 * are rolled forward or back from their intent records, and abandoned temp files are removed.
 */
export async function openCatalog(options: CatalogOptions): Promise<Catalog> {
  if (typeof options?.project !== 'string' || options.project === '') {
    throw new TypeError('openCatalog: `project` must be the project catalog directory');
  }
  const limits: CatalogLimits = { ...DEFAULT_CATALOG_LIMITS, ...options.limits };
  const allowSymlinkedRoot = options.allowSymlinkedRoot === true;
  const lockOptions = { timeoutMs: options.lockTimeoutMs ?? 10_000, staleMs: 30_000, codes: CODES };
  const rootPaths: Record<CatalogScope, string | undefined> = {
    project: options.project,
    personal: options.personal,
  };
  const scopes: CatalogScope[] =
    options.personal === undefined ? ['project'] : ['project', 'personal'];

  const openRoot = async (scope: CatalogScope, create: boolean): Promise<SafeDir | undefined> => {
    const path = rootPaths[scope];
    if (path === undefined) {
      throw new CatalogFsError(
        CatalogFsCode.Unsupported,
        `no ${scope} catalog directory is configured`,
      );
    }
    return openRootDir(path, {
      create,
      allowSymlinkedRoot,
      codes: CODES,
      label: `${scope} catalog root`,
    });
  };

  const entryFor = (
    scope: CatalogScope,
    root: SafeDir,
    name: string,
    kind: CatalogEntryKind,
    problem?: { code: OperationError['code']; message: string },
  ): CatalogEntry => ({
    name,
    scope,
    execution: kind === 'capsule' ? 'capability-generated' : 'trusted-local',
    kind,
    path: join(root.path, fileName(name, kind)),
    valid: problem === undefined,
    ...(problem ? { error: problem.message, errorCode: problem.code } : {}),
  });

  /** Reads and validates one capsule file; the data form of every way it can be bad. */
  const readCapsule = async (
    root: SafeDir,
    name: string,
  ): Promise<
    | { ok: true; capsule: WorkflowCapsule; ino: number }
    | { ok: false; code: OperationError['code']; message: string }
    | undefined
  > => {
    let file: Awaited<ReturnType<typeof readRegularFile>>;
    try {
      file = await readRegularFile(root, fileName(name, 'capsule'), limits.maxCapsuleBytes, CODES);
    } catch (error) {
      if (isCatalogFsError(error)) return { ok: false, code: error.code, message: error.message };
      throw error;
    }
    if (!file) return undefined;
    const checked = checkCapsuleBytes(file.data, name, limits.manifest);
    return checked.ok
      ? { ok: true, capsule: checked.capsule, ino: file.ino }
      : { ok: false, code: CatalogFsCode.InvalidCapsule, message: checked.message };
  };

  /** The winning file per name in one root, with the kind and whether it is a regular file. */
  const scanRoot = async (root: SafeDir) => {
    const winners = new Map<
      string,
      { kind: CatalogEntryKind; regular: boolean; symlink: boolean }
    >();
    let dirents: import('node:fs').Dirent[];
    try {
      dirents = await fsp.readdir(root.self, { withFileTypes: true });
    } catch (error) {
      throw ioError(CODES, `reading ${root.path}`, error);
    }
    for (const d of dirents) {
      const parsed = parseFileName(d.name);
      if (!parsed) continue;
      const current = winners.get(parsed.base);
      if (current && KIND_RANK[current.kind] <= KIND_RANK[parsed.kind]) continue;
      winners.set(parsed.base, {
        kind: parsed.kind,
        regular: d.isFile(),
        symlink: d.isSymbolicLink(),
      });
    }
    return winners;
  };

  const repairRoot = async (root: SafeDir): Promise<void> => {
    await withLock(root, lockOptions, async () => {
      await clearStaleBreaker(root, lockOptions);
      const names = await fsp.readdir(root.self);
      for (const file of names) {
        if (!file.startsWith(INTENT_PREFIX)) continue;
        await replayIntent(root, file);
      }
      const now = Date.now();
      for (const file of names) {
        if (!file.startsWith(TEMP_PREFIX)) continue;
        const st = await fsp.lstat(root.at(file)).catch(() => undefined);
        if (st && isAbandonedTemp(file, st.mtimeMs, now)) await unlinkQuiet(root.at(file));
      }
      await root.sync();
    });
  };

  const replayIntent = async (root: SafeDir, file: string): Promise<void> => {
    let intent: RenameIntent | undefined;
    try {
      const raw = await readRegularFile(root, file, 64 * 1024, CODES);
      intent = raw ? (JSON.parse(raw.data.toString('utf8')) as RenameIntent) : undefined;
    } catch {
      intent = undefined;
    }
    // Intents are published by rename, so one that does not parse is not ours: drop it.
    if (
      intent?.op !== 'rename' ||
      ![intent.from, intent.to, intent.temp, intent.archive].every(
        (n) => typeof n === 'string' && !n.includes('/') && n !== '' && !n.startsWith('..'),
      )
    ) {
      await unlinkQuiet(root.at(file));
      return;
    }
    const archive = await openChildDir(root, ARCHIVE_DIR, { create: false, codes: CODES });
    try {
      const tempIno = await inode(root.at(intent.temp));
      const toIno = await inode(root.at(intent.to));
      const fromIno = await inode(root.at(intent.from));
      const archiveIno = archive ? await inode(archive.at(intent.archive)) : undefined;
      if (tempIno !== undefined && toIno !== tempIno) {
        // Crashed before the new name was published: roll back (the old name still resolves).
        await unlinkQuiet(root.at(intent.temp));
        if (archive && archiveIno !== undefined && fromIno === archiveIno) {
          await unlinkQuiet(archive.at(intent.archive));
          await archive.sync();
        }
      } else if (fromIno !== undefined && fromIno === archiveIno) {
        // The new name is published (or the temp is already gone): roll forward; the old
        // version is safe in the archive.
        await root.sync();
        await unlinkQuiet(root.at(intent.from));
        if (tempIno !== undefined) await unlinkQuiet(root.at(intent.temp));
      } else if (tempIno !== undefined) {
        await unlinkQuiet(root.at(intent.temp));
      }
      await root.sync();
      await unlinkQuiet(root.at(file));
      await root.sync();
    } finally {
      await archive?.close();
    }
  };

  for (const scope of scopes) {
    const root = await openRoot(scope, false).catch((error: unknown) => {
      // An unusable root is reported by list() and every operation; opening still succeeds.
      if (isCatalogFsError(error)) return undefined;
      throw error;
    });
    await withDir(root, repairRoot).catch((error: unknown) => {
      if (!isCatalogFsError(error)) throw error;
    });
  }

  const locate = async (
    name: string,
    scope: CatalogScope | undefined,
  ): Promise<{ scope: CatalogScope; kind: CatalogEntryKind } | undefined> => {
    for (const s of scope ? [scope] : scopes) {
      const found = await withDir(await openRoot(s, false), async (root) => {
        for (const kind of ['capsule', ...SOURCE_KINDS] as CatalogEntryKind[]) {
          const st = await fsp.lstat(root.at(fileName(name, kind))).catch(() => undefined);
          if (st) return kind;
        }
        return undefined;
      });
      if (found) return { scope: s, kind: found };
    }
    return undefined;
  };

  const countCapsules = async (root: SafeDir): Promise<number> => {
    const names = await fsp.readdir(root.self);
    return names.filter((n) => !n.startsWith('.') && n.endsWith(CAPSULE_SUFFIX)).length;
  };

  const prepare = (name: string, capsule: unknown) => {
    if (!isWorkflowName(name)) throw invalidName(name);
    const checked = checkCapsuleValue(capsule, name, limits.manifest);
    if (!checked.ok) throw new CatalogFsError(CatalogFsCode.InvalidCapsule, checked.message);
    const text = serializeCapsule(checked.capsule);
    const bytes = Buffer.byteLength(text);
    if (bytes > limits.maxCapsuleBytes) {
      throw new CatalogFsError(
        CatalogFsCode.TooLarge,
        `capsule "${name}" is ${bytes} bytes, over the limit of ${limits.maxCapsuleBytes} bytes`,
      );
    }
    return text;
  };

  /** Publishes `text` under `name`; create-only by link, or replace with archive swap. */
  const publish = async (
    scope: CatalogScope,
    name: string,
    text: string,
    replace: boolean,
  ): Promise<{ entry: CatalogEntry; archived?: string }> => {
    const root = await openRoot(scope, true);
    if (!root)
      throw new CatalogFsError(CatalogFsCode.Io, `could not create the ${scope} catalog root`);
    try {
      const target = fileName(name, 'capsule');
      const existing = await fsp.lstat(root.at(target)).catch(() => undefined);
      if (existing && !replace) {
        throw new CatalogFsError(
          CatalogFsCode.Exists,
          `workflow "${name}" already exists in the ${scope} catalog; save with replace: true to archive and replace it`,
        );
      }
      if (!existing && (await countCapsules(root)) >= limits.maxCatalogEntries) {
        throw new CatalogFsError(
          CatalogFsCode.Full,
          `the ${scope} catalog already holds ${limits.maxCatalogEntries} capsules (maxCatalogEntries)`,
        );
      }
      const temp = await writeTempFile(root, text, 0o644, CODES);
      try {
        if (!replace) {
          try {
            // invariant 8: link() publishes only if the name is free: one winner among N savers.
            await fsp.link(root.at(temp), root.at(target));
          } catch (error) {
            if (errno(error) === 'EEXIST') {
              throw new CatalogFsError(
                CatalogFsCode.Exists,
                `workflow "${name}" already exists in the ${scope} catalog (another save won); save with replace: true to replace it`,
              );
            }
            throw ioError(CODES, `publishing ${join(root.path, target)}`, error);
          }
          await root.sync();
          return { entry: entryFor(scope, root, name, 'capsule') };
        }
        return await withLock(root, lockOptions, async () => {
          const archive = await openChildDir(root, ARCHIVE_DIR, { create: true, codes: CODES });
          if (!archive)
            throw new CatalogFsError(CatalogFsCode.Io, `could not open ${root.path}/.archive`);
          try {
            for (let attempt = 0; attempt < 100; attempt++) {
              const st = await fsp.lstat(root.at(target)).catch(() => undefined);
              if (!st) {
                try {
                  await fsp.link(root.at(temp), root.at(target));
                  await root.sync();
                  return { entry: entryFor(scope, root, name, 'capsule') };
                } catch (error) {
                  // A create-only saver (which takes no lock) won the free name: archive it too.
                  if (errno(error) === 'EEXIST') continue;
                  throw ioError(CODES, `publishing ${join(root.path, target)}`, error);
                }
              }
              if (!st.isFile()) {
                throw new CatalogFsError(
                  CatalogFsCode.UnsafePath,
                  `${join(root.path, target)} is not a regular file; refusing to replace it`,
                );
              }
              const archived = newArchiveName(name);
              try {
                // Keep the old version first (a hard link, so the live name never disappears).
                await fsp.link(root.at(target), archive.at(archived));
              } catch (error) {
                if (errno(error) === 'ENOENT') continue;
                throw ioError(CODES, `archiving ${join(root.path, target)}`, error);
              }
              await archive.sync();
              try {
                await step('replace-publish');
                await fsp.rename(root.at(temp), root.at(target));
              } catch (error) {
                // Rollback: the old version is still live; the archive copy is redundant.
                await unlinkQuiet(archive.at(archived));
                await archive.sync();
                throw ioError(CODES, `replacing ${join(root.path, target)}`, error);
              }
              await root.sync();
              return {
                entry: entryFor(scope, root, name, 'capsule'),
                archived: archived.slice(0, -CAPSULE_SUFFIX.length),
              };
            }
            throw new CatalogFsError(
              CatalogFsCode.Busy,
              `workflow "${name}" kept changing while it was replaced`,
            );
          } finally {
            await archive.close();
          }
        });
      } finally {
        await unlinkQuiet(root.at(temp));
      }
    } finally {
      await root.close();
    }
  };

  const catalog: Catalog = {
    roots:
      options.personal === undefined
        ? { project: options.project }
        : { project: options.project, personal: options.personal },

    async list() {
      const byName = new Map<
        string,
        {
          scope: CatalogScope;
          kind: CatalogEntryKind;
          regular: boolean;
          symlink: boolean;
          root: string;
        }
      >();
      const problems: { scope: CatalogScope; error: OperationError }[] = [];
      const opened: Partial<Record<CatalogScope, SafeDir>> = {};
      try {
        for (const scope of scopes) {
          let root: SafeDir | undefined;
          try {
            root = await openRoot(scope, false);
            if (!root) continue;
            opened[scope] = root;
            const winners = await scanRoot(root);
            for (const [base, w] of winners) {
              // Project shadows personal: the first scope to claim a name keeps it.
              if (!byName.has(base)) byName.set(base, { scope, ...w, root: root.path });
            }
          } catch (error) {
            problems.push({ scope, error: fail(error).error });
          }
        }
        const names = [...byName.keys()].sort();
        const truncated = names.length > limits.maxCatalogEntries;
        const describe = async (name: string): Promise<CatalogEntry | undefined> => {
          const found = byName.get(name)!;
          const root = opened[found.scope]!;
          if (!isWorkflowName(name)) {
            return entryFor(found.scope, root, name, found.kind, {
              code: CatalogFsCode.InvalidName,
              message: invalidName(name).message,
            });
          }
          if (found.symlink || !found.regular) {
            return entryFor(found.scope, root, name, found.kind, {
              code: CatalogFsCode.UnsafePath,
              message: `${join(root.path, fileName(name, found.kind))} is ${found.symlink ? 'a symbolic link' : 'not a regular file'}; catalog entries must be regular files`,
            });
          }
          if (found.kind === 'capsule') {
            const checked = await readCapsule(root, name);
            if (!checked) return undefined; // removed while listing
            return entryFor(
              found.scope,
              root,
              name,
              'capsule',
              checked.ok ? undefined : { code: checked.code, message: checked.message },
            );
          }
          // invariant 10: trusted-local files are listed, never imported during discovery.
          return entryFor(found.scope, root, name, found.kind);
        };
        // Reads overlap (bounded), so a large catalog is not one syscall round-trip per file.
        const listed = await mapBounded(names.slice(0, limits.maxCatalogEntries), 16, describe);
        const entries = listed.filter((e): e is CatalogEntry => e !== undefined);
        return { entries, truncated, problems };
      } finally {
        for (const root of Object.values(opened)) await root?.close();
      }
    },

    async load(name) {
      try {
        if (!isWorkflowName(name)) throw invalidName(name);
        const found = await locate(name, undefined);
        if (!found)
          throw new CatalogFsError(
            CatalogFsCode.NotFound,
            `no workflow named "${name}" in the catalog`,
          );
        const result = await withDir(await openRoot(found.scope, false), async (root) => {
          if (found.kind !== 'capsule') {
            const st = await fsp.lstat(root.at(fileName(name, found.kind)));
            if (!st.isFile()) {
              throw new CatalogFsError(
                CatalogFsCode.UnsafePath,
                `${join(root.path, fileName(name, found.kind))} is not a regular file`,
              );
            }
            return { entry: entryFor(found.scope, root, name, found.kind) };
          }
          const checked = await readCapsule(root, name);
          if (!checked)
            throw new CatalogFsError(
              CatalogFsCode.NotFound,
              `workflow "${name}" was removed while it was loaded`,
            );
          if (!checked.ok)
            throw new CatalogFsError(
              checked.code,
              `${join(root.path, fileName(name, 'capsule'))}: ${checked.message}`,
            );
          return { entry: entryFor(found.scope, root, name, 'capsule'), capsule: checked.capsule };
        });
        if (!result)
          throw new CatalogFsError(
            CatalogFsCode.NotFound,
            `no workflow named "${name}" in the catalog`,
          );
        return { ok: true, ...result };
      } catch (error) {
        return fail(error);
      }
    },

    async save(name, capsule, saveOptions = {}) {
      try {
        const text = prepare(name, capsule);
        return {
          ok: true,
          ...(await publish(
            saveOptions.scope ?? 'project',
            name,
            text,
            saveOptions.replace === true,
          )),
        };
      } catch (error) {
        return fail(error);
      }
    },

    async rename(from, to, renameOptions = {}) {
      try {
        if (!isWorkflowName(from)) throw invalidName(from);
        if (!isWorkflowName(to)) throw invalidName(to);
        if (from === to)
          throw new CatalogFsError(CatalogFsCode.Exists, `"${from}" already has that name`);
        const found = await locate(from, renameOptions.scope);
        if (!found) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${from}"`);
        if (found.kind !== 'capsule') {
          throw new CatalogFsError(
            CatalogFsCode.Unsupported,
            `"${from}" is a trusted-local .${found.kind} file; rename it yourself`,
          );
        }
        const scope = found.scope;
        const root = await openRoot(scope, false);
        if (!root) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${from}"`);
        try {
          return await withLock(root, lockOptions, async () => {
            const current = await readCapsule(root, from);
            if (!current)
              throw new CatalogFsError(
                CatalogFsCode.NotFound,
                `no workflow named "${from}" in the ${scope} catalog`,
              );
            if (!current.ok) throw new CatalogFsError(current.code, current.message);
            const fromFile = fileName(from, 'capsule');
            const toFile = fileName(to, 'capsule');
            if (await inode(root.at(toFile))) {
              throw new CatalogFsError(
                CatalogFsCode.Exists,
                `workflow "${to}" already exists in the ${scope} catalog`,
              );
            }
            const renamed = {
              ...current.capsule,
              manifest: { ...current.capsule.manifest, name: to },
            };
            const text = prepare(to, renamed);
            const temp = await writeTempFile(root, text, 0o644, CODES);
            const archive = await openChildDir(root, ARCHIVE_DIR, {
              create: true,
              codes: CODES,
            }).catch(async (error: unknown) => {
              await unlinkQuiet(root.at(temp));
              throw error;
            });
            if (!archive)
              throw new CatalogFsError(CatalogFsCode.Io, `could not open ${root.path}/.archive`);
            const intentFile = `${INTENT_PREFIX}${randomBytes(6).toString('hex')}.json`;
            let intentWritten = false;
            const archived = newArchiveName(from);
            try {
              try {
                await fsp.link(root.at(fromFile), archive.at(archived));
              } catch (error) {
                throw ioError(CODES, `archiving ${join(root.path, fromFile)}`, error);
              }
              await archive.sync();
              const intent: RenameIntent = {
                op: 'rename',
                from: fromFile,
                to: toFile,
                temp,
                archive: archived,
              };
              await writeFileAtomic(root, intentFile, JSON.stringify(intent), 0o644, CODES);
              intentWritten = true;
              try {
                await step('rename-publish');
                await fsp.link(root.at(temp), root.at(toFile));
              } catch (error) {
                await unlinkQuiet(archive.at(archived));
                await archive.sync();
                if (errno(error) === 'EEXIST') {
                  throw new CatalogFsError(
                    CatalogFsCode.Exists,
                    `workflow "${to}" already exists in the ${scope} catalog`,
                  );
                }
                throw ioError(CODES, `publishing ${join(root.path, toFile)}`, error);
              }
              // From here the intent rolls forward: the new name is durable before the old goes.
              await root.sync();
              await fsp.unlink(root.at(fromFile)).catch((error: unknown) => {
                if (errno(error) !== 'ENOENT')
                  throw ioError(CODES, `removing ${join(root.path, fromFile)}`, error);
              });
              await root.sync();
              return {
                ok: true as const,
                entry: entryFor(scope, root, to, 'capsule'),
                archived: archived.slice(0, -CAPSULE_SUFFIX.length),
              };
            } finally {
              await unlinkQuiet(root.at(temp));
              if (intentWritten) {
                await root.sync();
                await unlinkQuiet(root.at(intentFile));
              }
              await root.sync();
              await archive.close();
            }
          });
        } finally {
          await root.close();
        }
      } catch (error) {
        return fail(error);
      }
    },

    async delete(name, deleteOptions = {}) {
      try {
        if (!isWorkflowName(name)) throw invalidName(name);
        const found = await locate(name, deleteOptions.scope);
        if (!found) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${name}"`);
        if (found.kind !== 'capsule') {
          throw new CatalogFsError(
            CatalogFsCode.Unsupported,
            `"${name}" is a trusted-local .${found.kind} file; delete it yourself`,
          );
        }
        const root = await openRoot(found.scope, false);
        if (!root) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${name}"`);
        try {
          return await withLock(root, lockOptions, async () => {
            const file = fileName(name, 'capsule');
            const st = await fsp.lstat(root.at(file)).catch(() => undefined);
            if (!st)
              throw new CatalogFsError(
                CatalogFsCode.NotFound,
                `no workflow named "${name}" in the ${found.scope} catalog`,
              );
            if (!st.isFile()) {
              throw new CatalogFsError(
                CatalogFsCode.UnsafePath,
                `${join(root.path, file)} is not a regular file; remove it yourself`,
              );
            }
            const archive = await openChildDir(root, ARCHIVE_DIR, { create: true, codes: CODES });
            if (!archive)
              throw new CatalogFsError(CatalogFsCode.Io, `could not open ${root.path}/.archive`);
            try {
              const archived = newArchiveName(name);
              // Archive first: a crash between the two steps leaves the capsule live and archived.
              try {
                await fsp.link(root.at(file), archive.at(archived));
              } catch (error) {
                throw ioError(CODES, `archiving ${join(root.path, file)}`, error);
              }
              await archive.sync();
              try {
                await step('delete-unlink');
                await fsp.unlink(root.at(file));
              } catch (error) {
                await unlinkQuiet(archive.at(archived));
                throw ioError(CODES, `removing ${join(root.path, file)}`, error);
              }
              await root.sync();
              return { ok: true as const, archived: archived.slice(0, -CAPSULE_SUFFIX.length) };
            } finally {
              await archive.close();
            }
          });
        } finally {
          await root.close();
        }
      } catch (error) {
        return fail(error);
      }
    },

    async archive(filter = {}) {
      try {
        const archiveOptions = typeof filter === 'string' ? { name: filter } : filter;
        if (archiveOptions.name !== undefined && !isWorkflowName(archiveOptions.name))
          throw invalidName(archiveOptions.name);
        const entries: ArchivedEntry[] = [];
        for (const scope of archiveOptions.scope ? [archiveOptions.scope] : scopes) {
          await withDir(await openRoot(scope, false), async (root) =>
            withDir(
              await openChildDir(root, ARCHIVE_DIR, { create: false, codes: CODES }),
              async (archive) => {
                const files = (await fsp.readdir(archive.self)).sort().reverse();
                for (const file of files) {
                  const m = ARCHIVE_PATTERN.exec(file);
                  if (!m) continue;
                  const name = m[1]!;
                  if (archiveOptions.name !== undefined && name !== archiveOptions.name) continue;
                  if (entries.length >= limits.maxCatalogEntries) break;
                  let problem: string | undefined;
                  try {
                    const raw = await readRegularFile(archive, file, limits.maxCapsuleBytes, CODES);
                    if (!raw) continue;
                    const checked = checkCapsuleBytes(raw.data, name, limits.manifest);
                    if (!checked.ok) problem = checked.message;
                  } catch (error) {
                    problem = fail(error).error.message;
                  }
                  entries.push({
                    id: file.slice(0, -CAPSULE_SUFFIX.length),
                    name,
                    scope,
                    archivedAt: stampToIso(m[2]!),
                    path: join(archive.path, file),
                    valid: problem === undefined,
                    ...(problem === undefined ? {} : { error: problem }),
                  });
                }
              },
            ),
          );
        }
        entries.sort((a, b) =>
          a.archivedAt < b.archivedAt ? 1 : a.archivedAt > b.archivedAt ? -1 : 0,
        );
        return { ok: true, entries };
      } catch (error) {
        return fail(error);
      }
    },

    async restore(id, restoreOptions = {}) {
      try {
        const m = typeof id === 'string' ? ARCHIVE_PATTERN.exec(`${id}${CAPSULE_SUFFIX}`) : null;
        if (!m || id.includes('/'))
          throw new CatalogFsError(
            CatalogFsCode.NotFound,
            `"${String(id).slice(0, 120)}" is not an archived version id`,
          );
        const archivedName = m[1]!;
        const target = restoreOptions.as ?? archivedName;
        if (!isWorkflowName(target)) throw invalidName(target);
        for (const scope of restoreOptions.scope ? [restoreOptions.scope] : scopes) {
          const capsule = await withDir(await openRoot(scope, false), async (root) =>
            withDir(
              await openChildDir(root, ARCHIVE_DIR, { create: false, codes: CODES }),
              async (archive) => {
                const raw = await readRegularFile(
                  archive,
                  `${id}${CAPSULE_SUFFIX}`,
                  limits.maxCapsuleBytes,
                  CODES,
                );
                if (!raw) return undefined;
                const checked = checkCapsuleBytes(raw.data, archivedName, limits.manifest);
                if (!checked.ok)
                  throw new CatalogFsError(
                    CatalogFsCode.InvalidCapsule,
                    `archived version ${id}: ${checked.message}`,
                  );
                return checked.capsule;
              },
            ),
          );
          if (!capsule) continue;
          const text = prepare(target, {
            ...capsule,
            manifest: { ...capsule.manifest, name: target },
          });
          // The archived copy stays: restoring never destroys history.
          return {
            ok: true,
            ...(await publish(scope, target, text, restoreOptions.replace === true)),
          };
        }
        throw new CatalogFsError(CatalogFsCode.NotFound, `no archived version "${id}"`);
      } catch (error) {
        return fail(error);
      }
    },

    async importTrustedLocal(entry, importOptions = {}) {
      try {
        if (importOptions.confirmed !== true) {
          throw new CatalogFsError(
            CatalogFsCode.ConfirmationRequired,
            `importing trusted-local "${String(entry?.name)}" runs it with full Node authority; pass { confirmed: true } after the user confirmed`,
          );
        }
        const { name, scope, kind } = entry;
        if (!isWorkflowName(name)) throw invalidName(name);
        if (kind !== 'ts' && kind !== 'mjs' && kind !== 'js') {
          throw new CatalogFsError(
            CatalogFsCode.Unsupported,
            `"${name}" is a ${String(kind)} entry, not a trusted-local source file`,
          );
        }
        // Re-resolve from the root: the entry's `path` is display data, not trusted.
        const loaded = await withDir(await openRoot(scope, false), async (root) => {
          const file = fileName(name, kind);
          const raw = await readRegularFile(root, file, 16 * 1024 * 1024, CODES);
          if (!raw)
            throw new CatalogFsError(
              CatalogFsCode.NotFound,
              `${join(root.path, file)} does not exist`,
            );
          // Cache-busting by content hash: an edited file is a new module, an unchanged one is
          // served from Node's module cache (so repeated imports do not grow it).
          const version = createHash('sha256').update(raw.data).digest('hex').slice(0, 16);
          const url = `${pathToFileURL(join(root.path, file)).href}?v=${version}`;
          return { url, entry: entryFor(scope, root, name, kind) };
        });
        if (!loaded)
          throw new CatalogFsError(CatalogFsCode.NotFound, `no ${scope} catalog directory`);
        let mod: Record<string, unknown>;
        try {
          mod = (await import(loaded.url)) as Record<string, unknown>;
        } catch (error) {
          const code = errno(error);
          const hint =
            code === 'ERR_UNKNOWN_FILE_EXTENSION' && kind === 'ts'
              ? ` (Node ${process.versions.node} cannot import .ts files; use Node >= 22.18, run under a TypeScript loader such as tsx, or save it as .mjs)`
              : '';
          throw new CatalogFsError(
            CatalogFsCode.ImportFailed,
            `importing ${loaded.entry.path} failed: ${error instanceof Error ? error.message : String(error)}${hint}`,
            { cause: error },
          );
        }
        const def = mod.default as Record<string, unknown> | undefined;
        const source = def && typeof def === 'object' && typeof def.run === 'function' ? def : mod;
        if (typeof source.run !== 'function') {
          throw new CatalogFsError(
            CatalogFsCode.ImportFailed,
            `${loaded.entry.path} exports no run function (export default { manifest, run } or named manifest/meta and run)`,
          );
        }
        return {
          ok: true,
          module: {
            entry: loaded.entry,
            run: source.run as (...args: unknown[]) => unknown,
            manifest: source.manifest ?? source.meta,
            url: loaded.url,
          },
        };
      } catch (error) {
        return fail(error);
      }
    },
  };
  return catalog;
}
