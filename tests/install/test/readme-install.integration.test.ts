// The README's install, verbatim, as a new user runs it, against real things: a `git clone` of
// this repository on a machine with only Node 20 and npm (no pnpm on PATH, a fresh HOME); the
// Quick start's main job; the offline tarball built and packed under `npx -y pnpm@12.4.2`; DSH and
// pnpm installed with `npm i -g`; the tarball added to both profiles with `dsh plugin add`; the
// README's rows; then the real DSH 0.1.0-rc.8 headless and web hosts against the scripted model,
// with real DSH children. Then what the README promises once the packages are published, against
// a Verdaccio registry on 127.0.0.1 (third-party packages proxied from npm, `@wf/*` only as the
// release script publishes them there): `dsh plugin add @wf/plugin` and `npm i -g @wf/cli`.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeSandbox,
  NODE24_BIN_DIR,
  REPO_ROOT,
  runHost,
  type Sandbox,
} from '../../dsh-e2e/test/helpers/host.js';
import {
  type ModelServer,
  type Script,
  startModelServer,
} from '../../dsh-e2e/test/helpers/model-server.js';
import { readmeBlock } from '../../dsh-e2e/test/helpers/readme.js';
import { readmeRows } from '../../dsh-e2e/test/helpers/suite.js';
import { readAnswer, readRun } from '../../dsh-e2e/test/helpers/reply.js';
import { anyChild, results, scenario } from '../../dsh-e2e/test/helpers/scripts.js';
import { startWebHost } from '../../dsh-e2e/test/helpers/web.js';
import { FAN_SOURCE } from '../../dsh-e2e/test/helpers/workflows.js';
import { type Registry, startRegistry } from './helpers/registry.js';
import { copyWorkspace, npmEnv, publishable, release, run } from './helpers/release.js';
import { nodeOnlyBin, runBlock, tail, userEnv, userPath } from './helpers/user.js';

let registry: Registry;
let server: ModelServer;
let root: string;
let node20: string;
/** The npm global prefix the offline install filled: the registry install is the same machine. */
let userPrefix: string | undefined;
const sandboxes: Sandbox[] = [];
const suiteStarted = Date.now();
const took: string[] = [];

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-install-')));
  node20 = nodeOnlyBin(join(root, 'node20'));
  server = await startModelServer();
  registry = await startRegistry();
}, 180_000);

afterAll(async () => {
  await server?.close();
  await registry?.close();
  for (const s of sandboxes) s.cleanup();
  if (root) rmSync(root, { recursive: true, force: true });
  process.stdout.write(
    `install suite: ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s (${took.join('; ')})\n`,
  );
  // a clone with its node_modules and two global DSH installs: removing them takes a while
}, 300_000);

const timed = (label: string, ms: number) => took.push(`${label} ${(ms / 1000).toFixed(1)} s`);

const FAN_MANIFEST = {
  name: 'install-fan-out',
  description: 'Two read-only children, then their findings',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 2,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};
const PI_LINE = '/workflow parallel-investigation {"question": "How does calc work?"} --wait';

/** Fan-out children answer per angle; the built-ins' structured children through their schema. */
const children: Script = (request, v) => {
  const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
  return m ? { text: `finding for ${m[1]}` } : anyChild(request, v);
};

function sandbox(label: string): Sandbox {
  const s = makeSandbox(`wf-install-${label}-`);
  sandboxes.push(s);
  return s;
}

/** Replaces a profile's patch layer with the README's rows for it, as the README says to. */
function writeRows(s: Sandbox, profile: 'headless' | 'web'): void {
  const file = join(s.dshHome, 'profiles', profile, 'cordis.patch.yml');
  // a fresh profile's patch layer is comments and an empty list: the README says to replace it
  expect(readFileSync(file, 'utf8').replace(/^#.*$/gm, '').trim()).toBe('[]');
  writeFileSync(file, readmeRows(profile));
}

/** Headless, as the README's rows set it up: lists the workflows and runs an inline fan-out. */
async function headlessAnswers(s: Sandbox, globalBin: string, marker: string): Promise<void> {
  server.setScript(
    scenario(
      marker,
      [
        () => ({ name: 'workflow_list', arguments: {} }),
        () => ({
          name: 'run_workflow',
          arguments: {
            source: FAN_SOURCE,
            manifest: FAN_MANIFEST,
            args: { angles: ['north', 'south'] },
          },
        }),
      ],
      children,
    ),
  );
  const before = server.requests.length;
  const r = await runHost({
    sandbox: s,
    modelUrl: server.url,
    task: `${marker} list the workflows, then run the fan-out`,
    patches: [],
    hmrShim: false,
    dsh: [join(globalBin, 'dsh')],
    path: [globalBin],
    timeoutMs: 180_000,
  });
  timed(`headless run`, r.ms);
  expect(r.code, r.stderr).toBe(0);
  const [list, fan] = results(r.stdout);
  const names = ((readAnswer(list ?? '').entries ?? []) as { name: string }[]).map((e) => e.name);
  expect(names).toContain('fan-out-and-synthesize');
  expect(readRun(fan ?? ''), fan).toMatchObject({
    status: 'completed',
    result: { findings: ['finding for north', 'finding for south'] },
  });
  // the children were real DSH subagents: the model served their own requests
  const childRequests = server.requests.slice(before).filter((q) => {
    const text = JSON.stringify(q.messages);
    return text.includes('CHILD-TASK investigate') && !text.includes(marker);
  });
  expect(childRequests.length).toBeGreaterThanOrEqual(2);
}

/** Web, as the README's row sets it up: `/workflow parallel-investigation ... --wait` answers. */
async function webAnswers(s: Sandbox, globalBin: string): Promise<void> {
  server.setScript(children);
  const started = Date.now();
  const web = await startWebHost({
    sandbox: s,
    modelUrl: server.url,
    patches: [],
    hmrShim: false,
    dsh: [join(globalBin, 'dsh')],
    path: [globalBin],
  });
  try {
    const session = await web.createSession(s.cwd);
    const pi = await web.command(session, PI_LINE);
    expect(pi.kind, pi.text).toBe('success');
    expect(readRun(pi.text ?? ''), pi.text).toMatchObject({
      workflow: 'parallel-investigation',
      status: 'completed',
      agents: '4 agents: 4 completed',
    });
  } finally {
    expect(await web.close()).toBe(0);
  }
  timed('web boot and run', Date.now() - started);
}

describe('Quick start, in a fresh clone on a machine with only Node 20 and npm', {
  timeout: 900_000,
}, () => {
  let clone: string;
  let home: string;

  it('git clone, then the main job verbatim: install, wf run, wf report', async () => {
    clone = join(root, 'wf');
    home = join(root, 'user-home');
    mkdirSync(home, { recursive: true });
    execFileSync('git', ['clone', '--quiet', REPO_ROOT, clone], { stdio: 'pipe' });
    const env = userEnv({ home, path: userPath(node20), npmrc: registry.userNpmrc });
    const r = await runBlock(readmeBlock('quick-start'), { cwd: clone, env });
    timed('quick start', r.ms);
    expect(r.code, tail(r)).toBe(0);
    expect(r.stdout).toMatch(/^run run-\S+ completed in /m);
    const html = readFileSync(join(clone, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('fan-out-and-synthesize');
  });

  describe('Use it in DSH: the offline tarball, from the clone', () => {
    let globalBin: string;
    let user: Sandbox;

    it('the pack block runs verbatim under npx -y pnpm@12.4.2 with no pnpm on PATH', async () => {
      const env = userEnv({ home, path: userPath(node20), npmrc: registry.userNpmrc });
      const r = await runBlock(readmeBlock('offline-pack'), { cwd: clone, env });
      timed('install, build and pack', r.ms);
      expect(r.code, tail(r)).toBe(0);
      const tarball = join(clone, 'wf-plugin-offline.tgz');
      const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
      expect(listing).toContain('package/node_modules/@wf/engine/dist/index.js');
      expect(listing).toContain('package/node_modules/@wf/report/dist/index.js');
      expect(listing).toContain('package/hmr-shim.js');
    });

    it('npm i -g DSH and pnpm, then dsh plugin add the tarball to web and headless', async () => {
      user = sandbox('offline');
      const prefix = join(user.root, 'global');
      userPrefix = prefix;
      globalBin = join(prefix, 'bin');
      const env = userEnv({
        home: user.home,
        // DSH needs Node >= 22.15 (the README says so): Node 24 before the system's Node 20
        path: userPath(globalBin, NODE24_BIN_DIR, node20),
        npmrc: registry.userNpmrc,
        extra: { npm_config_prefix: prefix, DSH_HOME: user.dshHome, DSH_TELEMETRY_DISABLED: '1' },
      });
      for (const name of ['@wf/plugin', '@wf/engine', '@wf/sandbox'])
        expect(registry.stored(name), name).toBe(false);
      const r = await runBlock(readmeBlock('offline-add'), { cwd: clone, env });
      timed('npm i -g and two dsh plugin add', r.ms);
      expect(r.code, `${tail(r)}\n${registry.log().slice(-3000)}`).toBe(0);
      for (const profile of ['web', 'headless']) {
        const manifest = JSON.parse(
          readFileSync(join(user.dshHome, 'profiles', profile, 'package.json'), 'utf8'),
        );
        // the package's dsh.bundle made it a profile layer: no hand-written row for the plugin
        expect(manifest.dsh.profile.bundles, profile).toContain('@wf/plugin');
      }
      // the registry served third-party dependencies; nobody asked it for an @wf package
      expect(registry.log()).toMatch(/GET \/valibot/);
      expect(registry.log()).not.toMatch(/GET \/@wf/);
    });

    it('headless with the README rows answers: the workflow list and an inline run', async () => {
      writeRows(user, 'headless');
      await headlessAnswers(user, globalBin, 'SCENARIO-INSTALL-OFFLINE');
    });

    it('web with the README row answers /workflow parallel-investigation --wait', async () => {
      writeRows(user, 'web');
      await webAnswers(user, globalBin);
    });
  });
});

describe('once the packages are published: the registry install', { timeout: 600_000 }, () => {
  let published: Map<string, string>;

  it('the release script versions from changesets and publishes every package', async () => {
    const workspace = copyWorkspace(join(root, 'workspace'));
    mkdirSync(join(root, 'maintainer'), { recursive: true });
    const env = npmEnv(registry.publisherNpmrc, join(root, 'maintainer'), join(root, 'store'));
    const { install, version, publish } = await release(workspace, env);
    expect(install.code, `${install.stdout}${install.stderr}`).toBe(0);
    expect(version.code, `${version.stdout}${version.stderr}`).toBe(0);
    expect(publish.code, `${publish.stdout}${publish.stderr}\n${registry.log()}`).toBe(0);
    published = publishable(workspace);
    expect([...published.keys()]).toEqual(expect.arrayContaining(['@wf/plugin', '@wf/report']));
    for (const [name, version] of published) {
      expect(version, `${name} was versioned by changesets`).not.toBe('0.0.0');
      const doc = await registry.packument(name);
      expect(doc?.['dist-tags'].latest, name).toBe(version);
      const meta = doc?.versions[version];
      for (const [dep, range] of Object.entries(meta?.dependencies ?? {})) {
        expect(range, `${name} -> ${dep}`).not.toMatch(/^workspace:/);
        if (published.has(dep)) expect(range).toBe(`^${published.get(dep)}`);
      }
      for (const dep of Object.keys(meta?.peerDependencies ?? {}))
        expect(dep, `${name}: peers are the host only`).toMatch(/^@deepseek-ai\//);
      // the tarball users get: compiled entry, license, changelog from changesets
      const tgz = join(root, `${name.replace('/', '+')}.tgz`);
      const res = await fetch(meta?.dist.tarball ?? '');
      writeFileSync(tgz, Buffer.from(await res.arrayBuffer()));
      const files = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).split('\n');
      for (const f of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md', 'dist/index.js'])
        expect(files, `${name} ships ${f}`).toContain(`package/${f}`);
      const changelog = execFileSync('tar', ['-xzOf', tgz, 'package/CHANGELOG.md'], {
        encoding: 'utf8',
      });
      expect(changelog).toContain(`## ${version}`);
    }
  });

  it('the registry block verbatim: dsh plugin add @wf/plugin answers in web; wf runs anywhere on Node 20', async () => {
    expect(published?.get('@wf/plugin')).toBeDefined();
    // a new DSH_HOME on the machine that already has DSH (the block's `npm i -g` finds it there)
    const user = sandbox('registry');
    const prefix = userPrefix ?? join(user.root, 'global');
    const globalBin = join(prefix, 'bin');
    const env = userEnv({
      home: user.home,
      path: userPath(globalBin, NODE24_BIN_DIR, node20),
      npmrc: registry.userNpmrc,
      extra: { npm_config_prefix: prefix, DSH_HOME: user.dshHome, DSH_TELEMETRY_DISABLED: '1' },
    });
    const r = await runBlock(readmeBlock('registry-add'), { cwd: user.cwd, env });
    timed('registry block', r.ms);
    expect(r.code, `${tail(r)}\n${registry.log().slice(-3000)}`).toBe(0);
    expect(
      JSON.parse(readFileSync(join(user.dshHome, 'profiles/web/package.json'), 'utf8')),
    ).toMatchObject({ dependencies: { '@wf/plugin': `^${published.get('@wf/plugin')}` } });
    writeRows(user, 'web');
    await webAnswers(user, globalBin);

    // the user's own Node 20 runs the wf the block installed, in any directory
    const anywhere = join(user.root, 'some-project');
    mkdirSync(anywhere, { recursive: true });
    const node20Env = { ...env, PATH: userPath(node20) };
    const wf = join(globalBin, 'wf');
    const list = await run(wf, ['list', '--json'], { cwd: anywhere, env: node20Env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ ok: true });
    const main = await run(wf, ['run', 'fan-out-and-synthesize', '--json'], {
      cwd: anywhere,
      env: node20Env,
    });
    expect(main.code, main.stderr).toBe(0);
    expect(JSON.parse(main.stdout)).toMatchObject({ ok: true, status: 'completed' });
    expect(existsSync(join(anywhere, '.dsh', 'workflow-runs'))).toBe(true);
  });
});
