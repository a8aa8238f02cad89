#!/usr/bin/env node
// The repository's build, in one place for everyone who needs built output (the root `build`
// script, the test setups of apps/cli and packages/sandbox, tests/install's release): `tsc -b` of
// a project (the whole solution by default), then the one-file bundles that the built packages
// run: the sandbox's worker thread, and the CLI when the project is the CLI or the solution.
// Synchronous on purpose: test setups call it, and two builds must not interleave.
// Usage: node tooling/repo/build.mjs [project dir, relative to the repository]
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** @param {string} [project] a folder of the repository ('apps/cli'), or the whole solution */
export function build(project = '.') {
  const target = resolve(REPO, project);
  const steps = [
    [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', target],
    [join(REPO, 'packages', 'sandbox', 'scripts', 'bundle.mjs')],
  ];
  if (target === REPO || target === join(REPO, 'apps', 'cli'))
    steps.push([join(REPO, 'apps', 'cli', 'src', 'startup', 'bundle.mjs')]);
  for (const args of steps) {
    const out = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`${args.join(' ')} failed:\n${out.stdout}${out.stderr}`);
  }
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  try {
    build(process.argv[2]);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
