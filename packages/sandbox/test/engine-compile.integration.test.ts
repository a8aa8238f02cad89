// Who compiles the engine (a fresh process's first result): the thread that creates the sandbox compiles
// QuickJS's WebAssembly while its first worker thread boots, and posts it; the worker instantiates
// that module instead of compiling its own. The worker says it is ready once the engine is
// instantiated, before it builds its first hardened slot, and a run that arrives meanwhile waits
// for that slot. Real threads and real QuickJS; this thread's WebAssembly.compile is wrapped.
import { afterEach, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/index.js';

const WA = (
  globalThis as unknown as { WebAssembly: { compile: (bytes: Uint8Array) => Promise<unknown> } }
).WebAssembly;
const compile = WA.compile;
const TRIVIAL = {
  source: 'async function run(api) { return (await api.x(41)) + 1; }',
  capabilities: { x: (v: unknown) => v },
};

let open: Sandbox[] = [];
afterEach(async () => {
  WA.compile = compile;
  await Promise.all(open.map((s) => s.close()));
  open = [];
});

/** Wraps this thread's WebAssembly.compile; returns the sizes of the binaries it was given. */
function wrapCompile(wrap: (compiled: Promise<unknown>) => Promise<unknown>): number[] {
  const sizes: number[] = [];
  WA.compile = (bytes) => {
    sizes.push(bytes.byteLength);
    return wrap(compile.call(WA, bytes));
  };
  return sizes;
}

/** A sandbox (closed after the test) and its first run of TRIVIAL, which must return 42. */
async function firstRun(options: Parameters<typeof createSandbox>[0] = {}) {
  const sb = await createSandbox({ poolSize: 1, ...options });
  open.push(sb);
  const o = await sb.run(TRIVIAL);
  expect(o.status === 'completed' && o.value).toBe(42);
  return o;
}

it('the first worker instantiates the engine this thread compiled: it waits for it', async () => {
  // Held back here for 2.5 s: a worker that compiled its own would be ready long before.
  const HOLD_MS = 2_500;
  const sizes = wrapCompile(
    (compiled) => new Promise((resolve) => setTimeout(() => resolve(compiled), HOLD_MS)),
  );
  const t0 = performance.now();
  const sb = await createSandbox({ poolSize: 1 });
  open.push(sb);
  expect(performance.now() - t0).toBeGreaterThanOrEqual(HOLD_MS - 1);
  // One binary, QuickJS's (~500 KB), compiled once on this thread.
  expect(sizes).toHaveLength(1);
  expect(sizes[0]).toBeGreaterThan(100_000);
  const o = await sb.run(TRIVIAL);
  expect(o.status === 'completed' && o.value).toBe(42);
  expect(sizes).toHaveLength(1);
}, 30_000);

it('when the compile fails on this thread, the worker compiles the engine itself', async () => {
  const sizes = wrapCompile(async (compiled) => {
    await compiled;
    throw new Error('no WebAssembly here');
  });
  await firstRun();
  expect(sizes).toHaveLength(1);
}, 30_000);

it('the first run gets the module the worker prepared while it was already ready', async () => {
  // Sent as soon as createSandbox resolves, the start message reaches a worker still building its
  // first slot: it must wait for that slot, not make a second module (w1-m2) beside it.
  const o = await firstRun();
  expect(o.stats.moduleId).toBe('w1-m1');
}, 30_000);

it('a compile that throws on this thread (not a rejection) also leaves it to the worker', async () => {
  let calls = 0;
  WA.compile = () => {
    calls += 1;
    throw new Error('no WebAssembly here');
  };
  await firstRun();
  expect(calls).toBe(1);
}, 30_000);

it('with wasmTierUp false the worker compiles it (V8 reads --liftoff-only when it compiles)', async () => {
  const sizes = wrapCompile((compiled) => compiled);
  await firstRun({ wasmTierUp: false });
  expect(sizes).toEqual([]);
}, 30_000);
