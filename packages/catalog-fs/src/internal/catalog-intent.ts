// Rename intents: a rename publishes a record before it touches names, and opening a catalog
// replays any left by a crash (roll forward or back, see README "Recovery rules").
import { randomBytes } from './crypto.js';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { CatalogEntry, CatalogScope } from '../catalog-types.js';
import {
  ARCHIVE_DIR,
  CAPSULE_SUFFIX,
  type CatalogState,
  CODES,
  dropArchived,
  entryFor,
  fileName,
  INTENT_PREFIX,
  inode,
  invalidName,
  locate,
  newArchiveName,
  openArchiveDir,
  openRoot,
  prepare,
  readCapsule,
  unlinkQuiet,
} from './catalog-names.js';
import { isWorkflowName } from './capsule-text.js';
import { clearStaleBreaker, withLock } from './lock.js';
import {
  errno,
  ioError,
  isAbandonedTemp,
  openChildDir,
  readRegularFile,
  type SafeDir,
  step,
  TEMP_PREFIX,
  writeFileAtomic,
  writeTempFile,
} from './safe-dir.js';

/** The rename/delete intent record replayed at open (see README "Recovery rules"). */
interface RenameIntent {
  readonly op: 'rename';
  readonly from: string;
  readonly to: string;
  readonly temp: string;
  readonly archive: string;
}

export async function repairRoot(c: CatalogState, root: SafeDir): Promise<void> {
  await withLock(root, c.lockOptions, async () => {
    await clearStaleBreaker(root, c.lockOptions);
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
}

export async function replayIntent(root: SafeDir, file: string): Promise<void> {
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
        await dropArchived(archive, intent.archive);
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
}
export async function renameEntry(
  c: CatalogState,
  from: string,
  to: string,
  renameOptions: { readonly scope?: CatalogScope } = {},
): Promise<Result<{ entry: CatalogEntry; archived: string }>> {
  try {
    if (!isWorkflowName(from)) throw invalidName(from);
    if (!isWorkflowName(to)) throw invalidName(to);
    if (from === to)
      throw new CatalogFsError(CatalogFsCode.Exists, `"${from}" already has that name`);
    const found = await locate(c, from, renameOptions.scope);
    if (!found) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${from}"`);
    if (found.kind !== 'capsule') {
      throw new CatalogFsError(
        CatalogFsCode.Unsupported,
        `"${from}" is a trusted-local .${found.kind} file; rename it yourself`,
      );
    }
    const scope = found.scope;
    const root = await openRoot(c, scope, false);
    if (!root) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${from}"`);
    try {
      return await withLock(root, c.lockOptions, async () => {
        const current = await readCapsule(c, root, from);
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
        const text = prepare(c, to, renamed);
        const temp = await writeTempFile(root, text, 0o644, CODES);
        const archive = await openArchiveDir(root).catch(async (error: unknown) => {
          await unlinkQuiet(root.at(temp));
          throw error;
        });
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
            await dropArchived(archive, archived);
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
}
