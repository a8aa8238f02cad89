// Listing a catalog of 2,000 capsules (each read without following links, size-checked, parsed
// and fully validated) against a baseline that only reads and JSON-parses the same files.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibration, ratio } from '@wf/bench';
import { openCatalog } from '@wf/catalog-fs';

const cal = await calibration();

const COUNT = 2000;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-bench-list-')));
const project = join(root, 'workflows');
mkdirSync(project);
for (let i = 0; i < COUNT; i++) {
  const name = `workflow-${String(i).padStart(4, '0')}`;
  const capsule = {
    format: 'dsh.workflow',
    version: 1,
    workflowApiVersion: 1,
    minDshVersion: '0.2.0',
    manifest: {
      name,
      description: `workflow ${i}`,
      phases: ['review', 'synthesize'],
      readOnly: true,
      maxAgents: 4,
      maxConcurrency: 2,
      patterns: ['fan-out-and-synthesize'],
    },
    source: `async function run(wf, args) {\n  const r = await wf.runAgent({ name: 'a${i}', prompt: 'p', readOnly: true });\n  return r.finalText;\n}\n`,
  };
  writeFileSync(join(project, `${name}.workflow.json`), JSON.stringify(capsule, null, 2));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const catalog = await openCatalog({ project, limits: { maxCatalogEntries: COUNT } });
const ours: number[] = [];
const base: number[] = [];
for (let r = 0; r < 7; r++) {
  let t0 = performance.now();
  const listing = await catalog.list();
  ours.push(performance.now() - t0);
  if (listing.entries.length !== COUNT || !listing.entries.every((e) => e.valid))
    throw new Error('bad listing');
  t0 = performance.now();
  const parsed = readdirSync(project).map(
    (f) => JSON.parse(readFileSync(join(project, f), 'utf8')) as unknown,
  );
  base.push(performance.now() - t0);
  if (parsed.length !== COUNT) throw new Error('bad baseline');
}
const o = median(ours);
const b = median(base);
console.log(
  `list ${COUNT} capsules: median ${o.toFixed(1)} ms (validated, symlink-safe); baseline readdir+readFileSync+JSON.parse ${b.toFixed(1)} ms; ratio ${(o / b).toFixed(2)}x (7 runs); ${ratio(o, cal.nodeStartMs)} of a node -e 0 start`,
);
// Default limits: the listing stops validating at maxCatalogEntries (200).
const capped = await openCatalog({ project });
const cappedTimes: number[] = [];
for (let r = 0; r < 7; r++) {
  const t0 = performance.now();
  const l = await capped.list();
  cappedTimes.push(performance.now() - t0);
  if (!l.truncated) throw new Error('expected truncation');
}
console.log(
  `list ${COUNT} capsules with the default maxCatalogEntries (200, truncated): median ${median(cappedTimes).toFixed(1)} ms`,
);
rmSync(root, { recursive: true, force: true });
