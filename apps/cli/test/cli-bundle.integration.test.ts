// The bin runs the one-file bundle dist/cli/wf.cjs (src/startup/bundle.mjs). In a clone, a bundle older
// than the last `tsc -b` (tsconfig.tsbuildinfo) is stale: the bin bundles again before running it,
// so `tsc -b` alone never leaves `wf` running old code. A published install has no buildinfo: it
// runs the bundle it shipped, and says so when that is missing. Each case runs on a copy of the
// built package in a temp dir, so the repository's own bundle is never touched.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const PACKAGE = join(cli.REPO, 'apps', 'cli');
const STUB = "exports.main = async () => { process.stdout.write('the old bundle ran\\n'); };\n";

let temp: string | undefined;
afterEach(() => {
  if (temp) rmSync(temp, { recursive: true, force: true });
  temp = undefined;
});

/** A copy of the built apps/cli (bin, dist, src, manifest, buildinfo) over the real deps. */
function copyPackage(): string {
  temp = mkdtempSync(join(tmpdir(), 'wf-cli-bundle-'));
  const pkg = join(temp, 'cli');
  for (const entry of ['bin', 'dist', 'src', 'package.json', 'tsconfig.tsbuildinfo'])
    cpSync(join(PACKAGE, entry), join(pkg, entry), { recursive: true });
  symlinkSync(join(PACKAGE, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  return pkg;
}

function wf(pkg: string, args: readonly string[]) {
  const project = cli.tempProject();
  try {
    return spawnSync(process.execPath, [join(pkg, 'bin', 'wf.cjs'), ...args], {
      cwd: project.dir,
      env: project.env,
      encoding: 'utf8',
    });
  } finally {
    project.cleanup();
  }
}

/** Replaces the package's bundle with a stub that says it ran, dated before the last build. */
function staleBundle(pkg: string): void {
  const bundle = join(pkg, 'dist', 'cli', 'wf.cjs');
  writeFileSync(bundle, STUB);
  const built = statSync(join(pkg, 'tsconfig.tsbuildinfo')).mtime;
  const before = new Date(built.getTime() - 60_000);
  utimesSync(bundle, before, before);
}

describe('the bin and its bundle', () => {
  it('bundles again when the build is newer than the bundle, then runs the new one', () => {
    const pkg = copyPackage();
    staleBundle(pkg);
    const first = wf(pkg, ['list']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('wf: bundling dist/cli');
    expect(first.stdout).not.toContain('the old bundle ran');
    expect(first.stdout).toContain('fan-out-and-synthesize');
    const second = wf(pkg, ['list']);
    expect(second.stderr).toBe('');
    expect(second.stdout).toContain('fan-out-and-synthesize');
  });

  it('a published install (no buildinfo) runs the bundle it has, unchecked', () => {
    const pkg = copyPackage();
    staleBundle(pkg);
    rmSync(join(pkg, 'tsconfig.tsbuildinfo'));
    const r = wf(pkg, ['list']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('the old bundle ran\n');
  });

  it('a published install without its bundle exits 1 and names the missing file', () => {
    const pkg = copyPackage();
    rmSync(join(pkg, 'tsconfig.tsbuildinfo'));
    rmSync(join(pkg, 'dist', 'cli', 'wf.cjs'));
    const r = wf(pkg, ['list']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${join(pkg, 'dist', 'cli', 'wf.cjs')} is missing`);
  });

  it.each([
    ['sandbox.cjs', ['run', 'x.workflow.js'], ['list']],
    ['engine.cjs', ['run', 'x.workflow.js'], ['list']],
    ['contract.cjs', ['check', 'x.workflow.js'], ['list']],
    ['workflows.cjs', ['list'], ['runs']],
  ])(
    'a published install without %s exits 1 on the verbs that need it, and names it',
    (name, args, light) => {
      const pkg = copyPackage();
      rmSync(join(pkg, 'tsconfig.tsbuildinfo'));
      rmSync(join(pkg, 'dist', 'cli', name));
      const r = wf(pkg, args);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${join(pkg, 'dist', 'cli', name)} is missing`);
      // the light verbs do not need it
      expect(wf(pkg, light).status).toBe(0);
    },
  );

  it('--version answers from the manifest without the bundle', () => {
    const pkg = copyPackage();
    rmSync(join(pkg, 'dist', 'cli', 'wf.cjs'));
    const r = wf(pkg, ['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
