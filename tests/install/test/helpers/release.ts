// The maintainer's side of an install, as processes: build the repository, and run the release
// steps (`changeset version`, then the root `release:publish` script) on a temp copy of the
// workspace so the repository itself is never versioned. The user's side is helpers/user.ts.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  type HostRun,
  NODE24_BIN_DIR,
  REPO_ROOT,
  runProcess,
} from '../../../dsh-e2e/test/helpers/host.js';
import { build } from '../../../../tooling/repo/build.mjs';
import { pnpmCommand } from '../../../../tooling/repo/pnpm-command.mjs';

export type ProcessResult = HostRun;

let pnpmShim: string | undefined;

/**
 * A directory holding the `pnpm` the suite runs with (DSH's `plugin` verb shells out to `pnpm`):
 * the one on PATH, or, under `npx -y pnpm@...` as in CI, a shim to the pnpm running the suite.
 */
export function pnpmBinDir(): string {
  const found = spawnSync('sh', ['-c', 'command -v pnpm'], { encoding: 'utf8' }).stdout.trim();
  if (found) return dirname(found);
  // the pnpm running this suite, else the README's own way to start one
  const running = pnpmCommand();
  const command = running[0] === 'pnpm' ? ['npx', '-y', 'pnpm@12.4.2'] : running;
  if (!pnpmShim) {
    const dir = mkdtempSync(join(tmpdir(), 'wf-pnpm-shim-'));
    const line = command.map((part) => JSON.stringify(part)).join(' ');
    writeFileSync(join(dir, 'pnpm'), `#!/bin/sh\nexec ${line} "$@"\n`, { mode: 0o755 });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    pnpmShim = dir;
  }
  return pnpmShim;
}

export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ProcessResult> {
  return runProcess(command, args, { ...options, timeoutMs: options.timeoutMs ?? 180_000 });
}

/** The root `build` script: `tsc -b` of the whole solution, then the bundles the packages run. */
export function buildRepo(): void {
  build(REPO_ROOT);
}

/** Workspace folders and root files a release reads; node_modules stays behind. */
const ROOT_FILES = [
  'package.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'LICENSE',
  '.changeset',
];
const GROUPS = ['packages', 'apps', 'tests', 'tooling'];

/** A copy of the workspace (sources, dist, changesets) that a release may version freely. */
export function copyWorkspace(into: string): string {
  mkdirSync(into, { recursive: true });
  for (const f of ROOT_FILES)
    if (existsSync(join(REPO_ROOT, f)))
      cpSync(join(REPO_ROOT, f), join(into, f), { recursive: true });
  for (const group of GROUPS) {
    const dir = join(REPO_ROOT, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!existsSync(join(dir, name, 'package.json'))) continue;
      cpSync(join(dir, name), join(into, group, name), {
        recursive: true,
        filter: (p) => basename(p) !== 'node_modules',
      });
    }
  }
  return into;
}

/** The publishable (non-private) workspace packages of a workspace, name to version. */
export function publishable(workspace: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of GROUPS) {
    const dir = join(workspace, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const pj = join(dir, name, 'package.json');
      if (!existsSync(pj)) continue;
      const pkg = JSON.parse(readFileSync(pj, 'utf8')) as {
        name: string;
        version: string;
        private?: boolean;
      };
      if (!pkg.private) out.set(pkg.name, pkg.version);
    }
  }
  return out;
}

/**
 * An environment for pnpm/npm: the given npmrc, a private store, and no install-before-run
 * (pnpm would otherwise install the copied workspace before running a root script).
 */
export function npmEnv(npmrc: string, home: string, store: string): Record<string, string> {
  return {
    PATH: `${NODE24_BIN_DIR}:${pnpmBinDir()}:/usr/bin:/bin`,
    HOME: home,
    npm_config_userconfig: npmrc,
    npm_config_cache: join(home, '.npm'),
    pnpm_config_store_dir: store,
    pnpm_config_verify_deps_before_run: 'false',
    LANG: 'C.UTF-8',
  };
}

/**
 * The release, as the maintainer runs it after the build, on an installed checkout: version from
 * changesets, then the root `release:publish` script. The copy is installed offline from the
 * developer's pnpm store (publish resolves `workspace:^` from the installed links).
 */
export async function release(
  workspace: string,
  env: Record<string, string>,
): Promise<{ install: ProcessResult; version: ProcessResult; publish: ProcessResult }> {
  const install = await run(
    'pnpm',
    ['install', '--offline', '--frozen-lockfile', '--ignore-scripts'],
    // the developer's own pnpm setup (store, metadata cache), and --offline: no registry at all
    {
      cwd: workspace,
      env: {
        ...(process.env as Record<string, string>),
        PATH: `${pnpmBinDir()}:${process.env.PATH ?? '/usr/bin:/bin'}`,
        pnpm_config_verify_deps_before_run: 'false',
      },
    },
  );
  if (install.code !== 0) return { install, version: install, publish: install };
  const changeset = join(REPO_ROOT, 'node_modules', '@changesets', 'cli', 'bin.js');
  const version = await run(join(NODE24_BIN_DIR, 'node'), [changeset, 'version'], {
    cwd: workspace,
    env,
  });
  if (version.code !== 0) return { install, version, publish: version };
  const publish = await run('pnpm', ['run', 'release:publish'], { cwd: workspace, env });
  return { install, version, publish };
}
