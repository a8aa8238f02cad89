// The published shape of every package users install (packages/* and apps/*): our own rules for
// the manifest, then publint --strict on what `pnpm pack` would ship (needs the build: it checks
// that every export target exists).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../dsh-e2e/test/helpers/host.js';
import { pnpmBinDir } from './helpers/release.js';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  engines?: { node?: string };
  publishConfig?: { access?: string };
  files?: string[];
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

// publint's exports hide package.json; its bin lives beside it in the installed package
const PUBLINT = join(
  realpathSync(join(REPO_ROOT, 'tests/install/node_modules/publint')),
  'src/cli.js',
);

const packages = ['packages', 'apps'].flatMap((group) =>
  readdirSync(join(REPO_ROOT, group))
    .map((name) => `${group}/${name}`)
    .filter((dir) => existsSync(join(REPO_ROOT, dir, 'package.json'))),
);
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Manifest;

describe('every package users install is publishable', { timeout: 60_000 }, () => {
  it.each(packages)('%s: manifest', (dir) => {
    const pkg = manifest(dir);
    expect(pkg.private, `${dir} must not be private`).toBeUndefined();
    expect(pkg.license).toBe('Apache-2.0');
    expect(existsSync(join(REPO_ROOT, dir, 'LICENSE')), `${dir}/LICENSE`).toBe(true);
    expect(existsSync(join(REPO_ROOT, dir, 'README.md')), `${dir}/README.md`).toBe(true);
    expect(pkg.repository).toMatchObject({ type: 'git', directory: dir });
    expect(pkg.engines?.node).toBe('>=20.19');
    expect(pkg.publishConfig?.access).toBe('public');
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'CHANGELOG.md']));
    expect(pkg.exports?.['./package.json']).toBe('./package.json');
    expect(Object.keys(pkg.exports?.['.'] as object)).toEqual(['@wf/source', 'types', 'default']);
    // the host's packages are the host's: never bundled or installed as our dependencies
    for (const dep of Object.keys(pkg.dependencies ?? {}))
      expect(dep, `${dir}: ${dep} belongs in peerDependencies`).not.toMatch(/^@deepseek-ai\//);
    for (const [dep, range] of Object.entries(pkg.peerDependencies ?? {})) {
      expect(dep).toBe('@deepseek-ai/dsh');
      expect(range).toBe('>=0.1.0-rc.8 <0.2.0');
      expect(pkg.peerDependenciesMeta?.[dep]?.optional, 'nothing imports it at runtime').toBe(true);
    }
  });

  it.each(packages)('%s: publint --strict', (dir) => {
    const out = execFileSync(process.execPath, [PUBLINT, '--strict', join(REPO_ROOT, dir)], {
      encoding: 'utf8',
      // publint packs with `pnpm pack`
      env: {
        ...process.env,
        PATH: `${pnpmBinDir()}:${process.env.PATH ?? ''}`,
        pnpm_config_verify_deps_before_run: 'false',
      },
    });
    expect(out).toContain('All good!');
  });
});
