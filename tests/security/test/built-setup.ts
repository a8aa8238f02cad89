// Vitest globalSetup of the `tests/security:built` project (vitest.config.ts): builds the whole
// solution and its bundles, so the hostile suites then run against dist/ as users install it.
import { build } from '../../../tooling/repo/build.mjs';

export function setup(): void {
  build();
}
