// The layer table in docs/ is generated from the graph check's allowed imports and cannot drift.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');
const script = join(here, '..', 'gen-layers.mjs');
const BEGIN = '<!-- BEGIN generated:layers (tooling/repo/gen-layers.mjs) -->';
const END = '<!-- END generated:layers -->';
let root = '';

function run(args: string[]): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, ...args], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stderr: string };
    return { code: err.status, out: err.stderr };
  }
}

/** A scratch repository: the real graph check, one package.json per package it names, two docs. */
function scratch() {
  root = mkdtempSync(join(tmpdir(), 'gen-layers-'));
  mkdirSync(join(root, 'tooling', 'repo'), { recursive: true });
  copyFileSync(
    join(repo, 'tooling/repo/graph-check.mjs'),
    join(root, 'tooling/repo/graph-check.mjs'),
  );
  const allowed = JSON.parse(
    execFileSync(process.execPath, [join(repo, 'tooling/repo/graph-check.mjs'), '--layers'], {
      encoding: 'utf8',
    }),
  ) as Record<string, string[]>;
  for (const name of Object.keys(allowed)) {
    const folder = name === '@wf/cli' || name === '@wf/plugin' ? 'apps' : 'packages';
    const dir = join(root, folder, name.slice('@wf/'.length));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, description: `${name} here` }));
  }
  mkdirSync(join(root, 'docs'));
  for (const file of ['architecture.md', 'design.md'])
    writeFileSync(join(root, 'docs', file), `# ${file}\n\n${BEGIN}\n${END}\n\nafter\n`);
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = '';
});

describe('gen-layers', () => {
  it('the repository is up to date (--check)', () => {
    expect(run(['--check'])).toEqual({ code: 0, out: 'gen-layers: up to date\n' });
  });

  it('writes one row per package the graph check names, then --check passes', () => {
    scratch();
    expect(run(['--check', '--root', root]).code).toBe(1);
    expect(run(['--root', root]).code).toBe(0);
    expect(run(['--check', '--root', root]).code).toBe(0);
    const text = readFileSync(join(root, 'docs/design.md'), 'utf8');
    expect(text.startsWith('# design.md\n\n')).toBe(true);
    expect(text.endsWith(`${END}\n\nafter\n`)).toBe(true);
    expect(text).toContain('| [`@wf/restate`](../packages/restate/README.md) | @wf/restate here |');
    expect(text).toContain('Every package may import `@wf/errors`, which imports nothing.');
    // restate may import the sandbox, but the engine already does: no edge of its own
    expect(text).toContain('wf_restate --> wf_engine');
    expect(text).not.toContain('wf_restate --> wf_sandbox');
    expect(text).toBe(
      readFileSync(join(root, 'docs/architecture.md'), 'utf8').replace(
        '# architecture.md',
        '# design.md',
      ),
    );
  });

  it('--check fails on a hand edit of the table and on a new allowed import', () => {
    scratch();
    run(['--root', root]);
    const doc = join(root, 'docs/architecture.md');
    const written = readFileSync(doc, 'utf8');
    writeFileSync(doc, written.replace('@wf/bridge here', 'the bridge'));
    expect(run(['--check', '--root', root])).toEqual({
      code: 1,
      out: 'gen-layers: docs/architecture.md is stale: run `node tooling/repo/gen-layers.mjs`\n',
    });
    writeFileSync(doc, written);
    const check = join(root, 'tooling/repo/graph-check.mjs');
    writeFileSync(
      check,
      readFileSync(check, 'utf8').replace(
        "'@wf/patterns': [KIT,",
        "'@wf/patterns': [KIT, '@wf/sandbox',",
      ),
    );
    expect(run(['--check', '--root', root])).toEqual({
      code: 1,
      out: 'gen-layers: docs/architecture.md, docs/design.md are stale: run `node tooling/repo/gen-layers.mjs`\n',
    });
  });

  it('refuses a document without the markers, and a package the check names without a manifest', () => {
    scratch();
    writeFileSync(join(root, 'docs/design.md'), '# no markers\n');
    expect(run(['--root', root])).toEqual({
      code: 1,
      out: 'gen-layers: docs/design.md lacks the generated:layers markers\n',
    });
    scratch();
    rmSync(join(root, 'packages/restate/package.json'));
    expect(run(['--root', root])).toEqual({
      code: 1,
      out: 'gen-layers: @wf/restate is in graph-check.mjs but has no package.json\n',
    });
  });
});
