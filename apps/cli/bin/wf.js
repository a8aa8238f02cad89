#!/usr/bin/env node
// The `wf` command line. The program lives in dist/cli/main.js (built by `tsc -b apps/cli`).
// `wf --version` answers before loading the program: a version check should cost a bare `node`.
import { readFileSync } from 'node:fs';

const argv = process.argv;
if (argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${typeof pkg.version === 'string' ? pkg.version : '0.0.0'}\n`);
} else {
  const { main } = await import('../dist/cli/main.js');
  await main(argv);
}
