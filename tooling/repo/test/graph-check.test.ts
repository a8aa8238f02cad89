// The graph check must fail on each kind of layering violation it claims to catch.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'graph-check.mjs');
let root = '';

function pkg(dir: string, json: object, files: Record<string, string> = {}, refs: string[] = []) {
  mkdirSync(join(root, dir, 'src'), { recursive: true });
  writeFileSync(join(root, dir, 'package.json'), JSON.stringify(json));
  writeFileSync(
    join(root, dir, 'tsconfig.json'),
    JSON.stringify({ references: refs.map((path) => ({ path })) }),
  );
  for (const [name, text] of Object.entries(files))
    writeFileSync(join(root, dir, 'src', name), text);
}

function run(): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, '--root', root], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stderr: string };
    return { code: err.status, out: err.stderr };
  }
}

function base(solution: string[]) {
  root = mkdtempSync(join(tmpdir(), 'graph-'));
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ references: solution.map((path) => ({ path })) }),
  );
  pkg('packages/bridge', { name: '@wf/bridge' }, { 'index.ts': 'export const a = 1;' });
}

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('graph check', () => {
  it('accepts a layering that docs/design.md#layers allows', () => {
    base(['packages/bridge', 'packages/catalog-fs']);
    pkg(
      'packages/catalog-fs',
      { name: '@wf/catalog-fs', dependencies: { '@wf/bridge': 'workspace:^' } },
      { 'index.ts': "import { a } from '@wf/bridge';\nexport const b = a;" },
      ['../bridge'],
    );
    expect(run()).toMatchObject({ code: 0 });
  });

  it('refuses an upward dependency', () => {
    base(['packages/bridge', 'packages/sandbox']);
    pkg(
      'packages/sandbox',
      { name: '@wf/sandbox', dependencies: { '@wf/bridge': 'workspace:^' } },
      { 'index.ts': "import { a } from '@wf/bridge';\nexport const b = a;" },
      ['../bridge'],
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'depends on @wf/bridge, which the layering (docs/design.md#layers) does not allow below @wf/sandbox',
    );
  });

  it('lets the lowest layers import the @wf/errors kit, and the kit import nothing', () => {
    base(['packages/bridge', 'packages/errors', 'packages/sandbox']);
    pkg('packages/errors', { name: '@wf/errors' }, { 'index.ts': 'export class WfError {}' });
    pkg(
      'packages/sandbox',
      { name: '@wf/sandbox', dependencies: { '@wf/errors': 'workspace:^' } },
      { 'index.ts': "import { WfError } from '@wf/errors';\nexport class E extends WfError {}" },
      ['../errors'],
    );
    expect(run()).toMatchObject({ code: 0 });

    pkg(
      'packages/errors',
      { name: '@wf/errors', dependencies: { '@wf/bridge': 'workspace:^' } },
      { 'index.ts': "import { a } from '@wf/bridge';\nexport const b = a;" },
      ['../bridge'],
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'depends on @wf/bridge, which the layering (docs/design.md#layers) does not allow below @wf/errors',
    );
  });

  it('refuses an import that package.json does not declare, and a deep import', () => {
    base(['packages/bridge', 'packages/catalog-fs']);
    pkg(
      'packages/catalog-fs',
      { name: '@wf/catalog-fs' },
      { 'index.ts': "import { a } from '@wf/bridge/src/index.ts';\nexport const b = a;" },
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('deep import @wf/bridge/src/index.ts');
    expect(r.out).toContain('imports @wf/bridge, not in package.json dependencies');
  });

  it('refuses tsconfig references that disagree with package.json', () => {
    base(['packages/bridge', 'packages/catalog-fs']);
    pkg(
      'packages/catalog-fs',
      { name: '@wf/catalog-fs', dependencies: { '@wf/bridge': 'workspace:^' } },
      {
        'index.ts': 'export {};',
      },
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('tsconfig.json lacks a reference to @wf/bridge');
  });

  it('refuses export * in an index and a dependency cycle', () => {
    base(['packages/bridge', 'packages/catalog-fs']);
    pkg(
      'packages/bridge',
      { name: '@wf/bridge', devDependencies: { '@wf/catalog-fs': 'workspace:^' } },
      {
        'index.ts': "export * from './internal/x.js';",
      },
    );
    pkg(
      'packages/catalog-fs',
      { name: '@wf/catalog-fs', dependencies: { '@wf/bridge': 'workspace:^' } },
      { 'index.ts': 'export {};' },
      ['../bridge'],
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('uses `export *`');
    expect(r.out).toMatch(
      /cycle: @wf\/bridge -> @wf\/catalog-fs -> @wf\/bridge|cycle: @wf\/catalog-fs -> @wf\/bridge -> @wf\/catalog-fs/,
    );
  });

  it('keeps the two apps apart: the CLI may not depend on or import the plugin', () => {
    base(['packages/bridge', 'apps/plugin', 'apps/cli']);
    pkg(
      'apps/plugin',
      { name: '@wf/plugin', dependencies: { '@wf/bridge': 'workspace:^' } },
      { 'index.ts': "import { a } from '@wf/bridge';\nexport const p = a;" },
      ['../../packages/bridge'],
    );
    pkg(
      'apps/cli',
      { name: '@wf/cli', dependencies: { '@wf/plugin': 'workspace:^' } },
      { 'index.ts': "import { p } from '@wf/plugin';\nexport const c = p;" },
      ['../plugin'],
    );
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'depends on @wf/plugin, which the layering (docs/design.md#layers) does not allow below @wf/cli',
    );
    expect(r.out).toContain('apps/cli/src/index.ts: imports @wf/plugin, not allowed below @wf/cli');
  });

  it('accepts both apps over the packages they use', () => {
    base(['packages/bridge', 'apps/plugin', 'apps/cli']);
    for (const [dir, name] of [
      ['apps/plugin', '@wf/plugin'],
      ['apps/cli', '@wf/cli'],
    ] as const)
      pkg(
        dir,
        { name, dependencies: { '@wf/bridge': 'workspace:^' } },
        { 'index.ts': "import { a } from '@wf/bridge';\nexport const b = a;" },
        ['../../packages/bridge'],
      );
    expect(run()).toMatchObject({ code: 0 });
  });

  it('refuses a bench that runs the sources: the @wf/source condition or an import of src/', () => {
    base(['packages/bridge']);
    const bench = (
      files: Record<string, string>,
      script = 'node --import tsx bench/a.bench.ts',
    ) => {
      pkg('packages/bridge', { name: '@wf/bridge', scripts: { bench: script } });
      mkdirSync(join(root, 'packages/bridge/bench'), { recursive: true });
      for (const [name, text] of Object.entries(files))
        writeFileSync(join(root, 'packages/bridge/bench', name), text);
    };
    // By name (dist/), with types from the sources: accepted.
    bench({
      'a.bench.ts': [
        "import { a } from '@wf/bridge';",
        "import type { A } from '../src/index.js';",
        "const m = (await import('../dist/x.js')) as typeof import('../src/x.js');",
      ].join('\n'),
    });
    expect(run()).toMatchObject({ code: 0 });

    bench({ 'a.bench.ts': "import { a } from '../src/index.js';" });
    let r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "packages/bridge/bench/a.bench.ts: imports ../src/index.js, the package's sources",
    );

    bench({ 'a.bench.ts': "const { a } = await import('../src/index.js');" });
    expect(run().out).toContain('imports ../src/index.js');

    bench(
      { 'a.bench.ts': "import { a } from '@wf/bridge';" },
      'node --import tsx --conditions=@wf/source bench/a.bench.ts',
    );
    r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('script "bench" runs the sources (@wf/source condition)');
  });

  it('refuses a package missing from the solution tsconfig', () => {
    base([]);
    const r = run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('solution lacks a reference to packages/bridge');
  });
});
