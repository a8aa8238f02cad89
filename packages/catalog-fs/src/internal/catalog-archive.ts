// The archive: listing archived versions (newest first) and restoring one under its own or a new
// name. Restoring publishes a copy; the archived version is never removed.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { ArchivedEntry, CatalogEntry, CatalogScope } from '../catalog-types.js';
import {
  ARCHIVE_DIR,
  ARCHIVE_PATTERN,
  CAPSULE_SUFFIX,
  type CatalogState,
  CODES,
  invalidName,
  openRoot,
  prepare,
  stampToIso,
} from './catalog-names.js';
import { publish } from './catalog-publish.js';
import { checkCapsuleBytes, isWorkflowName } from './capsule-text.js';
import { openChildDir, readRegularFile, withDir } from './safe-dir.js';

export async function archivedEntries(
  c: CatalogState,
  filter: string | { readonly name?: string; readonly scope?: CatalogScope } = {},
): Promise<Result<{ entries: readonly ArchivedEntry[] }>> {
  try {
    const archiveOptions = typeof filter === 'string' ? { name: filter } : filter;
    if (archiveOptions.name !== undefined && !isWorkflowName(archiveOptions.name))
      throw invalidName(archiveOptions.name);
    const entries: ArchivedEntry[] = [];
    for (const scope of archiveOptions.scope ? [archiveOptions.scope] : c.scopes) {
      await withDir(await openRoot(c, scope, false), async (root) =>
        withDir(
          await openChildDir(root, ARCHIVE_DIR, { create: false, codes: CODES }),
          async (archive) => {
            const files = (await fsp.readdir(archive.self)).sort().reverse();
            for (const file of files) {
              const m = ARCHIVE_PATTERN.exec(file);
              if (!m) continue;
              const name = m[1]!;
              if (archiveOptions.name !== undefined && name !== archiveOptions.name) continue;
              if (entries.length >= c.limits.maxCatalogEntries) break;
              let problem: string | undefined;
              try {
                const raw = await readRegularFile(archive, file, c.limits.maxCapsuleBytes, CODES);
                if (!raw) continue;
                const checked = checkCapsuleBytes(raw.data, name, c.limits.manifest);
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
}

export async function restoreEntry(
  c: CatalogState,
  id: string,
  restoreOptions: {
    readonly scope?: CatalogScope;
    readonly as?: string;
    readonly replace?: boolean;
  } = {},
): Promise<Result<{ entry: CatalogEntry; archived?: string }>> {
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
    for (const scope of restoreOptions.scope ? [restoreOptions.scope] : c.scopes) {
      const capsule = await withDir(await openRoot(c, scope, false), async (root) =>
        withDir(
          await openChildDir(root, ARCHIVE_DIR, { create: false, codes: CODES }),
          async (archive) => {
            const raw = await readRegularFile(
              archive,
              `${id}${CAPSULE_SUFFIX}`,
              c.limits.maxCapsuleBytes,
              CODES,
            );
            if (!raw) return undefined;
            const checked = checkCapsuleBytes(raw.data, archivedName, c.limits.manifest);
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
      const text = prepare(c, target, {
        ...capsule,
        manifest: { ...capsule.manifest, name: target },
      });
      // The archived copy stays: restoring never destroys history.
      return {
        ok: true,
        ...(await publish(c, scope, target, text, restoreOptions.replace === true)),
      };
    }
    throw new CatalogFsError(CatalogFsCode.NotFound, `no archived version "${id}"`);
  } catch (error) {
    return fail(error);
  }
}
