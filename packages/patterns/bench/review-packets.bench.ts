// Cost of buildReviewPackets on a large real git diff, against the least work any packet builder
// must do (split the text into lines, hash it, join it back), measured side by side in this run.
// Prints medians (ms per diff, MB/s) and the ratio. Runs once per review, before any agent starts.
import { createHash } from 'node:crypto';
import { calibration, ratio } from '@wf/bench';
import { buildReviewPackets } from '@wf/patterns';
import { createGitRepo } from '../test/helpers/git-repo.js';

const cal = await calibration();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const FILES = Number(process.env.BENCH_FILES ?? 400);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

// A change across FILES files in 8 workspaces: edits every 7th line of 300, one long minified line
// in every 50th file, a rename and a deletion, so every code path of the builder is exercised.
const repo = createGitRepo();
let diff: string;
try {
  const lines = (f: number) =>
    Array.from({ length: 300 }, (_, i) => `export const v${f}_${i} = ${i}; // line ${i}`).join(
      '\n',
    ) + '\n';
  const path = (f: number) => `packages/p${f % 8}/src/file-${f}.ts`;
  for (let f = 0; f < FILES; f += 1) repo.write(path(f), lines(f));
  repo.commitAll('base');
  for (let f = 0; f < FILES; f += 1) {
    let text = lines(f)
      .split('\n')
      .map((l, i) => (i % 7 === 3 ? `${l} // changed` : l))
      .join('\n');
    if (f % 50 === 0) text += `${'m'.repeat(40_000)}\n`;
    repo.write(path(f), text);
  }
  repo.git('mv', path(1), 'packages/p1/src/renamed.ts');
  repo.remove(path(2));
  repo.git('add', '-A');
  diff = repo.git('diff', '--cached', '-M');
} finally {
  repo.cleanup();
}
const mb = Buffer.byteLength(diff) / 1_048_576;

const baseline = () => {
  const ls = diff.split('\n');
  createHash('sha256').update(diff).digest('hex');
  return ls.join('\n').length;
};
const builder = () => {
  const r = buildReviewPackets(diff);
  if (!r.ok) throw new Error(r.error.message);
  return r.packets.length;
};

const base: number[] = [];
const built: number[] = [];
for (let r = 0; r < ROUNDS + 1; r += 1) {
  // Interleaved so both see the same machine load; round 0 warms up.
  let t0 = performance.now();
  baseline();
  const b = performance.now() - t0;
  t0 = performance.now();
  const packets = builder();
  const p = performance.now() - t0;
  if (r > 0) {
    base.push(b);
    built.push(p);
  } else {
    console.log(`diff: ${mb.toFixed(1)} MiB, ${FILES} files, ${packets} packets`);
  }
}
const mBase = median(base);
const mBuilt = median(built);
console.log(
  `baseline (split + sha256 + join): ${mBase.toFixed(1)} ms median (${(mb / (mBase / 1000)).toFixed(0)} MiB/s)`,
);
console.log(
  `buildReviewPackets:               ${mBuilt.toFixed(1)} ms median (${(mb / (mBuilt / 1000)).toFixed(0)} MiB/s)`,
);
console.log(`ratio builder/baseline: ${(mBuilt / mBase).toFixed(1)}x over ${ROUNDS} rounds`);
console.log(
  `buildReviewPackets against the calibration: ${ratio(mBuilt, cal.nodeStartMs)} a node -e 0 start`,
);
