// The README's main job, for real: the shipped bin (built by test/global-setup.ts with `tsc -b` and
// src/startup/bundle.mjs) (`apps/cli/bin/wf.cjs` -> dist/cli/wf.cjs), then through the root `pnpm wf` script.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');

function run(command: string, args: string[]) {
  const r = spawnSync(command, args, { cwd: repo, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

describe('the wf bin', () => {
  it('is a tiny node CommonJS entry that requires the bundle dist/cli/wf.cjs', () => {
    const bin = readFileSync(join(repo, 'apps/cli/bin/wf.cjs'), 'utf8');
    expect(bin.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(bin).toContain("join(root, 'dist', 'cli', 'wf.cjs')");
    expect(bin).toContain('require(bundle).main(argv)');
    const pkg = JSON.parse(readFileSync(join(repo, 'apps/cli/package.json'), 'utf8'));
    expect(pkg.bin).toEqual({ wf: './bin/wf.cjs' });
  });

  it('checks the good example from the built output', () => {
    const r = run(process.execPath, ['apps/cli/bin/wf.cjs', 'check', 'examples/good.workflow.js']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('examples/good.workflow.js: ok\n\n1 file, 0 errors, 0 warnings: ok\n');
  });

  it('refuses the bad example with exit 1', () => {
    const r = run(process.execPath, ['apps/cli/bin/wf.cjs', 'check', 'examples/bad.workflow.js']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('WF_SOURCE_FORBIDDEN_NAME');
  });

  it('runs through the root `./wf` launcher (the README command)', () => {
    const r = run(join(repo, 'wf'), ['check', 'examples/good.workflow.js']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 file, 0 errors, 0 warnings: ok');
  });

  it('runs through the root `pnpm wf` script (the same launcher)', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.wf).toBe('node tooling/repo/wf.mjs');
    const r = run('pnpm', [
      '--silent',
      'wf',
      'check',
      'examples/good.workflow.js',
      'examples/review.workflow.json',
    ]);
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
      // pnpm is not on PATH (the README installs it with npx); the bin test above covers the program.
      return;
    }
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('2 files, 0 errors, 0 warnings: ok');
  });
});
