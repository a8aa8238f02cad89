// WF_STARTUP=off turns the whole start-up machinery off (src/startup/README.md): the bin then runs
// main() from tsc's ES modules, with no bundle, no code cache and no early sandbox. Every verb
// prints the same either way: what the machinery changes is when things load, never what `wf`
// says. Values that differ between any two calls (run ids, clock readings, durations) are masked
// alike on both sides.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const TRACE_HOOK = join(import.meta.dirname, 'fixtures', 'load-trace.mjs');
const OFF = { WF_STARTUP: 'off' };

let p: cli.Project;

beforeAll(() => {
  p = cli.projectWithOneRun();
  p.file('bad.workflow.js', 'async function run(wf, args) { return eval("1"); }\n');
});
afterAll(() => p?.cleanup());

function wf(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const out = spawnSync(process.execPath, [cli.WF_BIN, ...args], {
    cwd: p.dir,
    env: { ...p.env, ...env },
    encoding: 'utf8',
  });
  return { status: out.status, stdout: mask(out.stdout), stderr: mask(out.stderr) };
}

/** Run ids, epoch and ISO times, dates and durations: what two calls never share. */
function mask(text: string): string {
  return text
    .replace(/run-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'RUN')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'ISO')
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d/g, 'DATE')
    .replace(/\b1\d{12}\b/g, 'EPOCH')
    .replace(/("(?:durationMs|wallClockDurationMs|elapsedMs)": )\d+/g, '$1N')
    .replace(/\b\d+(\.\d+)?(ms|s)\b/g, 'N$2');
}

/** The modules `wf <args>` loaded, as paths below the repository. */
function loaded(args: readonly string[], env: NodeJS.ProcessEnv = {}): string[] {
  const trace = join(p.dir, '..', 'switch-trace.txt');
  rmSync(trace, { force: true });
  const out = spawnSync(process.execPath, ['--import', TRACE_HOOK, cli.WF_BIN, ...args], {
    cwd: p.dir,
    env: { ...p.env, ...env, WF_LOAD_TRACE: trace },
    encoding: 'utf8',
  });
  expect(out.status, out.stderr).toBe(0);
  return readFileSync(trace, 'utf8')
    .trim()
    .split('\n')
    .map((url) => url.replace(`file://${cli.REPO}/`, ''));
}

describe('WF_STARTUP=off', () => {
  it('runs main() from the ES modules: no bundle, no code cache, no early sandbox', () => {
    const args = ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress'];
    const off = loaded(args, OFF);
    expect(off).toContain('apps/cli/dist/cli/main.js');
    expect(off.filter((m) => /apps\/cli\/dist\/cli\/.*\.cjs$|^compile:/.test(m))).toEqual([]);
    // the sandbox's worker starts when the verb asks for it, after the CLI's modules loaded
    const worker = (trace: string[]) => trace.findIndex((m) => m.startsWith('worker:'));
    expect(worker(off)).toBeGreaterThan(off.indexOf('apps/cli/dist/cli/run.js'));
    const on = loaded(args);
    expect(on).not.toContain('apps/cli/dist/cli/main.js');
    expect(worker(on)).toBeGreaterThan(-1);
    expect(worker(on)).toBeLessThan(on.indexOf('compile:apps/cli/dist/cli/wf.cjs'));
  });

  // In order: the run-store verbs read the one recorded run before the runs below add theirs.
  it.each([
    [['--version']],
    [['--help']],
    [['run', '--help']],
    [['bogus', '--json']],
    [['list', '--json']],
    [['check', 'five.workflow.js', 'bad.workflow.js']],
    [['runs']],
    [['show', 'last']],
    [['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress', '--seed', '1']],
    [['run', 'five.workflow.js', '--delay-ms', '0', '--json', '--seed', '1']],
  ])('wf %j prints the same with the machinery on and off', (args) => {
    const on = wf(args);
    const off = wf(args, OFF);
    expect(off).toEqual(on);
    expect(on.stdout.length + on.stderr.length).toBeGreaterThan(0);
  });
});
