// A new user's machine, for the README's commands: a fresh HOME, Node 20 and npm first on PATH and
// no pnpm anywhere on it, the README's blocks run verbatim through `sh -e`. Only caches are shared
// with the developer's machine (npm's cache, pnpm's content store): they change how fast a command
// runs, never what it does.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { runProcess } from '../../../dsh-e2e/test/helpers/host.js';
import { pnpmCommand } from '../../../../tooling/repo/pnpm-command.mjs';
import type { ProcessResult } from './release.js';

/** `<dir>/bin` holding only node, npm and npx of the Node running the suite (Node 20 in CI). */
export function nodeOnlyBin(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const tools: Record<string, string> = { node: process.execPath };
  for (const tool of ['npm', 'npx']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (!found) throw new Error(`${tool} is not on PATH: the README's machine has Node and npm`);
    tools[tool] = found;
  }
  for (const [name, target] of Object.entries(tools))
    if (!existsSync(join(bin, name))) symlinkSync(target, join(bin, name));
  return bin;
}

/** The system tools a shell needs (sh, git, tar), after the bins given; never a pnpm. */
export function userPath(...bins: string[]): string {
  const path = [...bins, '/usr/bin', '/bin'].join(':');
  const pnpm = spawnSync('sh', ['-c', 'command -v pnpm'], {
    encoding: 'utf8',
    env: { PATH: path },
  }).stdout.trim();
  if (pnpm && !bins.some((b) => pnpm.startsWith(`${b}/`)))
    throw new Error(`a pnpm is on the system PATH (${pnpm}): the README's machine has none`);
  return path;
}

let caches: { npm: string; pnpmStore: string; pnpmCache: string } | undefined;

/**
 * The developer's npm cache, pnpm store and pnpm metadata cache (where pnpm also remembers that a
 * lockfile passed its supply-chain check), read once through the tools themselves.
 */
export function sharedCaches(): { npm: string; pnpmStore: string; pnpmCache: string } {
  if (caches) return caches;
  const npm = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  const [cmd, ...pre] = pnpmCommand();
  let store = spawnSync(cmd, [...pre, 'store', 'path'], { encoding: 'utf8' });
  if (store.status !== 0)
    store = spawnSync('npx', ['-y', 'pnpm@12.4.2', 'store', 'path'], { encoding: 'utf8' });
  const path = store.stdout.trim().split('\n').pop() ?? '';
  if (!npm || store.status !== 0 || !path)
    throw new Error(`cannot read the npm cache or pnpm store path: ${store.stderr}`);
  // `store path` names the versioned folder inside the store directory pnpm is configured with
  const pnpmCache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'pnpm');
  caches = { npm, pnpmStore: /\/v\d+$/.test(path) ? dirname(path) : path, pnpmCache };
  return caches;
}

/** The environment of a user's shell: their HOME, npmrc and PATH, the shared caches. */
export function userEnv(options: {
  home: string;
  path: string;
  npmrc: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  const { npm, pnpmStore, pnpmCache } = sharedCaches();
  return {
    PATH: options.path,
    HOME: options.home,
    LANG: 'C.UTF-8',
    npm_config_userconfig: options.npmrc,
    npm_config_cache: npm,
    npm_config_update_notifier: 'false',
    pnpm_config_store_dir: pnpmStore,
    pnpm_config_cache_dir: pnpmCache,
    ...options.extra,
  };
}

/** A README block, verbatim, in `sh -e` (each line a command; the first failure ends it). */
export function runBlock(
  block: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ProcessResult> {
  return runProcess('sh', ['-e', '-c', block], {
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs ?? 600_000,
  });
}

/** For a failure message: the end of a long output. */
export function tail(r: ProcessResult, chars = 6000): string {
  return `exit ${r.code} after ${(r.ms / 1000).toFixed(1)} s\n${`${r.stdout}\n${r.stderr}`.slice(-chars)}`;
}
