// The version of the DSH host this plugin runs in, for capsule provenance (`dshVersion`): read
// from the host's own package.json, never a constant, so a saved capsule says which DSH made it.
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const HOST_PACKAGE = '@deepseek-ai/dsh';

export interface HostVersionSources {
  /** The running program (the `dsh` bin when DSH hosts us); default `process.argv[1]`. */
  readonly entry?: string | undefined;
  /** Where to resolve the peer dependency from; default this module. */
  readonly resolveFrom?: string;
}

/**
 * The host DSH's version: first the package that owns the running program (the process DSH
 * booted), then the `@deepseek-ai/dsh` this plugin resolves as its peer; `'unknown'` if neither.
 */
export function hostDshVersion(sources: HostVersionSources = {}): string {
  // Read on each save (rare, two small files): never a value from before the host changed.
  return (
    fromEntry(sources.entry ?? process.argv[1]) ??
    fromPeer(sources.resolveFrom ?? import.meta.url) ??
    'unknown'
  );
}

function fromEntry(entry: string | undefined): string | undefined {
  if (!entry) return undefined;
  let dir: string;
  try {
    dir = dirname(realpathSync(entry));
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i += 1) {
    const version = versionAt(join(dir, 'package.json'));
    if (version !== undefined) return version;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

function fromPeer(from: string): string | undefined {
  try {
    return versionAt(createRequire(from).resolve(`${HOST_PACKAGE}/package.json`));
  } catch {
    return undefined;
  }
}

/** The version in `path` when it is the host package's manifest. */
function versionAt(path: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown; version?: unknown };
    return pkg.name === HOST_PACKAGE && typeof pkg.version === 'string' && pkg.version.length > 0
      ? pkg.version.slice(0, 64)
      : undefined;
  } catch {
    return undefined;
  }
}
