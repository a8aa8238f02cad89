// The root `pnpm wf` launcher builds apps/cli only when its inputs changed since the last build:
// a first call with no stamp builds and says so, the next call runs the bin without building.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'wf-launcher-'));
const stamp = join(dir, 'build-stamp');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const launch = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, [join(root, script), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, WF_BUILD_STAMP: stamp },
  });
const wf = (...args: string[]) => launch('tooling/repo/wf.mjs', ...args);

describe('pnpm wf launcher', { timeout: 120_000 }, () => {
  it('builds when there is no stamp, then runs the bin from any directory', () => {
    const first = wf('list', '--json');
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^wf: building apps\/cli and the \d+ packages it uses/m);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true });
    expect(Number(readFileSync(stamp, 'utf8'))).toBeGreaterThan(0);
  });

  it('does not build again while no source changed', () => {
    const second = wf('list', '--json');
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/building/);
    expect(JSON.parse(second.stdout)).toMatchObject({ ok: true });
  });

  it('./wf at the repository root is the same launcher (the README main job uses it)', () => {
    const viaRoot = launch('wf', 'list', '--json');
    expect(viaRoot.status, viaRoot.stderr).toBe(0);
    expect(viaRoot.stderr).not.toMatch(/building/);
    expect(JSON.parse(viaRoot.stdout)).toMatchObject({ ok: true });
  });
});
