// Vitest globalSetup for packages/sandbox: builds the package (tsc, then the worker's one-file
// bundle), so the tests that run the built package in a fresh process, as users and the CLI do,
// start the bundled worker and never a stale one.
import { resolve } from 'node:path';
import { build } from '../../../tooling/repo/build.mjs';

export function setup(): void {
  build(resolve(import.meta.dirname, '..'));
}
