// `wf` loads what each verb needs and nothing else: the real bin runs with a preload that
// records every module it loads, and each verb is checked against the heavy dependencies it must
// not pay for. The CLI itself is one CommonJS bundle (dist/cli/wf.cjs, src/startup/bundle.mjs): the
// light verbs load the bin and the bundle and no other file; the engine, the sandbox and the
// contract are two more bundles (dist/cli/engine.cjs, contract.cjs), loaded by the verbs that need
// them, and @babel/parser a copy of its one file beside them (parser.cjs), each compiled from its
// code cache (src/startup/loader.cjs, tested in cli-code-cache.integration.test.ts). Speed is measured
// in bench/startup.bench.ts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const TRACE_HOOK = join(import.meta.dirname, 'fixtures', 'load-trace.mjs');
const BUILTIN_TRACE = join(import.meta.dirname, 'fixtures', 'builtin-trace.cjs');
const TIERING_REPORT = join(import.meta.dirname, 'fixtures', 'wasm-tiering-report.cjs');
const END_TRACE = join(import.meta.dirname, 'fixtures', 'worker-end-trace.cjs');

let p: cli.Project;

/** The module URLs `wf <args>` loaded (paths below the repository, node_modules shortened). */
function loaded(args: readonly string[], project = p, status = 0): string[] {
  return loadOrder(args, project, status).filter((line) => !/^(worker|compile):/.test(line));
}

/**
 * loaded(), with a `worker:<url>` line where each worker thread was started and a `compile:<url>`
 * line where each bundle was compiled (src/startup/loader.cjs), in order.
 */
function loadOrder(args: readonly string[], project = p, status = 0): string[] {
  const trace = join(project.dir, '..', 'load-trace.txt');
  rmSync(trace, { force: true });
  const out = spawnSync(process.execPath, ['--import', TRACE_HOOK, cli.WF_BIN, ...args], {
    cwd: project.dir,
    env: { ...project.env, WF_LOAD_TRACE: trace },
    encoding: 'utf8',
  });
  expect(out.status, `wf ${args.join(' ')}: ${out.stdout}${out.stderr}`).toBe(status);
  // once each: the main module passes both the ES module hook and the require loader; but every
  // worker thread started is a line of its own
  const urls = readFileSync(trace, 'utf8').trim().split('\n');
  const seen = new Set<string>();
  const once = urls.filter((url) => url.startsWith('worker:') || (!seen.has(url) && seen.add(url)));
  return once.map((url) => url.replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, 'npm:'));
}

/** The public built-in modules `wf <args>` loaded (fixtures/builtin-trace.cjs), stdout a pipe. */
function builtinsLoaded(args: readonly string[]): { builtins: string[]; stdout: string } {
  const trace = join(p.dir, '..', 'builtin-trace.txt');
  rmSync(trace, { force: true });
  const out = spawnSync(process.execPath, ['--require', BUILTIN_TRACE, cli.WF_BIN, ...args], {
    cwd: p.dir,
    env: { ...p.env, WF_BUILTIN_TRACE: trace },
    encoding: 'utf8',
  });
  expect(out.status, out.stderr).toBe(0);
  return { builtins: readFileSync(trace, 'utf8').trim().split('\n'), stdout: out.stdout };
}

const matching = (modules: string[], pattern: RegExp) => modules.filter((m) => pattern.test(m));

const BABEL = /npm:@babel\/parser\//;
const ENGINE = /\/packages\/(engine|sandbox)\/|npm:quickjs|npm:@jitl\//;
// Any of the bridge but its light entries (run-span, terminal-text, and run-records: the record
// schemas as plain checks), so no capsule schemas, no prelude, and valibot.
const SCHEMAS =
  /\/packages\/bridge\/(?!dist\/(run-span|terminal-text|run-records)\.js$)|npm:valibot\//;
// The generated listing index of the shipped workflows: no capsule, no embedded source.
const PATTERNS_INDEX =
  /\/packages\/patterns\/dist\/(shipped-index|internal\/shipped-index\.generated)\.js$/;
// Argument libraries: the command line is node:util parseArgs and command-line.ts.
const ARG_LIBRARIES = /npm:(commander|yargs|minimist|cac|meow)\//;
const BIN = /\/apps\/cli\/bin\/wf\.cjs$/;
const BUNDLE = /\/apps\/cli\/dist\/cli\/wf\.cjs$/;
/** The bin's loader of the bundles' code caches. */
const CODE_CACHE = /\/apps\/cli\/src\/startup\/loader\.cjs$/;
/** The whole program of a light verb: the bin, its code-cache loader, the bundle, and no other file. */
const BIN_AND_BUNDLE = [
  expect.stringMatching(BIN),
  expect.stringMatching(CODE_CACHE),
  expect.stringMatching(BUNDLE),
];
/** The bin's starter of the sandbox of `wf run` and `wf resume`. */
const EARLY_SANDBOX = /\/apps\/cli\/src\/startup\/early-sandbox\.cjs$/;
const SCHEMA_WORKER_DEPS = /npm:(ajv|re2js)\//;
const ENGINE_BUNDLE = /\/apps\/cli\/dist\/cli\/engine\.cjs$/;
const SANDBOX_BUNDLE = /\/apps\/cli\/dist\/cli\/sandbox\.cjs$/;
const CONTRACT_BUNDLE = /\/apps\/cli\/dist\/cli\/contract\.cjs$/;
/** @babel/parser's lib/index.js, copied beside the bundles by src/startup/bundle.mjs. */
const PARSER_COPY = expect.stringMatching(/\/apps\/cli\/dist\/cli\/parser\.cjs$/);
/** @wf/bridge (capsule schemas, prelude) with valibot, and @wf/patterns: the verbs that read workflows. */
const WORKFLOWS_BUNDLE_FILE = /\/apps\/cli\/dist\/cli\/workflows\.cjs$/;
const WORKFLOWS_BUNDLE = expect.stringMatching(WORKFLOWS_BUNDLE_FILE);
/** The sandbox's worker thread, one CommonJS file too (packages/sandbox/scripts/bundle.mjs). */
const SANDBOX_WORKER = expect.stringMatching(/\/packages\/sandbox\/dist\/internal\/worker\.cjs$/);

beforeAll(() => {
  // One recorded run, so that `runs` and `show last` have something to read in any test order.
  p = cli.projectWithOneRun();
});
afterAll(() => p?.cleanup());

describe('each verb loads only what it needs', () => {
  it('wf run loads the five bundles, the parser and the worker bundle: no ES module, no ajv or re2js', () => {
    const modules = loaded(['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress']);
    expect(new Set(modules)).toEqual(
      new Set([
        ...BIN_AND_BUNDLE,
        expect.stringMatching(EARLY_SANDBOX),
        expect.stringMatching(SANDBOX_BUNDLE),
        expect.stringMatching(ENGINE_BUNDLE),
        expect.stringMatching(CONTRACT_BUNDLE),
        PARSER_COPY,
        WORKFLOWS_BUNDLE,
        SANDBOX_WORKER,
      ]),
    );
    expect(matching(modules, BABEL)).toEqual([]);
    expect(matching(modules, SCHEMA_WORKER_DEPS)).toEqual([]);
  });

  it.each([
    ['run', ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress']],
    ['resume', ['resume', 'last', '--delay-ms', '0', '--no-progress']],
  ])(
    "wf %s starts the sandbox's worker thread first, before it compiles or loads the CLI's bundle",
    (_verb, args) => {
      // The thread boots on the other core while this one compiles and runs the rest (the bin,
      // src/startup/early-sandbox.cjs): started after the bundle, `wf run` took 4.5-6 ms longer (interleaved
      // pairs); started after the engine too, as when the sandbox shared engine.cjs, 27-29 ms.
      const order = loadOrder(args);
      const at = (pattern: RegExp) => order.findIndex((line) => pattern.test(line));
      const worker = at(/^worker:.*\/packages\/sandbox\/dist\/internal\/worker\.cjs$/);
      expect(worker, order.join('\n')).toBeGreaterThan(at(SANDBOX_BUNDLE));
      expect(at(SANDBOX_BUNDLE)).toBeGreaterThan(at(EARLY_SANDBOX));
      for (const later of [
        /^compile:.*\/dist\/cli\/wf\.cjs$/,
        BUNDLE,
        ENGINE_BUNDLE,
        CONTRACT_BUNDLE,
      ])
        expect(at(later), String(later)).toBeGreaterThan(worker);
      // One sandbox: the CLI took the bin's, it did not start a second thread.
      expect(
        order.filter((line) => line.startsWith('worker:')),
        order.join('\n'),
      ).toHaveLength(1);
    },
  );

  it.each([
    [
      'run',
      "keeps WebAssembly on V8's baseline compiler: its sandbox sets --liftoff-only",
      ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress'],
      false,
    ],
    ['check', "leaves V8's tiering alone", ['check', 'five.workflow.js'], true],
  ] as const)('wf %s %s', (_verb, _what, args, tiersUp) => {
    // wasmTierUp: false in run.ts; from the worker thread, so not before it booted (see
    // @wf/sandbox's tiering.js). `wf check` starts no sandbox: V8's default tiering.
    const report = join(p.dir, '..', 'tiering.json');
    rmSync(report, { force: true });
    const out = spawnSync(
      process.execPath,
      ['--allow-natives-syntax', '--require', TIERING_REPORT, cli.WF_BIN, ...args],
      {
        cwd: p.dir,
        env: {
          ...p.env,
          WF_TIERING_REPORT: report,
          WF_TIERING_EXPECT: tiersUp ? 'turbofan' : 'liftoff',
        },
        encoding: 'utf8',
      },
    );
    expect(out.status, out.stderr).toBe(0);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual({ turbofan: tiersUp });
  });

  it("wf run ends the sandbox's thread at the run's terminal event, before the run's final record is written", () => {
    // The thread's end (~7 ms) overlaps the store's last writes and the summary (run-verb.ts);
    // released only once the verb's run had returned, it ended after them.
    const trace = join(p.dir, '..', 'end-trace.txt');
    rmSync(trace, { force: true });
    const out = spawnSync(
      process.execPath,
      [
        '--require',
        END_TRACE,
        cli.WF_BIN,
        'run',
        'five.workflow.js',
        '--delay-ms',
        '0',
        '--no-progress',
      ],
      { cwd: p.dir, env: { ...p.env, WF_END_TRACE: trace }, encoding: 'utf8' },
    );
    expect(out.status, out.stderr).toBe(0);
    const lines = readFileSync(trace, 'utf8').trim().split('\n');
    // run.json is renamed into place when the run starts, as it changes, and once more at its end.
    expect(
      lines.filter((line) => line === 'terminate'),
      lines.join('\n'),
    ).toHaveLength(1);
    expect(lines.indexOf('terminate'), lines.join('\n')).toBeLessThan(
      lines.lastIndexOf('rename run.json'),
    );
    expect(lines.indexOf('terminate')).toBeLessThan(lines.indexOf('rename result.json'));
  });

  it('wf run compiles the other bundles from their caches right after starting that thread', () => {
    // The thread sets V8's --liftoff-only once it has booted (@wf/sandbox, wasmTierUp: false), and
    // V8 rejects a code cache made under other flags: a bundle compiled after that would compile
    // from source (the parser 25-29 ms). So the bin compiles them all at once, first (run.ts
    // does when wf's main() runs without the bin).
    const order = loadOrder(['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress']);
    const worker = order.findIndex((line) => line.startsWith('worker:'));
    const next = order.slice(worker + 1, worker + 6);
    expect(new Set(next), order.join('\n')).toEqual(
      new Set(
        ['wf', 'engine', 'contract', 'parser', 'workflows'].map((name) =>
          expect.stringMatching(new RegExp(`^compile:.*/apps/cli/dist/cli/${name}\\.cjs$`)),
        ),
      ),
    );
  });

  it('wf check of a file loads the contract bundle and the parser: not the engine, not the capsule schemas', () => {
    const modules = loaded(['check', 'five.workflow.js']);
    expect(new Set(modules)).toEqual(
      new Set([...BIN_AND_BUNDLE, expect.stringMatching(CONTRACT_BUNDLE), PARSER_COPY]),
    );
    expect(matching(modules, BABEL)).toEqual([]);
  });

  it('wf --version loads nothing but the bin', () => {
    expect(loaded(['--version'])).toEqual([expect.stringMatching(BIN)]);
  });

  it.each(['--help', 'run --help', 'help show'])(
    'wf %s loads the bin and the bundle only',
    (args) => {
      expect(loaded(args.split(' '))).toEqual(BIN_AND_BUNDLE);
    },
  );

  it('a usage error loads the bin and the bundle only, and exits 2', () => {
    expect(loaded(['runs', '--bogus'], p, 2)).toEqual(BIN_AND_BUNDLE);
  });

  it('wf run with a usage error after its target exits 2 once the sandbox the bin started is closed', () => {
    // The bin starts the sandbox before the command line is parsed (src/startup/early-sandbox.cjs); no
    // verb takes it, so the bin closes it (after its boot) and the process exits.
    const order = loadOrder(['run', 'five.workflow.js', '--bogus'], p, 2);
    expect(order.filter((line) => line.startsWith('worker:'))).toHaveLength(1);
    const out = spawnSync(process.execPath, [cli.WF_BIN, 'run', 'five.workflow.js', '--bogus'], {
      cwd: p.dir,
      env: p.env,
      encoding: 'utf8',
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("unknown option '--bogus'");
  });

  it('wf list loads the bin and the bundle only: no parser, engine or sandbox', () => {
    expect(loaded(['list'])).toEqual(BIN_AND_BUNDLE);
  });

  it('wf list with a catalog validates its capsules on every call: an invalid one is INVALID', () => {
    const q = cli.tempProject();
    try {
      mkdirSync(join(q.dir, '.dsh', 'workflows'), { recursive: true });
      q.file('.dsh/workflows/broken.workflow.json', { format: 'dsh.workflow', manifest: {} });
      // The capsule parser (the bridge and its schema library) is in the workflows bundle.
      expect(loaded(['list'], q)).toEqual([...BIN_AND_BUNDLE, WORKFLOWS_BUNDLE]);
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
    'wf %s does not load node:crypto (4-5 ms): the run store loads it on first use, to write',
    (...args) => {
      const { builtins } = builtinsLoaded(args);
      expect(builtins).toContain('node:fs');
      expect(builtins).not.toContain('node:crypto');
    },
  );

  it.each([['runs'], ['show', 'last'], ['list'], ['--help']])(
    "wf %s loads neither Node's stream modules (std-output.ts, ~5 ms) nor node:fs/promises (~2 ms)",
    (...args) => {
      // stdout and stderr are pipes here, as under a pager or a script
      const { builtins, stdout } = builtinsLoaded(args);
      expect(stdout.length).toBeGreaterThan(100);
      expect(builtins).toContain('node:fs');
      // fs/promises: the run store reads with blocking calls, and every module reaches the
      // promise API through fs.promises, a getter the bundle reads only when a call is made.
      const unwanted = ['node:stream', 'node:net', 'node:tty', 'node:fs/promises'];
      expect(builtins.filter((b) => unwanted.includes(b))).toEqual([]);
    },
  );

  it('a closed pipe ends wf runs quietly with exit code 0 (`wf runs | true`)', () => {
    const out = spawnSync(
      'bash',
      ['-c', '"$NODE" "$WF" runs 2>"$ERR" | true; echo "$PIPESTATUS"'],
      {
        cwd: p.dir,
        env: {
          ...p.env,
          NODE: process.execPath,
          WF: cli.WF_BIN,
          ERR: join(p.dir, '..', 'err.txt'),
        },
        encoding: 'utf8',
      },
    );
    expect(out.stdout.trim()).toBe('0');
    expect(readFileSync(join(p.dir, '..', 'err.txt'), 'utf8')).toBe('');
  });

  it.each([['runs'], ['show', 'last']])(
    'wf %s loads the bin and the bundle only: no parser, engine or sandbox',
    (...args) => {
      expect(loaded(args)).toEqual(BIN_AND_BUNDLE);
    },
  );
});

describe('the bundle', () => {
  const bundle = readFileSync(join(cli.REPO, 'apps', 'cli', 'dist', 'cli', 'wf.cjs'), 'utf8');

  it('holds the CLI, the run store and the shipped index, but no schemas, patterns or argument library', () => {
    // esbuild labels each bundled module with its path relative to apps/cli, in a comment
    const sources = [...bundle.matchAll(/^\/\/ (\S+\.m?js)$/gm)].map((m) =>
      `/${m[1]}`.replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, 'npm:'),
    );
    expect(sources).toContain('/dist/cli/runs.js');
    expect(matching(sources, /\/packages\/catalog-fs\/dist\/run-store\.js$/).length).toBe(1);
    expect(matching(sources, PATTERNS_INDEX).length).toBeGreaterThan(0);
    // the capsule schemas and the shipped workflows are workflows.cjs: 40% of the old wf.cjs,
    // which every verb compiled (about 4 ms) and the run-store verbs never ran
    expect(matching(sources, SCHEMAS)).toEqual([]);
    expect(matching(sources, /\/packages\/patterns\/dist\/(index|capsules\/)/)).toEqual([]);
    expect(matching(sources, ARG_LIBRARIES)).toEqual([]);
    expect(matching(sources, BABEL)).toEqual([]);
    expect(matching(sources, ENGINE)).toEqual([]);
    expect(matching(sources, /\/packages\/(source-contract|restate)\//)).toEqual([]);
  });

  it('runs as strict code, as its ES module sources did', () => {
    // esbuild writes its "use strict" after the banner, where it is an expression, not a
    // directive: the file must open with it (the bundle ran sloppy before).
    expect(bundle.startsWith('"use strict";\n')).toBe(true);
  });

  it('reaches the engine bundle only when a verb imports the engine, the sandbox or the contract', () => {
    // Each becomes a lazy module of its own whose body is the require: it runs when the import() does.
    const shims = [...bundle.matchAll(/"wf-engine-bundle:([^"]+)"\([^)]*\) \{\n\s+(.*)\n/g)];
    expect(shims.map((m) => [m[1], m[2]])).toEqual(
      expect.arrayContaining([
        ['@wf/engine', 'module2.exports = require("./engine.cjs").m0;'],
        ['@wf/sandbox', 'module2.exports = require("./sandbox.cjs").m0;'],
        ['@wf/source-contract', 'module2.exports = require("./contract.cjs").m0;'],
        ['@wf/bridge', 'module2.exports = require("./workflows.cjs").m0;'],
        ['@wf/patterns', 'module2.exports = require("./workflows.cjs").m1;'],
      ]),
    );
    // Nowhere else: no verb loads it at start-up (the light verbs' traces above say the same).
    expect(bundle.split('require("./engine.cjs")').length - 1).toBe(1);
    expect(bundle.split('require("./sandbox.cjs")').length - 1).toBe(1);
    expect(bundle.split('require("./contract.cjs")').length - 1).toBe(1);
    expect(bundle.split('require("./workflows.cjs")').length - 1).toBe(2);
    for (const name of ['@wf/engine', '@wf/sandbox', '@wf/source-contract', '@wf/bridge'])
      expect(bundle, name).not.toContain(`require("${name}")`);
    // Restate, and the engine and sandbox its verbs import beside it, stay ES modules.
    expect(bundle).toContain('import("@wf/restate")');
    expect(bundle).not.toContain('require("@wf/restate")');
  });
});

describe('the engine and contract bundles', () => {
  const read = (name: string) =>
    readFileSync(join(cli.REPO, 'apps', 'cli', 'dist', 'cli', name), 'utf8');
  /** The modules esbuild labels in a bundle, npm packages shortened to npm:<name>/. */
  const sourcesOf = (name: string) =>
    [...read(name).matchAll(/^\/\/ (\S+\.m?js)$/gm)].map((m) =>
      `/${m[1]}`.replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, 'npm:'),
    );

  it.each([
    ['sandbox.cjs', ['@wf/sandbox", "dist/internal/pool-worker.js']],
    ['engine.cjs', ['@wf/engine", "dist/internal/schema-pool.js']],
    ['contract.cjs', []],
  ])(
    '%s is strict code that finds its workers where their packages are installed',
    (name, urls) => {
      const text = read(name);
      expect(text.startsWith('"use strict";\n')).toBe(true);
      // esbuild turns an import.meta it cannot keep into an empty `import_meta` object
      expect(text).not.toContain('import_meta');
      for (const url of urls) expect(text).toContain(`__wf_module_url("${url}")`);
      expect(text).not.toContain('require("@wf/restate")');
      // the parser is bundled, not required from node_modules
      expect(text).not.toContain("require('@babel/parser')");
      expect(text).not.toContain('require("@babel/parser")');
    },
  );

  it('the contract bundle holds the contract, requires the parser beside it, and holds no engine or sandbox', () => {
    const sources = sourcesOf('contract.cjs');
    expect(matching(sources, /\/packages\/source-contract\//).length).toBeGreaterThan(0);
    expect(matching(sources, /\/packages\/(engine|sandbox)\/|npm:@babel\//)).toEqual([]);
    expect(read('contract.cjs')).toContain('require("./parser.cjs")');
  });

  it("parser.cjs is @babel/parser's lib/index.js as the contract resolves it, with a header and the cache key", () => {
    const original = readFileSync(cli.parserFile(), 'utf8');
    const lines = read('parser.cjs').split('\n');
    expect(lines[0]).toMatch(
      /^\/\/ @babel\/parser \d+\.\d+\.\d+ \(MIT\), lib\/index\.js, copied by/,
    );
    expect(lines.at(-2)).toMatch(/^\/\/# wfCodeCacheKey=[0-9a-f]{32}$/);
    // the body is the original without its source map comment
    expect(lines.slice(1, -2).join('\n')).toBe(
      original.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, ''),
    );
  });

  it('the engine bundle requires the sandbox, the contract and the bridge from their bundles: one copy of each', () => {
    const sources = sourcesOf('engine.cjs');
    expect(matching(sources, /\/packages\/engine\//).length).toBeGreaterThan(0);
    expect(
      matching(
        sources,
        /\/packages\/(sandbox|source-contract|bridge|patterns)\/|npm:(@babel|valibot)\//,
      ),
    ).toEqual([]);
    const text = read('engine.cjs');
    expect(text).toContain('module2.exports = require("./sandbox.cjs").m0;');
    expect(text).toContain('module2.exports = require("./contract.cjs").m0;');
    expect(text).toContain('module2.exports = require("./workflows.cjs").m0;');
  });

  it('the sandbox bundle holds the sandbox and requires no other bundle: wf run loads it alone first', () => {
    const sources = sourcesOf('sandbox.cjs');
    expect(matching(sources, /\/packages\/sandbox\//).length).toBeGreaterThan(0);
    expect(
      matching(sources, /\/packages\/(engine|source-contract|bridge|patterns)\/|npm:/),
    ).toEqual([]);
    expect(read('sandbox.cjs')).not.toMatch(/require\("\.\/[a-z]+\.cjs"\)/);
  });
});
