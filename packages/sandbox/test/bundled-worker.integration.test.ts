// The built package starts its worker threads from the one-file bundle (dist/internal/worker.cjs,
// scripts/bundle.mjs) and the bundle enforces the same limits. The global setup has just
// built and bundled, so the bundle is fresh. tests/security runs the hostile suites on it too.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const exec = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..');

it('the built package runs the bundled worker, and its limits hold', async () => {
  const child = join(import.meta.dirname, 'fixtures', 'bundled-worker.mjs');
  const { stdout } = await exec(process.execPath, [child], { timeout: 60_000 });
  expect(JSON.parse(stdout.trim().split('\n').pop() ?? '{}')).toEqual({
    started: ['internal/worker.cjs'],
    results: [42, 'WF_SANDBOX_CPU_SLICE', 'WF_SANDBOX_MEMORY_LIMIT'],
    oneErrorClass: true,
  });
}, 90_000);

it('the bundle is strict code that loads nothing but Node built-ins and the engine .wasm', () => {
  const text = readFileSync(join(PACKAGE, 'dist', 'internal', 'worker.cjs'), 'utf8');
  // Every input is an ES module (strict); the directive counts only as the file's first statement.
  expect(text.startsWith('"use strict";\n')).toBe(true);
  const loads = [...text.matchAll(/\b(?:require|import)\d*\("([^"]+)"\)/g)].map((m) => m[1]);
  expect(loads.length).toBeGreaterThan(0);
  for (const name of loads) expect(name).toMatch(/^node:/);
  expect(text).not.toMatch(/\bimport\(/);
});
