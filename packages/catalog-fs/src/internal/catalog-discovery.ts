// Discovery: listing both roots with precedence (project shadows personal; in one directory a
// capsule beats .ts > .mjs > .js) and loading one entry. Never imports trusted-local code.
import { type Dirent, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowCapsule } from '@wf/bridge';
import { CatalogFsCode, CatalogFsError, type OperationError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type {
  CatalogEntry,
  CatalogEntryKind,
  CatalogListing,
  CatalogScope,
} from '../catalog-types.js';
import {
  type CatalogState,
  CODES,
  entryFor,
  fileName,
  invalidName,
  KIND_RANK,
  locate,
  openRoot,
  parseFileName,
  readCapsule,
} from './catalog-names.js';
import { isWorkflowName } from './capsule-text.js';
import { mapBounded } from './map-bounded.js';
import { ioError, type SafeDir, withDir } from './safe-dir.js';

/** The winning file per name in one root, with the kind and whether it is a regular file. */
export async function scanRoot(root: SafeDir) {
  const winners = new Map<string, { kind: CatalogEntryKind; regular: boolean; symlink: boolean }>();
  let dirents: Dirent[];
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
}
export async function listEntries(c: CatalogState): Promise<CatalogListing> {
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
    for (const scope of c.scopes) {
      let root: SafeDir | undefined;
      try {
        root = await openRoot(c, scope, false);
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
    const truncated = names.length > c.limits.maxCatalogEntries;
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
        const checked = await readCapsule(c, root, name);
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
    const listed = await mapBounded(names.slice(0, c.limits.maxCatalogEntries), 16, describe);
    const entries = listed.filter((e): e is CatalogEntry => e !== undefined);
    return { entries, truncated, problems };
  } finally {
    for (const root of Object.values(opened)) await root?.close();
  }
}

export async function loadEntry(
  c: CatalogState,
  name: string,
): Promise<Result<{ entry: CatalogEntry; capsule?: WorkflowCapsule }>> {
  try {
    if (!isWorkflowName(name)) throw invalidName(name);
    const found = await locate(c, name, undefined);
    if (!found)
      throw new CatalogFsError(
        CatalogFsCode.NotFound,
        `no workflow named "${name}" in the catalog`,
      );
    const result = await withDir(await openRoot(c, found.scope, false), async (root) => {
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
      const checked = await readCapsule(c, root, name);
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
}
