// Vitest globalSetup for apps/cli (vitest.config.ts runs any project's test/global-setup.ts once,
// before its test files): builds the `wf` bin (tsc, then the one-file bundles: the CLI that
// bin/wf.cjs runs and the sandbox's worker), so tests that spawn it never race a rebuild.
import { resolve } from 'node:path';
import { build } from '../../../tooling/repo/build.mjs';

export function setup(): void {
  build(resolve(import.meta.dirname, '..'));
}
