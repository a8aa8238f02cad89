// `wf` loads what each verb needs and nothing else (issue 16): the real bin runs with a preload that
// records every module it loads, and each verb is checked against the heavy dependencies it must
// not pay for. Speed itself is measured in bench/startup.bench.ts, never here.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const TRACE_HOOK = join(import.meta.dirname, 'fixtures', 'load-trace.mjs');

let p: cli.Project;

/** The module URLs `wf <args>` loaded (paths below the repository, node_modules shortened). */
function loaded(args: readonly string[]): string[] {
  const trace = join(p.dir, '..', 'load-trace.txt');
  rmSync(trace, { force: true });
  const out = spawnSync(process.execPath, ['--import', TRACE_HOOK, cli.WF_BIN, ...args], {
    cwd: p.dir,
    env: { ...p.env, WF_LOAD_TRACE: trace },
    encoding: 'utf8',
  });
  expect(out.status, `wf ${args.join(' ')}: ${out.stdout}${out.stderr}`).toBe(0);
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

  it('wf list loads the patterns, not the parser or the engine', () => {
    const modules = loaded(['list']);
    expect(matching(modules, PATTERNS).length).toBeGreaterThan(0);
    expect(matching(modules, BABEL)).toEqual([]);
    expect(matching(modules, ENGINE)).toEqual([]);
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
    },
  );
});
