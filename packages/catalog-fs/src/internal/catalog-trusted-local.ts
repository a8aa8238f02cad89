// Trusted-local import: only on an explicit confirmation (invariant 10), re-resolved from the root
// (an entry's path is display data) and cache-busted by content hash.
import { createHash } from './crypto.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CatalogFsCode, CatalogFsError, type Result } from '../errors.js';
import { fail } from './failure.js';
import type { CatalogEntry, TrustedLocalModule } from '../catalog-types.js';
import {
  type CatalogState,
  CODES,
  entryFor,
  fileName,
  invalidName,
  openRoot,
} from './catalog-names.js';
import { isWorkflowName } from './capsule-text.js';
import { errno, readRegularFile, withDir } from './safe-dir.js';

export async function importTrustedLocal(
  c: CatalogState,
  entry: Pick<CatalogEntry, 'name' | 'scope' | 'kind'>,
  importOptions: { readonly confirmed?: boolean } = {},
): Promise<Result<{ module: TrustedLocalModule }>> {
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
    const loaded = await withDir(await openRoot(c, scope, false), async (root) => {
      const file = fileName(name, kind);
      const raw = await readRegularFile(root, file, 16 * 1024 * 1024, CODES);
      if (!raw)
        throw new CatalogFsError(CatalogFsCode.NotFound, `${join(root.path, file)} does not exist`);
      // Cache-busting by content hash: an edited file is a new module, an unchanged one is
      // served from Node's module cache (so repeated imports do not grow it).
      const version = createHash('sha256').update(raw.data).digest('hex').slice(0, 16);
      const url = `${pathToFileURL(join(root.path, file)).href}?v=${version}`;
      return { url, entry: entryFor(scope, root, name, kind) };
    });
    if (!loaded) throw new CatalogFsError(CatalogFsCode.NotFound, `no ${scope} catalog directory`);
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
}
