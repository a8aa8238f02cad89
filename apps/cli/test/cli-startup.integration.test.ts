// `wf` loads what each verb needs and nothing else (issue 16): the real bin runs with a preload that
// records every module it loads, and each verb is checked against the heavy dependencies it must
// not pay for. Speed itself is measured in bench/startup.bench.ts, never here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const TRACE_HOOK = join(import.meta.dirname, 'fixtures', 'load-trace.mjs');

let p: cli.Project;

/** The module URLs `wf <args>` loaded (paths below the repository, node_modules shortened). */
function loaded(args: readonly string[], project = p, status = 0): string[] {
  const trace = join(project.dir, '..', 'load-trace.txt');
  rmSync(trace, { force: true });
  const out = spawnSync(process.execPath, ['--import', TRACE_HOOK, cli.WF_BIN, ...args], {
    cwd: project.dir,
    env: { ...project.env, WF_LOAD_TRACE: trace },
    encoding: 'utf8',
  });
  expect(out.status, `wf ${args.join(' ')}: ${out.stdout}${out.stderr}`).toBe(status);
  return readFileSync(trace, 'utf8')
    .trim()
    .split('\n')
    .map((url) => url.replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, 'npm:'));
}

const matching = (modules: string[], pattern: RegExp) => modules.filter((m) => pattern.test(m));

const BABEL = /npm:@babel\/parser\//;
const ENGINE = /\/packages\/(engine|sandbox)\/|npm:quickjs|npm:@jitl\//;
// Any of the bridge but its light run-span entry (no schemas, no prelude), and valibot.
const SCHEMAS = /\/packages\/bridge\/(?!dist\/run-span\.js$)|npm:valibot\//;
const PATTERNS = /\/packages\/patterns\//;
// The generated listing index of the shipped workflows: no capsule, no embedded source.
const PATTERNS_INDEX =
  /\/packages\/patterns\/dist\/(shipped-index|internal\/shipped-index\.generated)\.js$/;
// Argument libraries: the command line is node:util parseArgs and command-line.ts.
const ARG_LIBRARIES = /npm:(commander|yargs|minimist|cac|meow)\//;
const COMMAND_LINE = /\/apps\/cli\/(bin\/wf|dist\/cli\/(main|command-line|verbs))\.js$/;
// The catalog (its main entry, discovery, publish, archive): the run-store verbs read runs only.
const CATALOG = /\/packages\/catalog-fs\/dist\/(index|catalog|internal\/catalog-[a-z-]+)\.js$/;
const SCHEMA_WORKER_DEPS = /npm:(ajv|re2js)\//;

beforeAll(() => {
  p = cli.tempProject();
  p.file(
    'five.workflow.js',
    `async function run(wf, args) {
  return wf.parallel([1, 2, 3, 4, 5].map((i) => () => wf.runAgent({ name: 'a' + i, prompt: 'p' })));
}
`,
  );
});
afterAll(() => p?.cleanup());

describe('each verb loads only what it needs', () => {
  it('wf run loads the engine, the sandbox and the parser, but not ajv or re2js', () => {
    const modules = loaded(['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress']);
    expect(matching(modules, ENGINE).length).toBeGreaterThan(0);
    expect(matching(modules, BABEL).length).toBeGreaterThan(0);
    expect(matching(modules, SCHEMA_WORKER_DEPS)).toEqual([]);
  });

  it('wf --version loads nothing but the bin', () => {
    expect(loaded(['--version'])).toEqual([expect.stringMatching(/\/apps\/cli\/bin\/wf\.js$/)]);
  });

  it.each(['--help', 'run --help', 'help show'])('wf %s loads the command line only', (args) => {
    const modules = loaded(args.split(' '));
    expect(modules.filter((m) => !COMMAND_LINE.test(m))).toEqual([]);
  });

  it('a usage error loads the command line only, and exits 2', () => {
    const modules = loaded(['runs', '--bogus'], p, 2);
    expect(modules.filter((m) => !COMMAND_LINE.test(m))).toEqual([]);
  });

  it('wf list reads the shipped index: no capsule, parser, schema or engine', () => {
    const modules = loaded(['list']);
    expect(matching(modules, PATTERNS_INDEX).length).toBeGreaterThan(0);
    expect(matching(modules, PATTERNS).filter((m) => !PATTERNS_INDEX.test(m))).toEqual([]);
    expect(matching(modules, BABEL)).toEqual([]);
    expect(matching(modules, ENGINE)).toEqual([]);
    expect(matching(modules, SCHEMAS)).toEqual([]);
    // No catalog directory here: the catalog is not even opened.
    expect(matching(modules, CATALOG)).toEqual([]);
    expect(matching(modules, ARG_LIBRARIES)).toEqual([]);
  });

  it('wf list with a catalog validates its capsules on every call: an invalid one is INVALID', () => {
    const q = cli.tempProject();
    try {
      mkdirSync(join(q.dir, '.dsh', 'workflows'), { recursive: true });
      q.file('.dsh/workflows/broken.workflow.json', { format: 'dsh.workflow', manifest: {} });
      const modules = loaded(['list'], q);
      // The capsule parser (the bridge and its schema library) loads because there is a capsule.
      expect(matching(modules, SCHEMAS).length).toBeGreaterThan(0);
      expect(matching(modules, BABEL)).toEqual([]);
      expect(matching(modules, ENGINE)).toEqual([]);
      const listed = spawnSync(process.execPath, [cli.WF_BIN, 'list', '--json'], {
        cwd: q.dir,
        env: q.env,
        encoding: 'utf8',
      });
      const doc = JSON.parse(listed.stdout) as { workflows: { name: string; valid: boolean }[] };
      expect(doc.workflows.find((w) => w.name === 'broken')).toMatchObject({ valid: false });
    } finally {
      q.cleanup();
    }
  });

  it.each([['runs'], ['show', 'last']])(
    'wf %s loads neither the parser, the engine, the patterns nor the schemas',
    (...args) => {
      const modules = loaded(args);
      expect(matching(modules, /\/packages\/catalog-fs\//).length).toBeGreaterThan(0);
      expect(matching(modules, BABEL)).toEqual([]);
      expect(matching(modules, ENGINE)).toEqual([]);
      expect(matching(modules, PATTERNS)).toEqual([]);
      expect(matching(modules, SCHEMAS)).toEqual([]);
      expect(matching(modules, CATALOG)).toEqual([]);
      expect(matching(modules, ARG_LIBRARIES)).toEqual([]);
    },
  );
});
