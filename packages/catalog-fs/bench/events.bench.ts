// Appending events to one run: the run store (append-only events.jsonl, batched fsync, coalesced
// run.json) against a naive log (per event: append, re-read and
// re-parse the whole log, rewrite run.json), in the same process, on the same disk.
// Naive sizes grow until one naive run takes >= 10 s, and always reach 10,000 events (a long
// run's log); ours also runs at 100,000 events.
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibration } from '@wf/bench';
import { openRunStore } from '@wf/catalog-fs';

await calibration();

const root = realpathSync(mkdtempSync(join(tmpdir(), 'wf-bench-events-')));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const payload = (seq: number) => ({
  seq,
  runId: 'run-bench',
  type: 'agent-completed',
  time: Date.now(),
  data: {
    taskId: `task-${seq}`,
    name: 'review-auth',
    status: 'completed',
    tokens: { input: 1200, output: 340 },
    text: 'x'.repeat(120),
  },
});
const turn = () => new Promise<void>((r) => setImmediate(r));

let runCounter = 0;
/** Ours, as the engine drives it: one event per event-loop turn (no help from batching). */
async function ours(n: number): Promise<number> {
  const project = join(root, `ours-${runCounter++}`);
  mkdirSync(project);
  const store = await openRunStore({ project });
  const runId = 'run-bench';
  const t0 = performance.now();
  await store.begin({
    runId,
    workflow: 'bench',
    trust: 'capability-generated',
    manifest: {},
    args: null,
    seed: 1,
    startTime: 0,
    startedAt: Date.now(),
  });
  for (let seq = 1; seq <= n; seq++) {
    store.event(payload(seq));
    store.update(runId, { phase: 'review', activeAgents: seq % 4 });
    await turn();
  }
  await store.finish(runId, {
    status: 'completed',
    cost: {
      wallClockDurationMs: 0,
      agentsStarted: 0,
      agentsCompleted: 0,
      cacheHits: 0,
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      peakConcurrency: 0,
    },
    endedAt: Date.now(),
  });
  const ms = performance.now() - t0;
  const count = (await store.events(runId)).length;
  if (count !== n) throw new Error(`ours recorded ${count} of ${n} events`);
  await store.close();
  rmSync(project, { recursive: true, force: true });
  return ms;
}

/** Naive (prior art): per event, appendFileSync, re-read + re-parse the whole log, rewrite run.json. */
async function naive(n: number): Promise<number> {
  const dir = join(root, `naive-${runCounter++}`);
  mkdirSync(dir);
  const log = join(dir, 'events.jsonl');
  const snap = join(dir, 'run.json');
  writeFileSync(log, '');
  const t0 = performance.now();
  for (let seq = 1; seq <= n; seq++) {
    appendFileSync(log, `${JSON.stringify(payload(seq))}\n`);
    const events = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string });
    const snapshot = {
      runId: 'run-bench',
      status: 'running',
      eventCount: events.length,
      phase: 'review',
      agents: events.filter((e) => e.type === 'agent-completed').length,
    };
    writeFileSync(snap, JSON.stringify(snapshot, null, 2));
    await turn();
  }
  const ms = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
console.log(
  'events appended to one run: ours (run store) vs naive (re-read log + rewrite snapshot per event)',
);
console.log('size     ours ms  ours ev/s   naive ms  naive ev/s  ratio (ours/naive speed)');
const SIZES = [
  500, 1000, 2000, 3000, 4000, 6000, 8000, 10_000, 12_000, 16_000, 24_000, 32_000, 48_000, 64_000,
  100_000,
];
let previousNaive = 0;
for (const n of SIZES) {
  // Medians of 3 while naive is cheap; single runs once it takes seconds.
  const reps = previousNaive < 3000 ? 3 : 1;
  const o: number[] = [];
  const v: number[] = [];
  for (let r = 0; r < reps; r++) {
    o.push(await ours(n));
    v.push(await naive(n));
  }
  const om = median(o);
  const vm = median(v);
  previousNaive = vm;
  console.log(
    `${String(n).padEnd(8)} ${om.toFixed(0).padStart(7)}  ${String(rate(n, om)).padStart(9)}  ${vm.toFixed(0).padStart(9)}  ${String(rate(n, vm)).padStart(10)}  ${(vm / om).toFixed(1)}x`,
  );
  if (vm >= 10_000 && n >= 10_000) break;
}
const big: number[] = [];
for (let r = 0; r < 3; r++) big.push(await ours(100_000));
const bm = median(big);
console.log(
  `ours at 100000 events: median ${bm.toFixed(0)} ms, ${rate(100_000, bm)} events/s (3 runs)`,
);
rmSync(root, { recursive: true, force: true });
