// Benchmark 5: first result in a fresh process. Spawns node on cold-ours.mjs (import @wf/sandbox,
// createSandbox with the default pool, one trivial run; once from the entry the published package
// exports, the one-file dist/internal/sandbox.bundle.js, and once from the repository's
// dist/index.js and its 15 modules, for comparison), on cold-bare.mjs (bare
// quickjs-emscripten, the same run in the main thread: the target's baseline) and on @wf/bench's
// worker-quickjs (the same bare run in one worker thread: the floor of the sandbox's isolation
// model, which no worker-based sandbox can beat), in rotating order, and reads the time from
// process start to the result in hand as each child reports it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { calibration, median, ratio } from '@wf/bench';
import { baselineEntry, fmt, header } from './stats.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 9);
await calibration();
const here = import.meta.dirname;
const IN_WORKER = fileURLToPath(import.meta.resolve('@wf/bench/worker-quickjs'));
const manifest = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
const PUBLISHED = pathToFileURL(join(here, '..', manifest.publishConfig.exports['.'].default)).href;
const first = (child: string): number => {
  const [script = '', ...args] = child.split(' ');
  const path = script === IN_WORKER ? script : join(here, script);
  const out = execFileSync(process.execPath, [path, ...args], { encoding: 'utf8' });
  const v = (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { firstResultMs?: unknown })
    .firstResultMs;
  if (typeof v !== 'number') throw new Error(`${child}: ${out}`);
  return v;
};
// WF_SANDBOX_BASELINE: another tree's published entry in the same rotation ("[before]").
const BASELINE = baselineEntry();
const children = [
  `cold-ours.mjs ${PUBLISHED}`,
  'cold-bare.mjs',
  IN_WORKER,
  'cold-ours.mjs @wf/sandbox',
  ...(BASELINE === undefined ? [] : [`cold-ours.mjs ${BASELINE}`]),
];
const samples = children.map(() => [] as number[]);
for (const c of children) first(c);
for (let i = 0; i < SAMPLES; i++) {
  // Rotate who goes first: a child spawned right after another may find a busier core.
  for (let j = 0; j < children.length; j++) {
    const k = (i + j) % children.length;
    samples[k]?.push(first(children[k] as string));
  }
}
const [ours, bare, inWorker, modules, before] = samples.map((s) => median(s)) as [
  number,
  number,
  number,
  number,
  number | undefined,
];
header(`first result in a fresh process (ms since process start, median of ${SAMPLES})`);
console.log(`@wf/sandbox (createSandbox + run)   ${fmt(ours, 1).padStart(7)} ms`);
console.log(
  `  the same from dist/index.js       ${fmt(modules, 1).padStart(7)} ms (the repository's entry: 16 ES modules, not one)`,
);
if (before !== undefined)
  console.log(
    `[before] @wf/sandbox                ${fmt(before, 1).padStart(7)} ms (${process.env.WF_SANDBOX_BASELINE}; ours/before ${ratio(ours, before)})`,
  );
console.log(`bare quickjs-emscripten (baseline)  ${fmt(bare, 1).padStart(7)} ms`);
console.log(`bare, in one worker thread (floor)  ${fmt(inWorker, 1).padStart(7)} ms`);
console.log(
  `ratio ours/bare: ${ratio(ours, bare)}; target <= 1.5x: ${ours <= 1.5 * bare ? 'met' : 'NOT met'}`,
);
console.log(
  `the worker floor alone is ${ratio(inWorker, bare)} of bare; ours/worker floor: ${ratio(ours, inWorker)}`,
);
