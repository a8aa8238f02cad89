#!/usr/bin/env node
// The `wf` command line. Normally it runs dist/cli/wf.cjs, the CLI bundled into one CommonJS file,
// through the start-up machinery in src/startup/ (its README states what main() relies on): Node
// then starts its ES module loader only when a verb imports the engine, the sandbox or the parser.
// WF_STARTUP=off turns all of it off: main() runs from tsc's ES modules (dist/cli/main.js), with
// no bundle, no code cache and no early sandbox, and prints the same.
'use strict';
const { join } = require('node:path');

const argv = process.argv;
const root = join(__dirname, '..');
if (process.env.WF_STARTUP === 'off') {
  const main = require('node:url').pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href;
  import(main).then((cli) => cli.main(argv));
} else if (argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V')) {
  // A version check costs a bare `node`: nothing is loaded, and the line goes straight to the
  // descriptor (process.stdout would load Node's stream modules: src/cli/std-output.ts).
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  const line = `${typeof pkg.version === 'string' ? pkg.version : '0.0.0'}\n`;
  try {
    require('node:fs').writeSync(1, line);
  } catch {
    process.stdout.write(line);
  }
} else {
  const bundle = join(root, 'dist', 'cli', 'wf.cjs');
  const loading = require('../src/startup/loader.cjs').load(root, bundle, argv);
  loading.settle(require(bundle).main(argv));
}
