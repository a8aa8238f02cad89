// A CPU-heavy slice does not hold its neighbours: once a slice has used 50 ms of CPU, the other
// runs on its worker continue on another worker (replayed from what they had received, so their
// results are identical), and new runs are not placed on the hot worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOutcome } from '../src/index.js';

let sb: Sandbox;
beforeAll(async () => {
  // One worker: without evacuation every run below shares the hostile slice's thread.
  sb = await createSandbox({ poolSize: 1, limits: { wallMs: 120_000, cpuSliceMs: 3000 } });
});
afterAll(async () => {
  await sb.close();
});

const INNOCENT = `async function run(api, args) {
  let acc = 0;
  for (let i = 0; i < 10; i++) acc += await api.wait(i);
  return { acc, r: Math.random(), now: Date.now() };
}`;
const caps = { wait: (x: unknown) => new Promise((r) => setTimeout(() => r(x), 5)) };
const innocent = () =>
  sb.run({ source: INNOCENT, capabilities: caps, seed: 3, startTime: 1_700_000_000_000 });

describe('evacuation of a hot worker', () => {
  it('runs beside a 3 s CPU slice finish first, elsewhere, with their undisturbed result', async () => {
    const solo = await innocent();
    expect(solo.status).toBe('completed');
    const order: string[] = [];
    const note = (label: string) => (o: SandboxOutcome) => {
      order.push(label);
      return o;
    };
    const before = innocent().then(note('before'));
    // Let the innocent reach its host calls on the only worker before the slice starts.
    await new Promise((r) => setTimeout(r, 20));
    const hostile = sb
      .run({ source: 'async function run() { for (;;) {} }', capabilities: {} })
      .then(note('hostile'));
    await new Promise((r) => setTimeout(r, 400));
    // Placed while the slice is hot: it must not wait behind it either.
    const after = innocent().then(note('after'));
    const [b, h, a] = await Promise.all([before, hostile, after]);
    expect(h).toMatchObject({ status: 'timeout', error: { code: 'WF_SANDBOX_CPU_SLICE' } });
    for (const o of [b, a]) {
      expect(o.status).toBe('completed');
      expect(o.status === 'completed' && o.value).toEqual(
        solo.status === 'completed' && solo.value,
      );
      expect(o.stats.workerId).not.toBe(h.stats.workerId);
    }
    // Ordering, not timing: both innocents (10 x 5 ms waits) end while the 3 s slice still runs.
    expect(order.indexOf('hostile')).toBe(2);
  }, 120_000);
});
