#!/usr/bin/env node
// Packs one self-contained tarball of the DSH plugin: its @wf dependencies are bundled inside it
// (`bundleDependencies`), so `dsh plugin add ./wf-plugin-offline.tgz` needs no registry for @wf.
//
//   pnpm pack:plugin [--out <dir>] [--package @wf/plugin]   (or node tooling/repo/pack-offline.mjs)
//
// Run after a build (`pnpm build`). It packs each package with pnpm (see pnpm-command.mjs). Third-party dependencies of the bundled packages are lifted into
// the tarball's own `dependencies`: the package manager installs them beside the plugin, and Node
// finds them from the bundled copies by walking up the directory tree, in pnpm's isolated layout as
// in a hoisted one.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pnpmCommand } from './pnpm-command.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const argValue = (flag, fallback) => {
  const i = process.argv.indexOf(flag);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const outDir = resolve(argValue('--out', process.cwd()));
const entryName = argValue('--package', '@wf/plugin');

const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));
const fail = (message) => {
  process.stderr.write(`pack-offline: ${message}\n`);
  process.exit(1);
};

/** Every workspace package, by name. */
const workspace = new Map();
for (const group of ['packages', 'apps']) {
  const dir = join(root, group);
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    const pj = join(dir, name, 'package.json');
    if (existsSync(pj))
      workspace.set(readJson(pj).name, { dir: join(dir, name), pkg: readJson(pj) });
  }
}
const entry = workspace.get(entryName);
if (!entry) fail(`no workspace package named ${entryName}`);

// The @wf closure below the entry, through runtime `dependencies` only.
const closure = new Set();
const walk = (name) => {
  for (const dep of Object.keys(workspace.get(name).pkg.dependencies ?? {})) {
    if (!workspace.has(dep) || closure.has(dep)) continue;
    closure.add(dep);
    walk(dep);
  }
};
walk(entryName);

for (const name of [entryName, ...closure]) {
  const { dir, pkg } = workspace.get(name);
  if (pkg.private) fail(`${name} is private; only publishable packages can be bundled`);
  const main = pkg.exports?.['.']?.default;
  if (main && !existsSync(join(dir, main)))
    fail(`${name} is not built (${main} missing): run pnpm build first`);
}

const work = mkdtempSync(join(tmpdir(), 'wf-pack-offline-'));
try {
  // `pnpm pack` is what publishing ships: the `files` list, and `workspace:^` rewritten to versions.
  const packOne = (name) => {
    const dest = join(work, 'tarballs');
    mkdirSync(dest, { recursive: true });
    const before = new Set(readdirSync(dest));
    // the pnpm running this script (a native executable or a JavaScript file), else the one on PATH
    const [cmd, ...pre] = pnpmCommand();
    try {
      execFileSync(cmd, [...pre, 'pack', '--pack-destination', dest], {
        cwd: workspace.get(name).dir,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, pnpm_config_verify_deps_before_run: 'false' },
      });
    } catch (error) {
      if (error?.code === 'ENOENT')
        fail(`cannot start pnpm (${cmd}): run this as \`npx -y pnpm@12.4.2 pack:plugin\``);
      throw error;
    }
    const made = readdirSync(dest).filter((f) => !before.has(f));
    if (made.length !== 1) fail(`pnpm pack of ${name} produced ${made.length} tarballs`);
    return join(dest, made[0]);
  };
  const extract = (tarball, into) => {
    mkdirSync(into, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
  };

  const stage = join(work, 'stage');
  extract(packOne(entryName), stage);
  const manifest = readJson(join(stage, 'package.json'));
  const lifted = { ...manifest.dependencies };
  for (const name of closure) {
    extract(packOne(name), join(stage, 'node_modules', name));
    const bundled = readJson(join(stage, 'node_modules', name, 'package.json'));
    for (const [dep, range] of Object.entries(bundled.dependencies ?? {})) {
      if (closure.has(dep)) continue;
      if (lifted[dep] !== undefined && lifted[dep] !== range)
        fail(`${dep} is wanted at ${lifted[dep]} and at ${range} (by ${name}); align the versions`);
      lifted[dep] = range;
    }
  }
  // Bundled packages are not dependencies to resolve. pnpm skips names in bundleDependencies
  // anyway; leaving them out of `dependencies` keeps any other installer off the registry too.
  // (Without bundling, `dsh plugin add` of a plain `pnpm pack` fails: ERR_PNPM_FETCH_404 @wf/...)
  for (const name of closure) delete lifted[name];
  manifest.dependencies = Object.fromEntries(
    Object.entries(lifted).sort(([a], [b]) => a.localeCompare(b)),
  );
  manifest.bundleDependencies = [...closure].sort();
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  mkdirSync(outDir, { recursive: true });
  // A stable name, so the README's install line works for every version.
  const base = `${manifest.name.replace(/^@/, '').replace('/', '-')}-offline.tgz`;
  const out = join(outDir, base);
  rmSync(out, { force: true });
  // A plain tar of `package/` is the registry tarball format; npm pack would re-apply `files`
  // and drop nothing we need, but tar keeps the bundled node_modules exactly as staged.
  const wrap = join(work, 'wrap');
  mkdirSync(wrap);
  execFileSync('mv', [stage, join(wrap, 'package')]);
  execFileSync('tar', ['-czf', out, '-C', wrap, 'package']);
  process.stdout.write(`${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
