// A real npm registry for the install tests: Verdaccio (from npm, run on the Node 24 binary the
// DSH suite already installs) on 127.0.0.1, with its storage, config and users in a temp dir.
// `@wf/*` exists only as published here (no uplink); everything else proxies to the public registry.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE24_BIN_DIR } from '../../../dsh-e2e/test/helpers/host.js';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(resolve(here, '../../package.json'));
const VERDACCIO_BIN = join(dirname(require.resolve('verdaccio/package.json')), 'bin', 'verdaccio');

/** The public registry third-party packages come from; a mirror can be set for CI. */
const UPLINK = process.env.WF_INSTALL_UPLINK ?? 'https://registry.npmjs.org/';

export interface Registry {
  readonly url: string;
  readonly root: string;
  /** An npmrc that reads from the registry (what a user's machine has). */
  readonly userNpmrc: string;
  /** An npmrc that can also publish (a maintainer's, with a token). */
  readonly publisherNpmrc: string;
  /** Verdaccio's own output, for failure messages. */
  log(): string;
  /** Whether the registry's storage holds a package (read from disk: no request in its log). */
  stored(name: string): boolean;
  /** The registry's packument for a package, or undefined on 404. */
  packument(name: string): Promise<Packument | undefined>;
  close(): Promise<void>;
}

export interface Packument {
  readonly name: string;
  readonly 'dist-tags': Record<string, string>;
  readonly versions: Record<
    string,
    {
      readonly version: string;
      readonly dependencies?: Record<string, string>;
      readonly peerDependencies?: Record<string, string>;
      readonly dist: { readonly tarball: string };
    }
  >;
}

/** Only what the uplink needs from the caller's environment: proxies and extra CA certificates. */
function passThroughEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const [k, v] of Object.entries(process.env))
    if (
      v !== undefined &&
      /^(https?_proxy|no_proxy|node_extra_ca_certs|ssl_cert_(file|dir))$/i.test(k)
    )
      env[k] = v;
  return env;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolvePort(port));
    });
  });
}

function configYaml(): string {
  return `storage: ./storage
auth:
  htpasswd:
    file: ./htpasswd
    max_users: 10
uplinks:
  npmjs:
    url: ${UPLINK}
    timeout: 60s
packages:
  '@wf/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    proxy: npmjs
web:
  enable: false
log: { type: stdout, format: pretty, level: http }
`;
}

async function waitUntilUp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`verdaccio exited ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${url}-/ping`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`verdaccio did not answer on ${url} within 30 s:\n${output()}`);
}

/** Starts Verdaccio; the caller must `close()` it (afterAll), which also removes its directory. */
export async function startRegistry(): Promise<Registry> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-registry-')));
  mkdirSync(join(root, 'storage'));
  writeFileSync(join(root, 'config.yaml'), configYaml());
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  let output = '';
  const child = spawn(
    join(NODE24_BIN_DIR, 'node'),
    [VERDACCIO_BIN, '--config', join(root, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: passThroughEnv() },
  );
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await waitUntilUp(url, child, () => output);
    // A maintainer account: `npm adduser` is this PUT; Verdaccio answers with a token.
    const res = await fetch(`${url}-/user/org.couchdb.user:wf-maintainer`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'wf-maintainer', password: 'wf-maintainer-pass' }),
    });
    const { token } = (await res.json()) as { token?: string };
    if (!res.ok || !token)
      throw new Error(`verdaccio refused the maintainer account (${res.status})`);
    const host = url.replace(/^http:/, '');
    const userNpmrc = join(root, 'user.npmrc');
    const publisherNpmrc = join(root, 'publisher.npmrc');
    writeFileSync(userNpmrc, `registry=${url}\n`);
    writeFileSync(publisherNpmrc, `registry=${url}\n${host}:_authToken=${token}\n`);
    return {
      url,
      root,
      userNpmrc,
      publisherNpmrc,
      log: () => output,
      stored: (name) => existsSync(join(root, 'storage', name)),
      async packument(name) {
        const r = await fetch(`${url}${name.replace('/', '%2f')}`);
        if (r.status === 404) return undefined;
        if (!r.ok) throw new Error(`registry answered ${r.status} for ${name}`);
        return (await r.json()) as Packument;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
