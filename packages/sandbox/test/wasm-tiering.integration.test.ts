// options.wasmTierUp false sets V8's --liftoff-only for the process from the worker thread, after
// Node booted it and before it compiled QuickJS (src/internal/tiering.js). Seen from outside, in a
// child process on the built package: a hot WebAssembly function on the main thread tiers up to
// TurboFan by default and stays on Liftoff once a sandbox asked for --liftoff-only.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const exec = promisify(execFile);
const CHILD = join(import.meta.dirname, 'fixtures', 'wasm-tiering.cjs');

async function tiering(mode: 'liftoff' | 'default') {
  const { stdout } = await exec(process.execPath, ['--allow-natives-syntax', CHILD, mode], {
    cwd: import.meta.dirname,
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

it.each([
  ['liftoff', 'with wasmTierUp false, WebAssembly in the process stays on Liftoff', false],
  ['default', "by default, V8's tiering is untouched: a hot function reaches TurboFan", true],
] as const)('%s: %s', async (mode, _what, turbofan) => {
  expect(await tiering(mode)).toEqual({
    value: 42,
    turbofan,
    liftoff: !turbofan,
    calls: expect.any(Number),
  });
});
