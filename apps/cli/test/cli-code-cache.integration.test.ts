// The bundles' V8 code caches (src/startup/loader.cjs, written at build time by src/startup/write-code-caches.mjs):
// each verb compiles the bundles it loads from their caches, under the flags it runs with, and a
// cache that does not belong to the bundle's text (a rebuilt or hand-edited bundle, a cache made
// under other V8 flags) is never used: the bundle then compiles as Node would and behaves the same.
// The second half runs the loader on scratch bundles whose stale caches V8 itself would accept
// (same length, other code), so each guard has a case that goes red without it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

// the parser the contract bundle uses
const babel = createRequire(import.meta.url)(cli.parserFile()) as {
  parse(text: string, options: object): { program: unknown };
};

const REPORT_HOOK = join(import.meta.dirname, 'fixtures', 'code-cache-report.cjs');
const LOADER = join(cli.REPO, 'apps', 'cli', 'src', 'startup', 'loader.cjs');

let p: cli.Project;

beforeAll(() => {
  // One recorded run, so that `runs` and `show last` have something to read in any test order.
  p = cli.projectWithOneRun();
});
afterAll(() => p?.cleanup());

/** Runs the real bin; returns its output and which bundles it compiled from their caches. */
function wf(
  args: readonly string[],
  options: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
) {
  const report = join(p.dir, '..', 'code-cache-report.json');
  rmSync(report, { force: true });
  const out = spawnSync(
    process.execPath,
    [...(options.nodeArgs ?? []), '--require', REPORT_HOOK, cli.WF_BIN, ...args],
    {
      cwd: p.dir,
      env: { ...p.env, ...options.env, WF_CODE_CACHE_REPORT: report },
      encoding: 'utf8',
    },
  );
  expect(out.status, `wf ${args.join(' ')}: ${out.stderr}`).toBe(0);
  const used = JSON.parse(readFileSync(report, 'utf8')) as Record<string, boolean>;
  return { stdout: out.stdout, used };
}

const none = {
  'wf.cjs': false,
  'sandbox.cjs': false,
  'engine.cjs': false,
  'contract.cjs': false,
  'parser.cjs': false,
  'workflows.cjs': false,
};

describe('wf compiles its bundles from the code caches written at build time', () => {
  it.each([
    [['runs'], ['wf.cjs']],
    [['show', 'last'], ['wf.cjs']],
    [
      ['check', 'five.workflow.js'],
      ['wf.cjs', 'contract.cjs', 'parser.cjs'],
    ],
    // caches a `wf run` made (profile 'run'), though its sandbox sets --liftoff-only meanwhile
    [
      ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress'],
      ['wf.cjs', 'sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'],
    ],
  ])('wf %j uses the caches of %j', (args, bundles) => {
    const { used } = wf(args);
    expect(used).toEqual({ ...none, ...Object.fromEntries(bundles.map((b) => [b, true])) });
  });

  it('prints the same with the caches off (WF_CODE_CACHE=off)', () => {
    for (const args of [['runs'], ['check', 'five.workflow.js'], ['show', 'last']]) {
      const cached = wf(args);
      const plain = wf(args, { env: { WF_CODE_CACHE: 'off' } });
      expect(plain.used).toEqual(none);
      expect(plain.stdout).toBe(cached.stdout);
    }
  });

  it('under other V8 flags, V8 rejects every cache and wf runs as without them', () => {
    const cached = wf(['check', 'five.workflow.js']);
    const flagged = wf(['check', 'five.workflow.js'], { nodeArgs: ['--max-old-space-size=300'] });
    expect(flagged.used).toEqual(none);
    expect(flagged.stdout).toBe(cached.stdout);
  });
});

describe('the bundles hold no import()', () => {
  it.each(['wf.cjs', 'sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'])(
    '%s calls __wf_import instead: on Node 20, import() fails in a script compiled from a cache',
    (name) => {
      const text = readFileSync(join(cli.REPO, 'apps', 'cli', 'dist', 'cli', name), 'utf8');
      const ast = babel.parse(text, { sourceType: 'script', allowReturnOutsideFunction: true });
      let imports = 0;
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) for (const child of node) walk(child);
        else if (node !== null && typeof node === 'object') {
          if ((node as { type?: unknown }).type === 'Import') imports++;
          for (const [key, value] of Object.entries(node)) if (key !== 'loc') walk(value);
        }
      };
      walk(ast.program);
      expect(imports).toBe(0);
    },
  );

  it('wf.cjs reaches the ES modules it imports (the Restate verbs, trusted-local entries) through __wf_import', () => {
    const text = readFileSync(join(cli.REPO, 'apps', 'cli', 'dist', 'cli', 'wf.cjs'), 'utf8');
    expect(text).toContain('__wf_import("@wf/restate")');
    expect(text).toContain('await __wf_import(loaded.url)');
  });
});

describe('a cache is used only with the bundle text it was made from', () => {
  let dir: string;
  beforeAll(() => {
    dir = join(p.dir, '..', 'scratch');
    mkdirSync(dir);
  });

  /** A bundle whose answer is `value`, ending with the cache key line. Same length for 10-99. */
  function writeBundle(value: number, key: string): string {
    const file = join(dir, 'b.cjs');
    writeFileSync(
      file,
      // import() as src/startup/bundle.mjs rewrites it in the real bundles
      `'use strict';\nexports.answer = () => ${value};\nexports.esm = () => require(${JSON.stringify(LOADER)}).dynamicImport('./m.mjs', undefined, __filename).then((m) => m.name);\n//# wfCodeCacheKey=${key}\n`,
    );
    return file;
  }

  /** Loads the bundle through the loader in a fresh process: its answer and whether the cache was used. */
  function load(file: string, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []) {
    const script = `
      const cache = require(${JSON.stringify(LOADER)});
      cache.useCodeCache([${JSON.stringify(file)}], '');
      const b = require(${JSON.stringify(file)});
      b.esm().then((name) => console.log(JSON.stringify({ answer: b.answer(), esm: name, used: cache.usedCodeCache(${JSON.stringify(file)}), how: cache.compiledWith(${JSON.stringify(file)}) })));`;
    const out = spawnSync(process.execPath, [...nodeArgs, '-e', script], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    expect(out.status, out.stderr).toBe(0);
    return JSON.parse(out.stdout) as { answer: number; esm: string; used: boolean; how: string };
  }

  /** Writes the bundle and its cache (made as the build makes it), a second older than now. */
  function bundleWithCache(value: number, key: string): string {
    const file = writeBundle(value, key);
    writeFileSync(join(dir, 'm.mjs'), "export const name = 'relative import() works';\n");
    rmSync(`${file}.cache`, { force: true });
    load(file, { WF_WRITE_CODE_CACHE: 'b.cjs' });
    readFileSync(`${file}.cache`); // written
    const past = new Date(Date.now() - 10_000);
    utimesSync(file, past, past);
    return file;
  }

  it('a matching cache is used, and import() in the bundle resolves from the bundle', () => {
    const file = bundleWithCache(42, 'k1');
    expect(load(file)).toEqual({
      answer: 42,
      esm: 'relative import() works',
      used: true,
      how: 'cache',
    });
  });

  it('a rebuilt bundle (new key) of the same length ignores the old cache', () => {
    const file = bundleWithCache(42, 'k1');
    const past = new Date(Date.now() - 10_000);
    writeBundle(41, 'k2');
    utimesSync(file, past, past); // not newer than the cache: only the key tells them apart
    // V8 alone would accept the old cache (it checks the length) and answer 42
    expect(load(file)).toMatchObject({ answer: 41, used: false });
  });

  it('a bundle edited by hand after its cache (same key, same length) ignores it', () => {
    const file = bundleWithCache(42, 'k1');
    writeBundle(41, 'k1'); // newer than the cache now
    expect(load(file)).toMatchObject({ answer: 41, used: false });
  });

  it('a cache without its header line is not used', () => {
    const file = bundleWithCache(42, 'k1');
    const cache = readFileSync(`${file}.cache`);
    writeFileSync(`${file}.cache`, cache.subarray(cache.indexOf(0x0a) + 1));
    const past = new Date(Date.now() - 20_000);
    utimesSync(file, past, past);
    expect(load(file)).toMatchObject({ answer: 42, used: false });
  });

  it('a cache made under other V8 flags is not used, and Node compiles the bundle as without the loader', () => {
    const file = bundleWithCache(42, 'k1');
    // the header check sends it to Node's own compile step, not to a vm.Script V8 then rejects
    expect(load(file, {}, ['--stack-size=900'])).toMatchObject({
      answer: 42,
      used: false,
      how: 'node',
    });
  });

  it('WF_CODE_CACHE=off compiles without the cache', () => {
    const file = bundleWithCache(42, 'k1');
    expect(load(file, { WF_CODE_CACHE: 'off' })).toMatchObject({ answer: 42, used: false });
  });
});
