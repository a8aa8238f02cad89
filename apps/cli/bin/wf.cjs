#!/usr/bin/env node
// The `wf` command line: dist/cli/wf.cjs, the CLI bundled into one CommonJS file by
// scripts/bundle.mjs (from `tsc -b apps/cli`'s dist/cli/main.js). CommonJS on purpose: Node starts
// its ES module loader only when a verb imports the engine, the sandbox or the parser.
// `wf --version` answers before loading the program: a version check should cost a bare `node`.
'use strict';
const { readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

const argv = process.argv;
const root = join(__dirname, '..');
if (argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V')) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const line = `${typeof pkg.version === 'string' ? pkg.version : '0.0.0'}\n`;
  // Straight to the descriptor: process.stdout would load Node's stream modules (src/cli/std-output.ts)
  try {
    require('node:fs').writeSync(1, line);
  } catch {
    process.stdout.write(line);
  }
} else {
  const bundle = join(root, 'dist', 'cli', 'wf.cjs');
  // In a clone, `tsc -b` rewrites tsconfig.tsbuildinfo whenever it builds the CLI or a package it
  // uses: a bundle older than that is stale, so bundle again (published packages have no buildinfo).
  const built = statSync(join(root, 'tsconfig.tsbuildinfo'), { throwIfNoEntry: false });
  const bundled = statSync(bundle, { throwIfNoEntry: false });
  if (built !== undefined && (bundled === undefined || bundled.mtimeMs < built.mtimeMs)) {
    process.stderr.write('wf: bundling dist/cli (it changed since the last bundle)\n');
    const out = require('node:child_process').spawnSync(
      process.execPath,
      [join(root, 'scripts', 'bundle.mjs')],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (out.status !== 0) process.exit(1);
  }
  // The lazy bundles (written with wf.cjs): the engine and the contract only for the verbs that
  // run or check workflows, the capsule schemas and shipped workflows for every verb that may
  // read a workflow; the run-store verbs need neither. Only the verbs that need one pay for looking.
  const lazy = (name) => join(root, 'dist', 'cli', name);
  const storeVerbs = ['runs', 'show', 'events', 'report', 'delete-run', 'prune', 'help', undefined];
  const needs = ['run', 'resume', 'check', 'worker'].includes(argv[2])
    ? [
        bundle,
        ...['sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'].map(lazy),
      ]
    : storeVerbs.includes(argv[2])
      ? [bundle]
      : [bundle, lazy('workflows.cjs')];
  const missing = needs.find((file) => statSync(file, { throwIfNoEntry: false }) === undefined);
  if (missing !== undefined) {
    process.stderr.write(`wf: ${missing} is missing: this install of @wf/cli is incomplete\n`);
    process.exit(1);
  }
  // Compiled with the code caches written at build time, when they match (bin/code-cache.cjs):
  // `run` and `resume` read the caches a `wf run` trained, the other verbs those plain verbs did.
  // (`run` and `resume` also ask their sandbox for V8's --liftoff-only: run.ts, wasmTierUp.)
  const runs = argv[2] === 'run' || argv[2] === 'resume';
  require('./code-cache.cjs').useCodeCache(
    [
      bundle,
      ...['sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'].map(lazy),
    ],
    runs ? 'run' : '',
  );
  // `run` and `resume` start their sandbox's worker thread now, before the bundle (~20 ms of
  // compile and set-up here), then compile the other bundles from their caches before that thread
  // sets --liftoff-only (bin/code-cache.cjs, precompileBundles). Not for help or a bare verb.
  const early =
    runs && argv.length > 3 && !argv.includes('--help') && !argv.includes('-h')
      ? require('./early-sandbox.cjs')
      : undefined;
  if (early !== undefined) {
    early.startSandbox(lazy('sandbox.cjs'));
    require('./code-cache.cjs').precompileBundles();
  }
  const done = require(bundle).main(argv);
  // A usage error leaves the sandbox untaken: closed once booted (the booting thread holds the process).
  if (early !== undefined) done.finally(() => early.closeUntaken());
}
