// Hard memory bound (invariant 6): every memory-hostile class ends `memory` with the process RSS
// growing by at most the limit + HOST_SLACK, 50 of them in a row leave RSS within 64 MiB of where it
// started, a guest that catches the OOM still ends `memory`, and innocent runs next to them keep
// their exact results and stay within 3x of their solo latency.
import { createSandbox, type Sandbox, type SandboxOutcome } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareWithControl, expectedValue, expectUndisturbed, logRatios } from './bystander.js';
import { corpusCapabilities, loadCorpus } from './corpus.js';

const MIB = 1024 * 1024;
const LIMIT = 32 * MIB;
/**
 * RSS a memory kill may add beyond the run's own limit: host-side memory of the process (both
 * threads' V8 heaps, the module the pool builds to replace the killed one). Idle, the classes
 * read 14-46 MiB in all for a 32 MiB limit (2026-12-03); 16 MiB of slack failed CI once (49.4 MiB
 * for mem-map-growth). With the module's maximum at 3x or 4x the limit (the heap checks too at
 * 4x) the classes still ended `memory`, at 30-49 MiB: what stopped them then was not traced, so
 * this test is not the one that shows the cap holds (packages/sandbox's controls test is).
 */
const HOST_SLACK = 32 * MIB;
const CLASSES = [
  'mem-arraybuffer-burst',
  'mem-arraybuffer-resize',
  'mem-arraybuffer-transfer',
  'mem-string-pieces',
  'mem-array-dense',
  'mem-map-growth',
  'mem-set-growth',
  'mem-closures-in-jobs',
  'mem-rejected-promises',
  'mem-error-stacks',
  'mem-caught-oom-return',
];
const corpus = new Map(loadCorpus().map((p) => [p.name, p]));
const program = (name: string) => {
  const p = corpus.get(name);
  if (p === undefined) throw new Error(`no fixture ${name}`);
  return p;
};

let sb: Sandbox;
/** Innocent runs only, on its own worker: undisturbed latency at the same moment (bystander tests). */
let control: Sandbox;
beforeAll(async () => {
  // Memory attacks are slow to fill 32 MiB on a loaded machine (GC work grows with the heap):
  // generous CPU limits so that they end by memory, not by time.
  const limits = { memoryBytes: LIMIT, cpuSliceMs: 8000, wallMs: 60_000, abortGraceMs: 300 };
  [sb, control] = await Promise.all([
    createSandbox({ poolSize: 2, limits }),
    createSandbox({ poolSize: 1, limits }),
  ]);
  // Warm both workers so that lazily compiled code is not charged to the first measurement.
  await Promise.all(
    Array.from({ length: 4 }, () =>
      sb.run({ source: 'async function run() { return 1; }', capabilities: {} }),
    ),
  );
  // ...and the memory-kill path (grow failure, retirement, replacement module) once per worker:
  // its one-time host costs (code compiled on first use, heap growth of the main thread) are not
  // the hostile run's allocation. Seen without this: the first class measured 48.9-53.5 MiB.
  const hog = program('mem-arraybuffer-burst');
  await Promise.all(
    Array.from({ length: 2 }, () =>
      sb.run({ source: hog.source, capabilities: corpusCapabilities(hog.caps), seed: 7 }),
    ),
  );
});
afterAll(async () => {
  await Promise.all([sb.close(), control.close()]);
});

const rss = () => process.memoryUsage.rss();

async function peakRssDuring(f: () => Promise<SandboxOutcome>) {
  const base = rss();
  let peak = base;
  const timer = setInterval(() => {
    const r = rss();
    if (r > peak) peak = r;
  }, 2);
  try {
    const outcome = await f();
    peak = Math.max(peak, rss());
    return { outcome, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

const runHostile = (name: string) =>
  sb.run({
    source: program(name).source,
    capabilities: corpusCapabilities(program(name).caps),
    seed: 7,
  });

describe('hard memory bound', () => {
  it.each(CLASSES)(
    '%s ends memory within limit + 32 MiB of RSS',
    async (name) => {
      const { outcome, growth } = await peakRssDuring(() => runHostile(name));
      expect(outcome.status, JSON.stringify(outcome)).toBe('memory');
      expect(outcome.status !== 'completed' && outcome.error.code).toBe('WF_SANDBOX_MEMORY_LIMIT');
      expect(growth, `RSS grew ${(growth / MIB).toFixed(1)} MiB`).toBeLessThanOrEqual(
        LIMIT + HOST_SLACK,
      );
      // Filling 32 MiB is GC-heavy CPU work: on a starved machine it takes well over 30 s of wall.
    },
    180_000,
  );

  it('50 consecutive memory-hostile runs leave RSS within 64 MiB of where it started', async () => {
    const start = rss();
    const names = ['mem-arraybuffer-burst', 'mem-caught-oom-return', 'mem-string-pieces'];
    for (let i = 0; i < 50; i++) {
      const o = await runHostile(names[i % names.length] ?? 'mem-arraybuffer-burst');
      expect(o.status).toBe('memory');
    }
    const end = rss();
    expect(end - start, `RSS moved ${((end - start) / MIB).toFixed(1)} MiB`).toBeLessThan(64 * MIB);
    // A moderate allocation after all those kills still completes, and a large one is bounded.
    const moderate = await sb.run({
      source:
        'async function run() { const k = []; for (let i = 0; i < 8; i++) k.push(new ArrayBuffer(1 << 20)); return k.length; }',
      capabilities: {},
    });
    expect(moderate).toMatchObject({ status: 'completed', value: 8 });
    const { outcome, growth } = await peakRssDuring(() => runHostile('mem-arraybuffer-burst'));
    expect(outcome.status).toBe('memory');
    expect(growth).toBeLessThanOrEqual(LIMIT + HOST_SLACK);
  }, 600_000);

  it.each(['mem-arraybuffer-burst', 'mem-closures-in-jobs', 'mem-caught-oom-return'])(
    'innocent runs next to %s keep their results and stay within 3x of a control',
    async (name) => {
      const expected = await Promise.all([0, 1, 2, 3].map((id) => expectedValue(control, id)));
      const r = await compareWithControl(sb, control, () => runHostile(name));
      logRatios(name, r);
      for (const round of r.rounds) expect(round.hostile.status).toBe('memory');
      expectUndisturbed(r, expected);
    },
    600_000,
  );
});
