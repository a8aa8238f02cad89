// The run's memory figure: the end-of-run sample reads the engine's live-heap count directly
// (fast-path.js memoryUsed) instead of parsing the text report, and must read the same number.
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_SOURCE } from '../src/internal/bootstrap.js';
import { FastPath } from '../src/internal/fast-path.js';
import { createSandbox, type Sandbox } from '../src/index.js';

const textReport = (dump: string) =>
  Number(/memory used\s+\d+\s+(\d+)/.exec(dump)?.[1] ?? Number.NaN);

describe('memoryUsed()', () => {
  it('reads the same figure as the text report, in a hardened context, as the heap changes', async () => {
    // The variant's CJS typings confuse NodeNext resolution; at run time it is the ESM default export.
    const mod = await newQuickJSWASMModuleFromVariant(
      variant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0],
    );
    const rt = mod.newRuntime();
    const ctx = rt.newContext();
    const boot = ctx.unwrapResult(ctx.evalCode(BOOTSTRAP_SOURCE, 'k.js', { strict: true }));
    const host = ctx.newFunction('host', () => undefined);
    const kernel = ctx.unwrapResult(ctx.callFunction(boot, ctx.undefined, host));
    const fast = new FastPath({ mod } as never, rt, ctx);
    const readings: [number, number][] = [];
    readings.push([fast.memoryUsed(), textReport(rt.dumpMemoryUsage())]);
    const grow = ctx.unwrapResult(
      ctx.evalCode('globalThis.keep = []; (n) => { keep.push("x".repeat(n)); }'),
    );
    for (const n of [1000, 100_000, 2_000_000]) {
      ctx.unwrapResult(ctx.callFunction(grow, ctx.undefined, ctx.newNumber(n))).dispose();
      readings.push([fast.memoryUsed(), textReport(rt.dumpMemoryUsage())]);
    }
    for (const [direct, text] of readings) {
      expect(direct).toBeGreaterThan(0);
      expect(direct).toBe(text);
    }
    // Each reading follows the heap: the 2 MB string is in the last one.
    expect(readings[3]?.[0] ?? 0).toBeGreaterThan((readings[0]?.[0] ?? 0) + 2_000_000);
    fast.dispose();
    for (const h of [grow, kernel, host, boot]) h.dispose();
    ctx.dispose();
    rt.dispose();
  });
});

describe('peakMemoryBytes of a short run', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await createSandbox({ poolSize: 1, limits: { memoryBytes: 32 * 1024 * 1024 } });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('includes what the guest still holds when it returns (sampled at the end of the run)', async () => {
    const run = (n: number) =>
      sb.run({
        source: `async function run(api, args) {
          globalThis.held = [];
          for (let i = 0; i < args.n; i++) held.push({ i, s: 'x' + i });
          return (await api.x(1)) + held.length;
        }`,
        args: { n },
        capabilities: { x: (v) => v },
      });
    // 20,000 small objects: about 1.9 MB in the engine's count, in well under 2 ms (no sample
    // is taken while the guest runs), and no growth of the module's linear memory.
    const small = await run(10);
    const big = await run(20_000);
    expect(small.status).toBe('completed');
    expect(big.status).toBe('completed');
    expect(small.stats.peakMemoryBytes).toBeGreaterThan(50_000);
    expect(big.stats.peakMemoryBytes).toBeGreaterThan(small.stats.peakMemoryBytes + 1_500_000);
    expect(big.stats.peakMemoryBytes).toBeLessThan(small.stats.peakMemoryBytes + 3_000_000);
  });
});
