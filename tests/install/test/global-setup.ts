// Vitest globalSetup for tests/install: builds the whole solution once (incremental), before the
// test files pack, publish or lint what is in dist/.
import { buildRepo } from './helpers/release.js';

export function setup(): void {
  buildRepo();
}
