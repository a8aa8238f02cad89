// Benchmark 5: first result in a fresh process. Spawns node on cold-ours.mjs (import @wf/sandbox,
// createSandbox with the default pool, one trivial run) and on cold-bare.mjs (bare
// quickjs-emscripten, the same run in the main thread), alternating, and reads the time from
// process start to the result in hand as each child reports it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { calibration, median, ratio } from '@wf/bench';
import { fmt, header } from './stats.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 9);
await calibration();
const here = import.meta.dirname;
const first = (script: string): number => {
  const out = execFileSync(process.execPath, [join(here, script)], { encoding: 'utf8' });
  const v = (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { firstResultMs?: unknown })
    .firstResultMs;
  if (typeof v !== 'number') throw new Error(`${script}: ${out}`);
  return v;
};
first('cold-ours.mjs');
first('cold-bare.mjs');
const ours: number[] = [];
const bare: number[] = [];
for (let i = 0; i < SAMPLES; i++) {
  if (i % 2 === 0) {
    ours.push(first('cold-ours.mjs'));
    bare.push(first('cold-bare.mjs'));
  } else {
    bare.push(first('cold-bare.mjs'));
    ours.push(first('cold-ours.mjs'));
  }
}
header(`first result in a fresh process (ms since process start, median of ${SAMPLES})`);
console.log(`@wf/sandbox (createSandbox + run)   ${fmt(median(ours), 1).padStart(7)} ms`);
console.log(`bare quickjs-emscripten (floor)     ${fmt(median(bare), 1).padStart(7)} ms`);
console.log(
  `ratio ours/bare: ${ratio(median(ours), median(bare))}; target <= 1.5x: ${median(ours) <= 1.5 * median(bare) ? 'met' : 'NOT met'}`,
);
