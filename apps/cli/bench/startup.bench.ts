// `wf` start-up cost per verb, as ratios against `node -e 0` measured side by side in this run
// (rounds interleave every command, so machine load hits all of them alike). Runs the built bin
// (apps/cli/bin/wf.js over dist/): build first (`tsc -b apps/cli`, which `turbo run bench` does).
// Targets (issue 16): simple verbs <= 1.5x `node -e 0`; `wf run` of 5 instant agents <= 2.5x.
// Two columns: wall-clock medians (what a user feels; on a loaded machine it is mostly waiting for
// a core) and the children's CPU time per call (Linux /proc cutime+cstime: steadier under load).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { calibration } from '@wf/bench';

await calibration();

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const WF_BIN = join(REPO, 'apps', 'cli', 'bin', 'wf.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);

const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-bench-startup-')));
const project = join(root, 'project');
const home = join(root, 'dsh-home');
mkdirSync(project);
mkdirSync(home);
const env = { PATH: process.env.PATH, HOME: root, DSH_HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1' };
writeFileSync(
  join(project, 'five.workflow.js'),
  `async function run(wf, args) {
  return wf.parallel([1, 2, 3, 4, 5].map((i) => () => wf.runAgent({ name: 'a' + i, prompt: 'p' })));
}
`,
);

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

function wf(args: readonly string[]): number {
  const t0 = performance.now();
  const out = spawnSync(process.execPath, [WF_BIN, ...args], { cwd: project, env });
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

function floor(): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', '0'], { cwd: project, env });
  return performance.now() - t0;
}

const RUN_FIVE = ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress', '--seed', '1'];
// One recorded run so that `runs` and `show` have something to read.
wf(RUN_FIVE);

const cases: { name: string; target: number; measure: () => number }[] = [
  { name: 'node -e 0', target: 1, measure: floor },
  { name: 'wf --version', target: 1.5, measure: () => wf(['--version']) },
  { name: 'wf list', target: 1.5, measure: () => wf(['list']) },
  { name: 'wf runs', target: 1.5, measure: () => wf(['runs']) },
  { name: 'wf show last', target: 1.5, measure: () => wf(['show', 'last']) },
  { name: 'wf run (5 instant agents)', target: 2.5, measure: () => wf(RUN_FIVE) },
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
console.log('command                       wall median   ratio   cpu/call   ratio   target');
let missed = 0;
cases.forEach((c, i) => {
  const m = median(samples[i] ?? []);
  const ratio = m / base;
  const cpu = (cpuTicks[i] ?? 0) / ROUNDS;
  const cpuRatio = baseCpu > 0 ? cpu / baseCpu : Number.NaN;
  const ok = ratio <= c.target;
  if (!ok) missed++;
  console.log(
    `${c.name.padEnd(28)}  ${m.toFixed(1).padStart(8)} ms  ${ratio.toFixed(2).padStart(5)}x  ${(cpu * TICK_MS).toFixed(0).padStart(6)} ms  ${cpuRatio.toFixed(2).padStart(5)}x  <= ${c.target}x${ok ? '' : '  MISSED (wall)'}`,
  );
});
console.log(missed === 0 ? 'all wall-clock targets met' : `${missed} wall-clock target(s) missed`);
rmSync(root, { recursive: true, force: true });
