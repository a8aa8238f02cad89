// Which file a pool worker thread starts: the one-file CommonJS bundle of the worker
// (worker.cjs, built into dist/ by scripts/bundle.mjs) when it is there and fresh, else
// the worker's ES modules (worker.js), which src/ (tests) and a build that did not bundle have.
// The bundle is the same code joined into one file; a thread starts sooner on it.
import { createRequire } from 'node:module';

// Required, not imported: see cpu-clock.js (the ES facade of node:fs loads the streams modules).
const { statSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/**
 * @param here the URL of a module in the worker's directory (dist/internal/ or src/internal/)
 * @returns the worker entry to start, as a file URL
 */
export function workerEntry(here: string): URL {
  const modules = new URL('./worker.js', here);
  const bundle = new URL('./worker.cjs', here);
  const bundled = statSync(bundle, { throwIfNoEntry: false });
  if (bundled === undefined) return modules;
  // In a clone, `tsc -b` rewrites the package's tsconfig.tsbuildinfo each time it rebuilds
  // dist/: a bundle older than that may predate the code beside it, so the modules win.
  // Published packages ship no buildinfo and run the bundle they were packed with.
  const built = statSync(new URL('../../tsconfig.tsbuildinfo', here), { throwIfNoEntry: false });
  if (built !== undefined && built.mtimeMs > bundled.mtimeMs) return modules;
  return bundle;
}
