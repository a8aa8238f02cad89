// Installs the plugin the way users do, against real things: a Verdaccio registry on 127.0.0.1
// (third-party packages proxied from npm, `@wf/*` only as published here), the release script,
// the real `dsh plugin --profile headless add` (pnpm), the README's headless patch verbatim, and
// the real DSH 0.1.0-rc.8 headless host against the scripted model, with real DSH children.
// First the offline tarball (while the registry holds no @wf package), then the registry install.
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
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSandbox, REPO_ROOT, runHost, type Sandbox } from '../../dsh-e2e/test/helpers/host.js';
import {
  type ModelServer,
  type RequestView,
  startModelServer,
} from '../../dsh-e2e/test/helpers/model-server.js';
import { type Registry, startRegistry } from './helpers/registry.js';
import {
  copyWorkspace,
  dshPlugin,
  npmEnv,
  packOffline,
  publishable,
  release,
  run,
} from './helpers/release.js';
import { FAN_SOURCE } from '../../dsh-e2e/test/helpers/workflows.js';

let registry: Registry;
let server: ModelServer;
let root: string;
const sandboxes: Sandbox[] = [];
const suiteStarted = Date.now();

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-install-')));
  server = await startModelServer();
  registry = await startRegistry();
}, 180_000);

afterAll(async () => {
  await server?.close();
  await registry?.close();
  for (const s of sandboxes) s.cleanup();
  if (root) rmSync(root, { recursive: true, force: true });
  process.stdout.write(`install suite: ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s\n`);
});

/** The README's headless patch, verbatim: the first yaml block of "Use it in DSH". */
function readmeHeadlessPatch(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it in DSH'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error('README.md: no yaml block under "Use it in DSH"');
  return block[1];
}

const FAN_MANIFEST = {
  name: 'install-fan-out',
  description: 'Two read-only children, then their findings',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 2,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};

/** The parent lists the workflows, then runs the inline fan-out; children answer per angle. */
function script(marker: string) {
  const calls = [
    { name: 'workflow_list', arguments: {} },
    {
      name: 'run_workflow',
      arguments: {
        source: FAN_SOURCE,
        manifest: FAN_MANIFEST,
        args: { angles: ['north', 'south'] },
      },
    },
  ];
  return (_request: unknown, v: RequestView) => {
    if (!v.userText.includes(marker)) {
      const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
      return m ? { text: `finding for ${m[1]}` } : undefined;
    }
    const next = calls[v.toolResults.length];
    return next
      ? { toolCalls: [next] }
      : { text: `RESULTS ${JSON.stringify(v.toolResults.map((t) => t.text))}` };
  };
}

const results = (stdout: string): Record<string, unknown>[] => {
  const m = /RESULTS (.*)$/m.exec(stdout);
  const texts = m?.[1] ? (JSON.parse(m[1]) as string[]) : [];
  return texts.map((t) => {
    try {
      return JSON.parse(t) as Record<string, unknown>;
    } catch {
      return { raw: t };
    }
  });
};

/**
 * A fresh DSH_HOME: `dsh plugin --profile headless add <spec>`, the README's patch as the profile's
 * cordis.patch.yml, then one headless run that lists workflows and runs the inline fan-out.
 */
async function installAndRun(label: string, spec: string, specDir: string) {
  const sandbox = makeSandbox(`wf-install-${label}-`);
  sandboxes.push(sandbox);
  const env = {
    ...npmEnv(registry.userNpmrc, sandbox.home, join(root, 'store')),
    DSH_HOME: sandbox.dshHome,
    DSH_TELEMETRY_DISABLED: '1',
  };
  const add = await dshPlugin('headless', ['add', spec], { cwd: specDir, env });
  expect(add.code, `${add.stdout}${add.stderr}\n${registry.log()}`).toBe(0);
  const profile = join(sandbox.dshHome, 'profiles', 'headless');
  const manifest = JSON.parse(readFileSync(join(profile, 'package.json'), 'utf8'));
  // the package's dsh.bundle made it a profile layer: no hand-written insert row for the plugin
  expect(manifest.dsh.profile.bundles).toContain('@wf/plugin');
  // a fresh profile's patch layer is comments and an empty list: the README says to replace it
  const fresh = readFileSync(join(profile, 'cordis.patch.yml'), 'utf8');
  expect(fresh.replace(/^#.*$/gm, '').trim()).toBe('[]');
  writeFileSync(join(profile, 'cordis.patch.yml'), readmeHeadlessPatch());

  const marker = `SCENARIO-INSTALL-${label.toUpperCase()}`;
  server.setScript(script(marker));
  const before = server.requests.length;
  const run = await runHost({
    sandbox,
    modelUrl: server.url,
    task: `${marker} list the workflows, then run the fan-out`,
    patches: [],
    hmrShim: false,
    timeoutMs: 120_000,
  });
  const requests = server.requests.slice(before);
  process.stdout.write(
    `${label}: dsh plugin add ${spec} ${(add.ms / 1000).toFixed(1)} s; headless run ${(run.ms / 1000).toFixed(1)} s\n`,
  );
  return { add, run, requests, sandbox };
}

function expectWorkflowsRan(r: Awaited<ReturnType<typeof installAndRun>>): void {
  expect(r.run.code, r.run.stderr).toBe(0);
  const [list, fan] = results(r.run.stdout);
  expect(list, r.run.stdout).toMatchObject({ truncated: false });
  const names = ((list?.entries ?? []) as { name: string }[]).map((e) => e.name);
  expect(names).toContain('fan-out-and-synthesize');
  expect(fan, r.run.stdout).toMatchObject({
    status: 'completed',
    result: { findings: ['finding for north', 'finding for south'] },
  });
  // the children were real DSH subagents: the model served their own requests
  const children = r.requests.filter((q) => {
    const text = JSON.stringify(q.messages);
    return text.includes('CHILD-TASK investigate') && !text.includes('SCENARIO-INSTALL');
  });
  expect(children.length).toBeGreaterThanOrEqual(2);
}

describe('the offline tarball', { timeout: 300_000 }, () => {
  it('installs with dsh plugin add ./file.tgz while the registry has no @wf package, and runs', async () => {
    const env = npmEnv(registry.userNpmrc, join(root, 'pack-home'), join(root, 'store'));
    mkdirSync(join(root, 'pack-home'), { recursive: true });
    const out = join(root, 'offline');
    const tarball = await packOffline(out, env);
    expect(tarball.endsWith('wf-plugin-offline.tgz')).toBe(true);
    const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
    expect(listing).toContain('package/node_modules/@wf/engine/dist/index.js');
    expect(listing).toContain('package/node_modules/@wf/sandbox/dist/index.js');
    for (const name of ['@wf/plugin', '@wf/engine', '@wf/bridge', '@wf/sandbox'])
      expect(registry.stored(name), name).toBe(false);

    const r = await installAndRun('offline', './wf-plugin-offline.tgz', out);
    expectWorkflowsRan(r);
    // the registry served the third-party dependencies, and nobody asked it for an @wf package
    expect(registry.log()).toMatch(/GET \/valibot/);
    expect(registry.log()).not.toMatch(/GET \/@wf/);
  });
});

describe('the registry install', { timeout: 300_000 }, () => {
  let workspace: string;
  let published: Map<string, string>;

  it('the release script versions from changesets and publishes every package', async () => {
    workspace = copyWorkspace(join(root, 'workspace'));
    mkdirSync(join(root, 'maintainer'), { recursive: true });
    const env = npmEnv(registry.publisherNpmrc, join(root, 'maintainer'), join(root, 'store'));
    const { install, version, publish } = await release(workspace, env);
    expect(install.code, `${install.stdout}${install.stderr}`).toBe(0);
    expect(version.code, `${version.stdout}${version.stderr}`).toBe(0);
    expect(publish.code, `${publish.stdout}${publish.stderr}\n${registry.log()}`).toBe(0);
    published = publishable(workspace);
    expect([...published.keys()]).toContain('@wf/plugin');
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

  it('dsh plugin --profile headless add @wf/plugin installs it; the host runs workflows', async () => {
    expect(published?.get('@wf/plugin')).toBeDefined();
    const cwd = join(root, 'anywhere');
    mkdirSync(cwd, { recursive: true });
    const r = await installAndRun('registry', '@wf/plugin', cwd);
    expect(
      JSON.parse(readFileSync(join(r.sandbox.dshHome, 'profiles/headless/package.json'), 'utf8')),
    ).toMatchObject({ dependencies: { '@wf/plugin': `^${published.get('@wf/plugin')}` } });
    expectWorkflowsRan(r);
  });

  it('npm i -g @wf/cli from the registry; wf runs from any directory on Node 20', async () => {
    const home = join(root, 'cli-user');
    const prefix = join(root, 'global');
    const anywhere = join(root, 'some-project');
    for (const d of [home, prefix, anywhere]) mkdirSync(d, { recursive: true });
    // the user's own Node (the suite's, >= 20.19) and npm; no pnpm, no clone
    const env = {
      ...npmEnv(registry.userNpmrc, home, join(root, 'store')),
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    };
    const install = await run('npm', ['i', '-g', '@wf/cli', '--prefix', prefix], {
      cwd: anywhere,
      env,
    });
    expect(install.code, `${install.stdout}${install.stderr}`).toBe(0);
    const wf = join(prefix, 'bin', 'wf');
    const list = await run(wf, ['list', '--json'], { cwd: anywhere, env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ ok: true });
    const main = await run(wf, ['run', 'fan-out-and-synthesize', '--json'], { cwd: anywhere, env });
    expect(main.code, main.stderr).toBe(0);
    expect(JSON.parse(main.stdout)).toMatchObject({ ok: true, status: 'completed' });
    expect(existsSync(join(anywhere, '.dsh', 'workflow-runs'))).toBe(true);
    process.stdout.write(
      `npm i -g @wf/cli: ${(install.ms / 1000).toFixed(1)} s; wf run: ${(main.ms / 1000).toFixed(1)} s\n`,
    );
  });
});
