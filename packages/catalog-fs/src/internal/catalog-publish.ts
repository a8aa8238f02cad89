// Publishing: create-only save by link (one winner among concurrent savers, invariant 8), replace
// by archive-then-swap under the root lock, and delete (archive first, then unlink).
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { CatalogEntry, CatalogScope, SaveOptions } from '../catalog-types.js';
import {
  CAPSULE_SUFFIX,
  type CatalogState,
  CODES,
  countCapsules,
  dropArchived,
  entryFor,
  fileName,
  invalidName,
  locate,
  newArchiveName,
  openArchiveDir,
  openRoot,
  prepare,
  unlinkQuiet,
} from './catalog-names.js';
import { isWorkflowName } from './capsule-text.js';
import { withLock } from './lock.js';
import { errno, ioError, step, writeTempFile } from './safe-dir.js';

/** Publishes `text` under `name`; create-only by link, or replace with archive swap. */
export async function publish(
  c: CatalogState,
  scope: CatalogScope,
  name: string,
  text: string,
  replace: boolean,
): Promise<{ entry: CatalogEntry; archived?: string }> {
  const root = await openRoot(c, scope, true);
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
    if (!existing && (await countCapsules(root)) >= c.limits.maxCatalogEntries) {
      throw new CatalogFsError(
        CatalogFsCode.Full,
        `the ${scope} catalog already holds ${c.limits.maxCatalogEntries} capsules (maxCatalogEntries)`,
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
      return await withLock(root, c.lockOptions, async () => {
        const archive = await openArchiveDir(root);
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
              await dropArchived(archive, archived);
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
}
export async function saveEntry(
  c: CatalogState,
  name: string,
  capsule: unknown,
  saveOptions: SaveOptions = {},
): Promise<Result<{ entry: CatalogEntry; archived?: string }>> {
  try {
    const text = prepare(c, name, capsule);
    return {
      ok: true,
      ...(await publish(
        c,
        saveOptions.scope ?? 'project',
        name,
        text,
        saveOptions.replace === true,
      )),
    };
  } catch (error) {
    return fail(error);
  }
}

export async function deleteEntry(
  c: CatalogState,
  name: string,
  deleteOptions: { readonly scope?: CatalogScope } = {},
): Promise<Result<{ archived: string }>> {
  try {
    if (!isWorkflowName(name)) throw invalidName(name);
    const found = await locate(c, name, deleteOptions.scope);
    if (!found) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${name}"`);
    if (found.kind !== 'capsule') {
      throw new CatalogFsError(
        CatalogFsCode.Unsupported,
        `"${name}" is a trusted-local .${found.kind} file; delete it yourself`,
      );
    }
    const root = await openRoot(c, found.scope, false);
    if (!root) throw new CatalogFsError(CatalogFsCode.NotFound, `no workflow named "${name}"`);
    try {
      return await withLock(root, c.lockOptions, async () => {
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
        const archive = await openArchiveDir(root);
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
}
