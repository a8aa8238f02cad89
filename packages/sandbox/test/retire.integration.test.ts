// Module retirement: a run that ends by memory, stack or interrupt retires its WASM module, and
// the next run gets a fresh one (new module id) whose memory bound still holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/index.js';

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
    // A run after the kill must not escape the limit (before the fix, 100 MiB completed here).
    const second = await sb.run({ source: HOG, args: { mib: 100 }, capabilities: {} });
    expect(second.status).toBe('memory');
    expect(second.stats.moduleId).not.toBe(first.stats.moduleId);
    // A moderate allocation well under the limit still completes on the replacement module.
    const moderate = await sb.run({ source: HOG, args: { mib: 4 }, capabilities: {} });
    expect(moderate).toMatchObject({ status: 'completed', value: 4 });
  });
});
