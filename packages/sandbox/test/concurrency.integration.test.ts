// 200 runs at once, each waiting on slow host calls: all complete with their own correct
// results, each in its own WASM module (own memory maximum), and the process memory stays bounded.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ poolSize: 2, limits: { wallMs: 20_000 } });
});
afterAll(async () => {
  await sb.close();
});

it('completes 200 concurrent runs waiting on slow host calls with bounded memory', async () => {
  const rssBefore = process.memoryUsage().rss;
  let active = 0;
  let peakActive = 0;
  const slow = async (input: unknown) => {
    active += 1;
    peakActive = Math.max(peakActive, active);
    await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 50)));
    active -= 1;
    const { id, step } = input as { id: number; step: number };
    return id * 10 + step;
  };
  const source = `async function run(api, args) {
    const a = await api.slow({ id: args.id, step: 1 });
    const [b, c] = await Promise.all([api.slow({ id: args.id, step: 2 }), api.slow({ id: args.id, step: 3 })]);
    return { id: args.id, sum: a + b + c, seed: Math.random() > -1 };
  }`;
  const outcomes = await Promise.all(
    Array.from({ length: 200 }, (_, id) =>
      sb.run({ source, args: { id }, capabilities: { slow } }),
    ),
  );
  const rssAfter = process.memoryUsage().rss;
  for (const [id, o] of outcomes.entries()) {
    expect(o.status).toBe('completed');
    if (o.status === 'completed') expect(o.value).toEqual({ id, sum: id * 30 + 6, seed: true });
  }
  // They really overlapped: many runs were waiting on the host at the same time.
  expect(peakActive).toBeGreaterThan(50);
  // Runs executing at the same time never share a WASM memory (each has its own hard maximum).
  const modules = new Set(outcomes.map((o) => o.stats.moduleId));
  expect(modules.size).toBe(200);
  expect(rssAfter - rssBefore).toBeLessThan(768 * 1024 * 1024);
}, 60_000);

it('reuses the warm module across ordinary runs (no dispose fault)', async () => {
  const s = await createSandbox({ poolSize: 1 });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const o = await s.run({
        source: 'async function run(api) { return await api.x(1); }',
        capabilities: { x: (v) => v },
      });
      expect(o.status).toBe('completed');
      ids.push(o.stats.moduleId);
    }
    expect(new Set(ids).size).toBe(1);
  } finally {
    await s.close();
  }
});
