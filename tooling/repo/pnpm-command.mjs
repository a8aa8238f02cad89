// How to start "the pnpm running this script", whichever way pnpm was started. A package script
// learns it from `npm_execpath`, which is a JavaScript file for a JS pnpm (pnpm <= 10 from npm,
// corepack's `bin/pnpm.mjs`) and a native executable for pnpm 11+ from npm or npx, the standalone
// installer and `@pnpm/exe`: a JavaScript file runs under this Node, anything else runs as itself.
// Outside pnpm (npm's own npm_execpath, or none) it is the `pnpm` on PATH.
import { existsSync } from 'node:fs';
import { basename } from 'node:path';

/** A file Node must load itself: it is not executable on its own everywhere. */
const JS_FILE = /\.(c|m)?js$/i;

/**
 * The command line prefix that starts pnpm: `[command, ...leading args]`.
 * @param env the environment the script runs in (reads `npm_execpath`)
 * @param nodePath the Node that runs a JavaScript pnpm
 */
export function pnpmCommand(env = process.env, nodePath = process.execPath) {
  const running = env.npm_execpath;
  const isPnpm =
    typeof running === 'string' &&
    /pnpm/i.test(running) &&
    !/^npm(-cli)?\.js$/i.test(basename(running));
  if (!isPnpm || !existsSync(running)) return ['pnpm'];
  return JS_FILE.test(running) ? [nodePath, running] : [running];
}
