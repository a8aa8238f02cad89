// The published package's entry is dist/internal/sandbox.bundle.js (package.json
// publishConfig.exports; scripts/bundle.mjs): dist/index.js with the package's own modules joined
// into one file, so a fresh process links one module before it can start its first worker. It must
// be the same package: the same exports, the same limits, the one copy of @wf/errors. The global
// setup has just built and bundled, so the bundle is fresh.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const exec = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..');
const BUNDLE = join(PACKAGE, 'dist', 'internal', 'sandbox.bundle.js');
const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));

it('publishes the bundle as its entry, and otherwise the same exports as the repository', () => {
  const published = manifest.publishConfig.exports;
  expect(published['.'].default).toBe('./dist/internal/sandbox.bundle.js');
  expect(manifest.exports['.'].default).toBe('./dist/index.js');
  // Everything else (types, the source condition, subpaths) is the same: one place would drift.
  expect({ ...published, '.': { ...published['.'], default: 'x' } }).toEqual({
    ...manifest.exports,
    '.': { ...manifest.exports['.'], default: 'x' },
  });
  expect(manifest.files).toContain('dist');
  // `pnpm pack` and publish bundle first, from the dist/ they ship.
  expect(manifest.scripts.prepack).toBe('node scripts/bundle.mjs');
});

it('exports exactly what dist/index.js exports', async () => {
  const modules = await import(pathToFileURL(join(PACKAGE, 'dist', 'index.js')).href);
  const bundle = await import(pathToFileURL(BUNDLE).href);
  expect(Object.keys(bundle).sort()).toEqual(Object.keys(modules).sort());
  expect(Object.keys(bundle).length).toBeGreaterThan(0);
});

it('imports only Node built-ins and @wf/errors, and nothing at run time', () => {
  const text = readFileSync(BUNDLE, 'utf8');
  const imports = [...text.matchAll(/^import\s[^'"]*["']([^"']+)["'];?$/gm)].map((m) => m[1] ?? '');
  expect(imports).toContain('@wf/errors');
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  for (const name of imports)
    if (name !== '@wf/errors') expect(builtins.has(name), name).toBe(true);
  expect(text.replace(/\/\/.*$/gm, '')).not.toMatch(/\bimport\(/);
});

it('runs as the package does: the bundled worker, the limits, one @wf/errors', async () => {
  const child = join(import.meta.dirname, 'fixtures', 'bundled-worker.mjs');
  const { stdout } = await exec(process.execPath, [child, pathToFileURL(BUNDLE).href], {
    timeout: 60_000,
  });
  expect(JSON.parse(stdout.trim().split('\n').pop() ?? '{}')).toEqual({
    started: ['internal/worker.cjs'],
    results: [42, 'WF_SANDBOX_CPU_SLICE', 'WF_SANDBOX_MEMORY_LIMIT'],
    oneErrorClass: true,
  });
}, 90_000);
