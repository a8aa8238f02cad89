// Hard memory bound (issue 11): every memory-hostile class ends `memory` with the process RSS
// growing by at most the limit + 16 MiB, 50 of them in a row leave RSS within 64 MiB of where it
// started, a guest that catches the OOM still ends `memory`, and innocent runs next to them keep
// their exact results and stay within 3x of their solo latency.
import { createSandbox, type Sandbox, type SandboxOutcome } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bystanderBound,
  expectedValue,
  logRatios,
  soloLatency,
  withBystanders,
} from './bystander.js';
import { corpusCapabilities, loadCorpus } from './corpus.js';

const MIB = 1024 * 1024;
const LIMIT = 32 * MIB;
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
beforeAll(async () => {
  // Memory attacks are slow to fill 32 MiB on a loaded machine (GC work grows with the heap):
  // generous CPU limits so that they end by memory, not by time.
  sb = await createSandbox({
    poolSize: 2,
    limits: { memoryBytes: LIMIT, cpuSliceMs: 8000, wallMs: 20_000, abortGraceMs: 300 },
  });
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
  await sb.close();
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
  it.each(CLASSES)('%s ends memory within limit + 16 MiB of RSS', async (name) => {
    const { outcome, growth } = await peakRssDuring(() => runHostile(name));
    expect(outcome.status, JSON.stringify(outcome)).toBe('memory');
    expect(outcome.status !== 'completed' && outcome.error.code).toBe('WF_SANDBOX_MEMORY_LIMIT');
    expect(growth, `RSS grew ${(growth / MIB).toFixed(1)} MiB`).toBeLessThanOrEqual(
      LIMIT + 16 * MIB,
    );
  });

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
    expect(growth).toBeLessThanOrEqual(LIMIT + 16 * MIB);
  }, 180_000);

  it.each(['mem-arraybuffer-burst', 'mem-closures-in-jobs', 'mem-caught-oom-return'])(
    'innocent runs next to %s keep their results and stay within 3x of solo latency',
    async (name) => {
      const expected = await Promise.all([0, 1, 2, 3].map((id) => expectedValue(sb, id)));
      const solo = await soloLatency(sb);
      const r = await withBystanders(sb, () => runHostile(name));
      expect(r.hostile.status).toBe('memory');
      r.innocents.forEach((o, id) => {
        expect(o.status, JSON.stringify(o)).toBe('completed');
        expect(o.status === 'completed' && JSON.stringify(o.value)).toBe(expected[id]);
      });
      logRatios(name, solo, r.latencies);
      for (const ms of r.latencies) expect(ms).toBeLessThanOrEqual(bystanderBound(solo));
    },
    60_000,
  );
});
