// Vitest globalSetup for tests/dsh-e2e: builds the plugin bundle DSH loads (apps/plugin/dist) once,
// before any test file starts (synchronous, so no other project's build interleaves).
import { ensurePluginBuilt } from './helpers/host.js';

export function setup(): void {
  ensurePluginBuilt();
}
