// `pnpm pack:plugin` starts "the pnpm running it" for every way pnpm is installed: a native
// executable (pnpm 11+ from npm or npx, the standalone installer), a shell placeholder, a
// JavaScript file (pnpm <= 10 from npm, corepack), or none (npm runs the script: PATH).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pnpmCommand } from '../pnpm-command.mjs';

const root = mkdtempSync(join(tmpdir(), 'wf-pnpm-command-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(rel: string, text: string, mode: number): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode });
  return path;
}

/** Starts what pnpmCommand answers for this npm_execpath with `pack --x`, as pack-offline does. */
function start(execpath: string | undefined): string {
  const [cmd, ...pre] = pnpmCommand(execpath === undefined ? {} : { npm_execpath: execpath });
  return execFileSync(cmd, [...pre, 'pack', '--x'], { encoding: 'utf8' }).trim();
}

describe('pnpmCommand', () => {
  it('runs a native pnpm executable as itself, never under node', () => {
    // a real ELF binary standing in for pnpm 12's: `node <it>` is the SyntaxError users saw
    const native = join(root, 'npx/node_modules/pnpm/pnpm');
    mkdirSync(dirname(native), { recursive: true });
    copyFileSync('/bin/echo', native);
    chmodSync(native, 0o755);
    expect(pnpmCommand({ npm_execpath: native })).toEqual([native]);
    expect(start(native)).toBe('pack --x');
  });

  it('runs a shell placeholder as itself', () => {
    const placeholder = file(
      'global/lib/node_modules/pnpm/pnpm',
      '#!/bin/sh\necho sh "$@"\n',
      0o755,
    );
    expect(start(placeholder)).toBe('sh pack --x');
  });

  it('runs a JavaScript pnpm under this Node, executable or not (pnpm.cjs, corepack pnpm.mjs)', () => {
    const cjs = file(
      'old/node_modules/pnpm/bin/pnpm.cjs',
      "console.log('cjs', ...process.argv.slice(2));\n",
      0o644,
    );
    const mjs = file(
      'corepack/v1/pnpm/12.4.2/bin/pnpm.mjs',
      "console.log('mjs', ...process.argv.slice(2));\n",
      0o644,
    );
    expect(pnpmCommand({ npm_execpath: cjs }, '/x/node')).toEqual(['/x/node', cjs]);
    expect(start(cjs)).toBe('cjs pack --x');
    expect(start(mjs)).toBe('mjs pack --x');
  });

  it('uses the pnpm on PATH when npm runs the script, or nothing says which pnpm runs it', () => {
    const npm = file('npm/bin/npm-cli.js', '', 0o644);
    expect(pnpmCommand({ npm_execpath: npm })).toEqual(['pnpm']);
    expect(pnpmCommand({})).toEqual(['pnpm']);
    expect(pnpmCommand({ npm_execpath: join(root, 'gone/pnpm/pnpm') })).toEqual(['pnpm']);
  });
});
