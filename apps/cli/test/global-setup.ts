// Vitest globalSetup for apps/cli (vitest.config.ts runs any project's test/global-setup.ts once,
// before its test files): builds the `wf` bin (tsc, then the one-file bundle bin/wf.cjs runs), so
// tests that spawn it never race a rebuild. Synchronous on purpose: another project's build setup
// cannot interleave with this one.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..', '..', '..');

export function setup(): void {
  const steps = [
    [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(REPO, 'apps', 'cli')],
    [join(REPO, 'apps', 'cli', 'scripts', 'bundle.mjs')],
  ];
  for (const args of steps) {
    const out = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`${args.join(' ')} failed:\n${out.stdout}${out.stderr}`);
  }
}
