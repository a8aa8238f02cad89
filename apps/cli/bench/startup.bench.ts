// `wf` start-up cost per verb, as ratios against `node -e 0` measured side by side in this run
// (rounds interleave every command, so machine load hits all of them alike). Runs the built bin
// (apps/cli/bin/wf.cjs over the bundle dist/cli/wf.cjs): build first (apps/cli's `build` script,
// tsc then src/startup/bundle.mjs, which its `bench` script runs).
// Targets: simple verbs <= 1.5x `node -e 0`; `wf run` of 5 instant agents <= 2.5x.
// Two columns: wall-clock medians (what a user feels; on a loaded machine it is mostly waiting for
// a core) and the children's CPU time per call (Linux /proc cutime+cstime: steadier under load),
// and the modules each command loads (one traced call; ES modules and CommonJS requires).
// `wf runs` and `wf show last` run beside the same verbs over 2,000 stored runs: both should cost
// what they print, not what is stored.
// Two floors run in the same rounds, nothing of @wf in them: `wf check`'s (Node loads
// @babel/parser and parses the file: bench/floors/check.cjs) and `wf run`'s (one worker thread
// instantiates bare QuickJS and runs one program: @wf/bench's worker-quickjs, the floor of the
// sandbox's isolation model). A target below its verb's floor cannot be met by this design.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { calibration } from '@wf/bench';
import { FIVE_AGENTS, parserFile } from '../test/helpers/wf-cli.js';

await calibration();

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const WF_BIN = join(REPO, 'apps', 'cli', 'bin', 'wf.cjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const MANY_RUNS = 2000;
// Before/after in one run: WF_BASELINE_BIN=<another checkout>/apps/cli/bin/wf.cjs (built) adds a
// "[before]" row next to each verb, measured in the same interleaved rounds.
const BASELINE_BIN = process.env.WF_BASELINE_BIN;
const TRACE_HOOK = join(REPO, 'apps', 'cli', 'test', 'fixtures', 'load-trace.mjs');

const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-bench-startup-')));
const project = join(root, 'project');
const home = join(root, 'dsh-home');
mkdirSync(project);
mkdirSync(home);
const env = { PATH: process.env.PATH, HOME: root, DSH_HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1' };
writeFileSync(join(project, 'five.workflow.js'), FIVE_AGENTS);

/** CPU clock ticks used by this process's waited-for children so far (undefined off Linux). */
function childCpuTicks(): number | undefined {
  try {
    // fields after the ")" of the command name: cutime and cstime are the 14th and 15th
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[13]) + Number(fields[14]);
  } catch {
    return undefined;
  }
}
const TICK_MS = 10; // USER_HZ is 100 on every Linux we run on

function wf(
  args: readonly string[],
  cwd = project,
  bin = WF_BIN,
  extraEnv: NodeJS.ProcessEnv = {},
): number {
  const t0 = performance.now();
  const out = spawnSync(process.execPath, [bin, ...args], { cwd, env: { ...env, ...extraEnv } });
  const ms = performance.now() - t0;
  if (out.status !== 0)
    throw new Error(`wf ${args.join(' ')} exited ${out.status}:\n${out.stdout}${out.stderr}`);
  return ms;
}

/** `pnpm wf <args>` from the repository root (tooling/repo/wf.mjs); undefined without pnpm. */
function pnpmWf(args: readonly string[]): number {
  const t0 = performance.now();
  const out = spawnSync('pnpm', ['wf', ...args], {
    cwd: REPO,
    env: { ...env, HOME: process.env.HOME },
  });
  const ms = performance.now() - t0;
  if (out.status !== 0)
    throw new Error(`pnpm wf ${args.join(' ')} exited ${out.status}:\n${out.stderr}`);
  return ms;
}
const hasPnpm = spawnSync('pnpm', ['--version'], { env }).status === 0;

/** Wall ms of `node <args>` in the project (a floor: it must exit 0). */
function node(args: readonly string[]): number {
  const t0 = performance.now();
  const out = spawnSync(process.execPath, args, { cwd: project, env });
  const ms = performance.now() - t0;
  if (out.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${out.status}:\n${out.stderr}`);
  return ms;
}

// The parser the contract loads (what dist/cli/parser.cjs copies).
const PARSER = parserFile();
const CHECK_FLOOR = join(import.meta.dirname, 'floors', 'check.cjs');
const RUN_FLOOR = fileURLToPath(import.meta.resolve('@wf/bench/worker-quickjs'));

/** How many files `wf <args>` loads as modules (node: built-ins excluded; ES and CommonJS). */
function modulesLoaded(args: readonly string[], cwd = project, bin = WF_BIN): number {
  const trace = join(root, 'load-trace.txt');
  rmSync(trace, { force: true });
  spawnSync(process.execPath, ['--import', TRACE_HOOK, bin, ...args], {
    cwd,
    env: { ...env, WF_LOAD_TRACE: trace },
  });
  try {
    // once each: the main module passes both the ES module hook and the require loader
    return new Set(readFileSync(trace, 'utf8').trim().split('\n')).size;
  } catch {
    return 0;
  }
}

const RUN_FIVE = ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress', '--seed', '1'];
// Ten recorded runs so that `runs` and `show` have something to read.
for (let i = 0; i < 10; i++) wf(RUN_FIVE);

// A second project with MANY_RUNS stored runs: copies of one real run, each with its own id and
// start time, as an earlier wf would have left them. The first listing (the warm-up below) adds
// them to the runs index, as it does for any run recorded before the index existed.
const many = join(root, 'many');
mkdirSync(many);
writeFileSync(join(many, 'five.workflow.js'), readFileSync(join(project, 'five.workflow.js')));
wf(RUN_FIVE, many);
const manyRuns = join(many, '.dsh', 'workflow-runs');
const template = readdirSync(manyRuns).find((name) => !name.startsWith('.'));
if (template === undefined) throw new Error('no run recorded to copy');
const snapshot = JSON.parse(readFileSync(join(manyRuns, template, 'run.json'), 'utf8'));
for (let i = 1; i < MANY_RUNS; i++) {
  const runId = `${template}-${i}`;
  cpSync(join(manyRuns, template), join(manyRuns, runId), { recursive: true });
  const startedAt = snapshot.startedAt - i * 1000;
  writeFileSync(
    join(manyRuns, runId, 'run.json'),
    JSON.stringify({ ...snapshot, runId, startedAt, endedAt: startedAt + 50 }),
  );
}

interface Case {
  name: string;
  /** Wall ratio against `node -e 0` to stay within; a floor has none. */
  target?: number;
  measure: () => number;
  modules?: () => number;
}

/** The verbs of one `wf` bin; `label` tells a baseline's rows apart. */
function verbCases(bin: string, label: string): Case[] {
  const verb = (name: string, args: readonly string[], cwd = project, target = 1.5): Case => ({
    name: `${name}${label}`,
    target,
    measure: () => wf(args, cwd, bin),
    modules: () => modulesLoaded(args, cwd, bin),
  });
  const stored = MANY_RUNS.toLocaleString('en');
  return [
    verb('wf --version', ['--version']),
    verb('wf --help', ['--help']),
    verb('wf list', ['list']),
    verb('wf check (small file)', ['check', 'five.workflow.js']),
    verb('wf runs (10 stored)', ['runs']),
    verb(`wf runs (${stored} stored)`, ['runs'], many),
    verb('wf show last (10 stored)', ['show', 'last']),
    verb(`wf show last (${stored})`, ['show', 'last'], many),
    verb('wf run (5 instant agents)', RUN_FIVE, project, 2.5),
  ];
}

// The code caches (src/startup/loader.cjs) off, beside the same verbs with them: what they save.
const CACHES_OFF = { WF_CODE_CACHE: 'off' };
const cachesOff: Case[] = [
  {
    name: 'wf check (small file), caches off',
    target: 1.5,
    measure: () => wf(['check', 'five.workflow.js'], project, WF_BIN, CACHES_OFF),
  },
  {
    name: 'wf run (5 agents), caches off',
    target: 2.5,
    measure: () => wf(RUN_FIVE, project, WF_BIN, CACHES_OFF),
  },
];

const floors: Case[] = [
  {
    name: 'floor of check: parse only',
    measure: () => node([CHECK_FLOOR, PARSER, 'five.workflow.js']),
  },
  { name: 'floor of run: worker + QuickJS', measure: () => node([RUN_FLOOR, '--liftoff-only']) },
];

const cases: Case[] = [
  { name: 'node -e 0', target: 1, measure: () => node(['-e', '0']) },
  ...verbCases(WF_BIN, ''),
  ...cachesOff,
  ...floors,
  ...(BASELINE_BIN ? verbCases(BASELINE_BIN, ' [before]') : []),
  // The launcher in a clone: pnpm itself, then a stat walk for a stale build, then the bin.
  ...(hasPnpm
    ? [{ name: 'pnpm wf --version', target: 2.5, measure: () => pnpmWf(['--version']) }]
    : []),
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const samples = cases.map(() => [] as number[]);
const cpuTicks = cases.map(() => 0);
for (const c of cases) c.measure(); // warm the file cache
for (let r = 0; r < ROUNDS; r++)
  cases.forEach((c, i) => {
    const before = childCpuTicks();
    samples[i]?.push(c.measure());
    const after = childCpuTicks();
    if (before !== undefined && after !== undefined)
      cpuTicks[i] = (cpuTicks[i] ?? 0) + after - before;
  });

const base = median(samples[0] ?? []);
const baseCpu = (cpuTicks[0] ?? 0) / ROUNDS;
console.log(`wf start-up: ${ROUNDS} interleaved rounds against \`node -e 0\` (built bin)`);
console.log(
  'command                               wall median   ratio   cpu/call   ratio  modules   target',
);
let missed = 0;
cases.forEach((c, i) => {
  const m = median(samples[i] ?? []);
  const ratio = m / base;
  const cpu = (cpuTicks[i] ?? 0) / ROUNDS;
  const cpuRatio = baseCpu > 0 ? cpu / baseCpu : Number.NaN;
  const ok = c.target === undefined || ratio <= c.target;
  if (!ok) missed++;
  const modules = c.modules ? String(c.modules()) : '';
  console.log(
    `${c.name.padEnd(36)}  ${m.toFixed(1).padStart(8)} ms  ${ratio.toFixed(2).padStart(5)}x  ${(cpu * TICK_MS).toFixed(0).padStart(6)} ms  ${cpuRatio.toFixed(2).padStart(5)}x  ${modules.padStart(7)}   ${c.target === undefined ? 'floor' : `<= ${c.target}x`}${ok ? '' : '  MISSED (wall)'}`,
  );
});
// Each verb against its floor, from the same rounds: what is ours, and what no design can skip.
const medianOf = (name: string) => median(samples[cases.findIndex((c) => c.name === name)] ?? []);
for (const [verb, floorName] of [
  ['wf check (small file)', 'floor of check: parse only'],
  ['wf run (5 instant agents)', 'floor of run: worker + QuickJS'],
] as const) {
  const floorMs = medianOf(floorName);
  const target = cases.find((c) => c.name === verb)?.target ?? Number.POSITIVE_INFINITY;
  const below = floorMs / base > target ? ` (its ${target}x target is below the floor)` : '';
  console.log(
    `${verb}: ${(medianOf(verb) / floorMs).toFixed(2)}x its floor, which is itself ${(floorMs / base).toFixed(2)}x \`node -e 0\`${below}`,
  );
}
console.log(missed === 0 ? 'all wall-clock targets met' : `${missed} wall-clock target(s) missed`);
rmSync(root, { recursive: true, force: true });
