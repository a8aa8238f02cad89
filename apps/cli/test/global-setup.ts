// Vitest globalSetup for apps/cli (vitest.config.ts runs any project's test/global-setup.ts once,
// before its test files): builds the `wf` bin, so tests that spawn it never race a rebuild.
// Synchronous on purpose: another project's build setup cannot interleave with this one.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..', '..', '..');

export function setup(): void {
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = spawnSync(process.execPath, [tsc, '-b', join(REPO, 'apps', 'cli')], {
    cwd: REPO,
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`tsc -b apps/cli failed:\n${out.stdout}${out.stderr}`);
}
