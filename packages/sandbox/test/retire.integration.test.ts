// Module retirement: a run that ends by memory, stack or interrupt retires its WASM module, and
// the next run gets a fresh one (new module id) whose memory bound still holds. Clean runs hand
// their module back to the warm pool (the next run reuses the same id), so a module that was
// released instead of retired would show up again in the runs that follow. Module ids only
// show that while the pool happens to reuse modules, so each case also reads the worker's own
// count of modules retired after trouble (`stats.retiredAfterTrouble`): the bad run's module
// must be counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOutcome } from '../src/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({
    poolSize: 1,
    limits: { wallMs: 10_000, cpuSliceMs: 8000, memoryBytes: 32 * 1024 * 1024 },
  });
});
afterAll(async () => {
  await sb.close();
});

const HOG = `async function run(api, args) {
  const keep = [];
  for (let i = 0; i < args.mib; i++) keep.push(new ArrayBuffer(1024 * 1024));
  return keep.length;
}`;

/** `later` ran on the worker that ran `bad`, which has retired a module since `bad` ended. */
function expectRetiredSince(bad: SandboxOutcome, later: SandboxOutcome): void {
  expect(later.stats.workerId).toBe(bad.stats.workerId);
  expect(later.stats.retiredAfterTrouble).toBe(bad.stats.retiredAfterTrouble + 1);
}

describe('module retirement', () => {
  it('replaces the module after a memory kill, and the next run is still bounded', async () => {
    const first = await sb.run({ source: HOG, args: { mib: 200 }, capabilities: {} });
    expect(first.status).toBe('memory');
    const trivial = await sb.run({
      source: 'async function run() { return 1; }',
      capabilities: {},
    });
    expect(trivial.status).toBe('completed');
    expect(trivial.stats.moduleId).not.toBe(first.stats.moduleId);
    expectRetiredSince(first, trivial);
    // A run after the kill must not escape the limit (before the fix, 100 MiB completed here).
    const second = await sb.run({ source: HOG, args: { mib: 100 }, capabilities: {} });
    expect(second.status).toBe('memory');
    expect(second.stats.moduleId).not.toBe(first.stats.moduleId);
    // A moderate allocation well under the limit still completes on the replacement module.
    const moderate = await sb.run({ source: HOG, args: { mib: 4 }, capabilities: {} });
    expect(moderate).toMatchObject({ status: 'completed', value: 4 });
  });

  it.each([
    ['an interrupted slice', 'async function run() { for (;;) {} }', 'timeout'],
    [
      'a stack overflow',
      'async function run() { const f = (n) => f(n + 1) + 1; return f(0); }',
      'stack',
    ],
    ['a memory kill', HOG.replace('args.mib', '200'), 'memory'],
  ])('never serves a module again after %s', async (_label, source, status) => {
    const trivial = () =>
      sb.run({ source: 'async function run() { return 1; }', capabilities: {} });
    const a = await trivial();
    const b = await trivial();
    const bad = await sb.run({
      source,
      args: { mib: 200 },
      capabilities: {},
      limits: { cpuSliceMs: 300 },
    });
    expect(bad.status).toBe(status);
    // A clean run retires nothing; the bad run's module is retired by the time the next run ends.
    expect(b.stats.retiredAfterTrouble).toBe(a.stats.retiredAfterTrouble);
    const next = await trivial();
    expectRetiredSince(bad, next);
    const after: string[] = [];
    for (let i = 0; i < 8; i++) {
      const o = await trivial();
      expect(o.status).toBe('completed');
      after.push(o.stats.moduleId);
    }
    expect(after).not.toContain(bad.stats.moduleId);
    // Checked last (a pool policy, not the retirement): sequential clean runs reuse the most
    // recently released module, and still do after the retirement, so the id check above bites.
    expect(b.stats.moduleId).toBe(a.stats.moduleId);
    expect(new Set(after).size).toBeLessThan(after.length);
  });
});
