// `wf check` end to end: spawns the real command line (from source, through tsx, so the test
// does not depend on a build) on real files and asserts its output and exit codes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCapsule } from '@wf/bridge';
import { describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const mainTs = join(repo, 'apps/cli/src/cli/main.ts');
// An absolute loader URL, so the spawned process finds tsx from any working directory.
const tsx = pathToFileURL(join(repo, 'node_modules/tsx/dist/loader.mjs')).href;
const entry = `const { main } = await import(${JSON.stringify(pathToFileURL(mainTs).href)}); await main(['node', 'wf', ...process.argv.slice(1)]);`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function wf(args: string[], cwd = repo): Run {
  const r = spawnSync(
    process.execPath,
    ['--import', tsx, '--conditions=@wf/source', '--input-type=module', '-e', entry, ...args],
    { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'wf-check-'));
}

describe('wf check', () => {
  it('passes the good example with exit 0 and a clean summary', () => {
    const r = wf(['check', 'examples/good.workflow.js']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('examples/good.workflow.js: ok\n\n1 file, 0 errors, 0 warnings: ok\n');
  });

  it('refuses the bad example with exit 1, compiler-style lines and indented hints', () => {
    const r = wf(['check', 'examples/bad.workflow.js']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain(
      'examples/bad.workflow.js:7:17  WF_SOURCE_FORBIDDEN_NAME  `process` is a host name and is not available in a workflow',
    );
    expect(lines[lines.indexOf(lines.find((l) => l.includes(':7:17'))!) + 1]).toBe(
      '    hint: read configuration from args (the second parameter of run) instead of process',
    );
    for (const code of [
      'WF_SOURCE_FORBIDDEN_NAME',
      'WF_SOURCE_NODE_MODULE',
      'WF_SOURCE_FORBIDDEN_MEMBER',
      'WF_SOURCE_FORBIDDEN_STATEMENT',
      'WF_SOURCE_LINT_UNAWAITED_AGENT',
      'WF_SOURCE_LINT_UNBOUNDED_LOOP',
    ]) {
      expect(r.stdout).toContain(`  ${code}  `);
    }
    // every finding line is file:line:col  CODE  message, followed by its hint
    const findings = lines.filter((l) => l.startsWith('examples/'));
    expect(findings.length).toBeGreaterThanOrEqual(10);
    for (const l of findings)
      expect(l).toMatch(/^examples\/bad\.workflow\.js:\d+:\d+ {2}WF_[A-Z_]+ {2}\S/);
    expect(lines.filter((l) => l.startsWith('    hint: '))).toHaveLength(findings.length);
    expect(lines.at(-1)).toMatch(/^1 file, \d+ errors, 2 warnings: 1 file refused$/);
  });

  it('checks the source field of a capsule and says where positions point', () => {
    const ok = wf(['check', 'examples/review.workflow.json']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('examples/review.workflow.json: ok');

    const dir = tempDir();
    writeFileSync(
      join(dir, 'evil.workflow.json'),
      JSON.stringify({
        format: 'dsh.workflow',
        source: 'async function run(wf) {\n  return process.env;\n}',
      }),
    );
    const bad = wf(['check', 'evil.workflow.json'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('evil.workflow.json#source:2:10  WF_SOURCE_FORBIDDEN_NAME');
  });

  it('exits 0 with warnings only, and 1 for the same file under --profile authoring', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'w.js'),
      'async function run(wf, args) {\n  wf.runAgent({ prompt: args.p });\n}\n',
    );
    const loose = wf(['check', 'w.js'], dir);
    expect(loose.code).toBe(0);
    expect(loose.stdout).toContain('w.js:2:3  WF_SOURCE_LINT_UNAWAITED_AGENT  warning: ');
    expect(loose.stdout.trimEnd().split('\n').at(-1)).toBe('1 file, 0 errors, 1 warning: ok');
    const strict = wf(['check', '--profile', 'authoring', 'w.js'], dir);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('w.js:2:3  WF_SOURCE_LINT_UNAWAITED_AGENT  `wf.runAgent(...)`');
  });

  it('prints one JSON document with --json', () => {
    const r = wf(['check', '--json', 'examples/good.workflow.js', 'examples/bad.workflow.js']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      ok: boolean;
      files: {
        file: string;
        ok: boolean;
        errors: { code: string; line: number; column: number; hint: string }[];
        warnings: unknown[];
      }[];
    };
    expect(doc.ok).toBe(false);
    expect(doc.files.map((f) => [f.file, f.ok])).toEqual([
      ['examples/good.workflow.js', true],
      ['examples/bad.workflow.js', false],
    ]);
    expect(doc.files[0]?.errors).toEqual([]);
    expect(doc.files[1]?.errors[0]).toMatchObject({
      code: 'WF_SOURCE_FORBIDDEN_NAME',
      line: 4,
      column: 12,
    });
    expect(doc.files[1]?.warnings).toHaveLength(2);
    expect(typeof doc.files[1]?.errors[0]?.hint).toBe('string');
  });

  it('exits 2 naming a missing file, and still checks the others', () => {
    const r = wf(['check', 'examples/missing.workflow.js', 'examples/good.workflow.js']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('wf check: WF_CLI_USAGE: examples/missing.workflow.js: no such file\n');
    expect(r.stdout).toContain('examples/good.workflow.js: ok');
    expect(r.stdout).toContain('1 file could not be checked');
  });

  it('exits 2 for unreadable JSON, a capsule without source, a directory and an unknown extension', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'broken.workflow.json'), '{ "source": ');
    writeFileSync(join(dir, 'nosource.workflow.json'), '{ "format": "dsh.workflow" }');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    mkdirSync(join(dir, 'folder.js'));
    for (const [file, text] of [
      ['broken.workflow.json', 'broken.workflow.json: not valid JSON ('],
      ['nosource.workflow.json', 'nosource.workflow.json: a capsule needs a string "source" field'],
      ['folder.js', 'folder.js: is a directory'],
      ['notes.txt', 'notes.txt: not a workflow file'],
    ] as const) {
      const r = wf(['check', file], dir);
      expect(r.code, file).toBe(2);
      expect(r.stderr, file).toContain(text);
    }
  });

  it('refuses a FIFO, a device and a file that is not UTF-8 by what they are, without blocking on them', () => {
    const dir = tempDir();
    execFileSync('mkfifo', [join(dir, 'fifo.js')]);
    writeFileSync(join(dir, 'latin1.js'), Buffer.from([0x2f, 0x2f, 0xe9, 0x0a]));
    for (const [file, text] of [
      ['fifo.js', 'fifo.js is a FIFO (named pipe), not a file; refusing to read it'],
      ['/dev/null', '/dev/null: not a workflow file'],
      ['latin1.js', 'latin1.js is not valid UTF-8 text'],
    ] as const) {
      const r = wf(['check', file], dir);
      expect(r.code, file).toBe(2);
      expect(r.stderr, file).toContain(text);
    }
    // A device with a workflow's extension: classified, never opened (a read would never end).
    symlinkSync('/dev/zero', join(dir, 'zero.js'));
    const zero = wf(['check', 'zero.js'], dir);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('zero.js is a character device, not a file');
  });

  it('reports an input error in --json as a per-file problem', () => {
    const r = wf(['check', '--json', 'nope.js']);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout) as {
      ok: boolean;
      files: { problem?: { code: string; message: string } }[];
    };
    expect(doc.ok).toBe(false);
    expect(doc.files[0]?.problem).toEqual({
      code: 'WF_CLI_USAGE',
      message: 'nope.js: no such file',
    });
  });

  it('exits 2 on usage errors: no file, an unknown flag, a bad profile', () => {
    expect(wf(['check']).code).toBe(2);
    const flag = wf(['check', '--bogus', 'x.js']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--bogus'");
    const profile = wf(['check', '--profile', 'strict', 'examples/good.workflow.js']);
    expect(profile.code).toBe(2);
    expect(profile.stderr).toContain("--profile must be 'default' or 'authoring'");
    const json = wf(['check', '--json', '--bogus']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'WF_CLI_USAGE' } });
  });

  it('prints help with exit 0', () => {
    const r = wf(['check', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: wf check [options] <file...>');
    expect(r.stdout).toContain('Exit codes: 0 no errors');
  });

  it('checks a hostile 100,000-deep nest without crashing', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'deep.js'),
      `async function run(wf) { return ${'['.repeat(100_000)}${']'.repeat(100_000)}; }`,
    );
    const r = wf(['check', 'deep.js'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('WF_SOURCE_TOO_DEEP');
  });

  it('ships a valid dsh.workflow v1 capsule whose source is the good example', () => {
    const capsule = JSON.parse(readFileSync(join(repo, 'examples/review.workflow.json'), 'utf8'));
    const parsed = parseCapsule(capsule);
    expect(parsed.ok ? [] : parsed.issues).toEqual([]);
    expect(capsule.source).toBe(readFileSync(join(repo, 'examples/good.workflow.js'), 'utf8'));
  });
});
