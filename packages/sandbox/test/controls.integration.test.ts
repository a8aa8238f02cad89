// Every runner control and every outcome status, decided from host-side facts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOutcome } from '../src/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({
    poolSize: 2,
    limits: { wallMs: 1500, cpuSliceMs: 300, memoryBytes: 32 * 1024 * 1024, abortGraceMs: 300 },
  });
});
afterAll(async () => {
  await sb.close();
});

const codeOf = (o: SandboxOutcome) => (o.status === 'completed' ? 'completed' : o.error.code);
const noCaps = {};

describe('CPU slices and the wall clock', () => {
  it('interrupts a synchronous infinite loop (uncatchable) as a CPU-slice timeout', async () => {
    const o = await sb.run({
      source: 'async function run() { try { for (;;) {} } catch (e) { return "caught"; } }',
      // The slice is measured in CPU time: on a loaded machine 300 ms of CPU can take seconds.
      limits: { wallMs: 15_000 },
      capabilities: noCaps,
    });
    expect(o.status).toBe('timeout');
    expect(codeOf(o)).toBe('WF_SANDBOX_CPU_SLICE');
    expect(o.stats.cpuMs).toBeGreaterThanOrEqual(300);
    expect(o.stats.cpuMs).toBeLessThan(1000);
  });

  it('interrupts a microtask loop', async () => {
    const o = await sb.run({
      source: 'async function run() { for (;;) { await null; } }',
      capabilities: noCaps,
    });
    expect(o.status).toBe('timeout');
  });

  it('interrupts catastrophic regex backtracking', async () => {
    const o = await sb.run({
      source: 'async function run() { return /(a+)+$/.test("a".repeat(40) + "!"); }',
      capabilities: noCaps,
    });
    expect(o.status).toBe('timeout');
  });

  it('ends a run waiting on a slow host call at wallMs, aborting the call signal first', async () => {
    let aborted = false;
    let settledAfterAbort = false;
    const o = await sb.run({
      source: 'async function run(api) { await api.forever(); return "never"; }',
      limits: { wallMs: 400 },
      capabilities: {
        forever: (_input, ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              setTimeout(() => {
                settledAfterAbort = true;
                resolve('late');
              }, 50);
            });
          }),
      },
    });
    expect(o.status).toBe('timeout');
    expect(codeOf(o)).toBe('WF_SANDBOX_WALL_TIMEOUT');
    expect(aborted).toBe(true);
    // The outcome waited for the aborted call to settle (bounded grace).
    expect(settledAfterAbort).toBe(true);
    expect(o.stats.elapsedMs).toBeGreaterThanOrEqual(400);
    // wall + grace + scheduling slack on busy CI machines
    expect(o.stats.elapsedMs).toBeLessThan(400 + 300 + 2500);
  });

  it('bounds the grace when an aborted call never settles', async () => {
    const o = await sb.run({
      source: 'async function run(api) { await api.stuck(); }',
      limits: { wallMs: 300, abortGraceMs: 200 },
      capabilities: { stuck: () => new Promise(() => {}) },
    });
    expect(o.status).toBe('timeout');
    expect(o.stats.elapsedMs).toBeLessThan(300 + 200 + 2500);
    // Ended by the worker's own wall timer, not by the host's watchdog replacing the worker
    // (same status and code, but it costs a thread and moves every other run on it).
    expect(codeOf(o)).toBe('WF_SANDBOX_WALL_TIMEOUT');
    expect(o.status !== 'completed' && o.error.message).toBe(
      'the run exceeded its wall-clock limit of 300 ms',
    );
  });
});

describe('long limits', () => {
  it('accepts a wall limit beyond the timer maximum without firing early', async () => {
    const o = await sb.run({
      source: 'async function run(api) { return await api.wait(); }',
      limits: { wallMs: 2 ** 40, abortGraceMs: 2 ** 40 },
      capabilities: { wait: () => new Promise((r) => setTimeout(() => r('ok'), 50)) },
    });
    expect(o.status === 'completed' && o.value).toBe('ok');
  });
});

describe('memory and stack', () => {
  it('stops a heap that grows past memoryBytes (hard WASM memory maximum)', async () => {
    const o = await sb.run({
      source:
        'async function run() { const a = []; for (;;) a.push({ i: a.length, s: "x" + a.length }); }',
      limits: { cpuSliceMs: 8000, wallMs: 10_000 },
      capabilities: noCaps,
    });
    expect(o.status).toBe('memory');
    expect(codeOf(o)).toBe('WF_SANDBOX_MEMORY_LIMIT');
    // The module's linear memory has a hard maximum of memoryBytes: the run reached it, no further.
    expect(o.stats.peakMemoryBytes).toBeGreaterThan(24 * 1024 * 1024);
    expect(o.stats.peakMemoryBytes).toBeLessThanOrEqual(32 * 1024 * 1024);
  });

  it('stops string growth inside promise jobs', async () => {
    const o = await sb.run({
      source: `async function run() {
        const parts = [];
        for (let i = 0; ; i++) { await null; parts.push("y".repeat(100000) + i); }
      }`,
      limits: { cpuSliceMs: 8000, wallMs: 10_000 },
      capabilities: noCaps,
    });
    expect(o.status).toBe('memory');
  });

  it('reports deep recursion as a stack outcome', async () => {
    const o = await sb.run({
      source: 'async function run() { const f = (n) => f(n + 1) + 1; return f(0); }',
      capabilities: noCaps,
    });
    expect(o.status).toBe('stack');
    expect(codeOf(o)).toBe('WF_SANDBOX_STACK_OVERFLOW');
  });

  it('survives native recursion in JSON.stringify of a 10k-deep structure', async () => {
    const o = await sb.run({
      source: `async function run() {
        let v = {}; for (let i = 0; i < 10000; i++) v = { v };
        try { JSON.stringify(v); return "no overflow"; } catch (e) { return e.name; }
      }`,
      // CPU bounds the work; the wall limit is only a backstop a loaded machine cannot reach.
      limits: { cpuSliceMs: 5000, wallMs: 120_000 },
      capabilities: noCaps,
    });
    expect(o.status).toBe('completed');
  });
});

describe('deadlock and abort', () => {
  it('reports a never-settling promise as a deadlock at once', async () => {
    const o = await sb.run({
      source: 'async function run() { await new Promise(() => {}); }',
      limits: { wallMs: 20_000 },
      capabilities: noCaps,
    });
    expect(o.status).toBe('deadlock');
    // Reported at once, not at the wall limit.
    expect(o.stats.elapsedMs).toBeLessThan(3000);
  });

  it('aborts on the caller signal and aborts outstanding capability calls', async () => {
    const controller = new AbortController();
    let callAborted = false;
    const p = sb.run({
      source: 'async function run(api) { await api.wait(); }',
      signal: controller.signal,
      // Far beyond the test's timeout: the run must end because of the abort, not at wallMs
      // (the worker ends a closed run at once; it does not wait for its next slice or timer).
      limits: { wallMs: 600_000 },
      capabilities: {
        wait: (_i, ctx) =>
          new Promise<void>((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              callAborted = true;
              resolve();
            });
            setTimeout(() => controller.abort(), 30);
          }),
      },
    });
    const o = await p;
    expect(o.status).toBe('aborted');
    expect(codeOf(o)).toBe('WF_SANDBOX_ABORTED');
    expect(callAborted).toBe(true);
    expect(o.stats.elapsedMs).toBeLessThan(600_000);
  });

  it('ends an aborted run whose host call never settles with its kill status, not at wallMs', async () => {
    // Nothing wakes the guest after the abort (the call ignores its signal), so only the
    // worker's close handler can end the run; without it the run would hang until its wall
    // limit, far beyond this test's timeout.
    const controller = new AbortController();
    const t0 = performance.now();
    const o = await sb.run({
      source: 'async function run(api) { await api.ignore(); return "never"; }',
      signal: controller.signal,
      limits: { wallMs: 600_000, abortGraceMs: 200 },
      capabilities: {
        ignore: () => {
          setTimeout(() => controller.abort(), 30);
          return new Promise<void>(() => {});
        },
      },
    });
    expect(o.status).toBe('aborted');
    expect(codeOf(o)).toBe('WF_SANDBOX_ABORTED');
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 20_000);

  it('returns aborted without starting when the signal is already aborted', async () => {
    let called = false;
    const o = await sb.run({
      source: 'async function run(api) { await api.x(); }',
      signal: AbortSignal.abort(),
      capabilities: {
        x: () => {
          called = true;
        },
      },
    });
    expect(o.status).toBe('aborted');
    expect(called).toBe(false);
  });
});

describe('host-call caps', () => {
  it('ends the run at maxHostCalls, even if the guest catches the refusal', async () => {
    let calls = 0;
    const o = await sb.run({
      source: `async function run(api) {
        for (let i = 0; i < 100; i++) { try { await api.x(); } catch (e) {} }
        return "done";
      }`,
      limits: { maxHostCalls: 10 },
      capabilities: {
        x: () => {
          calls += 1;
        },
      },
    });
    expect(o.status).toBe('limit');
    expect(codeOf(o)).toBe('WF_SANDBOX_HOST_CALL_LIMIT');
    expect(calls).toBe(10);
  });

  it('ends the run at maxOutstandingCalls', async () => {
    const o = await sb.run({
      source:
        'async function run(api) { const ps = []; for (let i = 0; i < 20; i++) ps.push(api.x()); await Promise.all(ps); }',
      limits: { maxOutstandingCalls: 5 },
      capabilities: { x: () => new Promise((r) => setTimeout(r, 20)) },
    });
    expect(o.status).toBe('limit');
    expect(codeOf(o)).toBe('WF_SANDBOX_OUTSTANDING_LIMIT');
  });

  it('ends the run on an oversized or over-deep capability input', async () => {
    const big = await sb.run({
      source: 'async function run(api) { await api.x("z".repeat(5000)); }',
      limits: { maxArgBytes: 1000 },
      capabilities: { x: () => null },
    });
    expect(codeOf(big)).toBe('WF_SANDBOX_ARGUMENT_TOO_LARGE');
    const deep = await sb.run({
      source:
        'async function run(api) { let v = 1; for (let i = 0; i < 100; i++) v = [v]; await api.x(v); }',
      limits: { maxJsonDepth: 20 },
      capabilities: { x: () => null },
    });
    expect(codeOf(deep)).toBe('WF_SANDBOX_ARGUMENT_TOO_DEEP');
    expect(deep.status).toBe('limit');
  });

  it('limits the size and depth of the final result', async () => {
    const big = await sb.run({
      source: 'async function run() { return "r".repeat(3000); }',
      limits: { maxResultBytes: 1000 },
      capabilities: noCaps,
    });
    expect(big.status).toBe('limit');
    expect(codeOf(big)).toBe('WF_SANDBOX_RESULT_TOO_LARGE');
    const deep = await sb.run({
      source:
        'async function run() { let v = 1; for (let i = 0; i < 100; i++) v = [v]; return v; }',
      limits: { maxJsonDepth: 20 },
      capabilities: noCaps,
    });
    expect(codeOf(deep)).toBe('WF_SANDBOX_RESULT_TOO_DEEP');
  });

  it('rejects an oversized capability result into the guest', async () => {
    const o = await sb.run({
      source: 'async function run(api) { try { await api.x(); } catch (e) { return e.code; } }',
      limits: { maxResultBytes: 1000 },
      capabilities: { x: () => 'q'.repeat(5000) },
    });
    expect(o.status === 'completed' && o.value).toBe('WF_SANDBOX_HOST_RESULT_INVALID');
  });
});

describe('quiescence (invariant 3)', () => {
  it('waits for fire-and-forget host calls accepted before run() returned', async () => {
    let finished = false;
    const o = await sb.run({
      source: 'async function run(api) { api.slow(); return "returned"; }',
      capabilities: {
        slow: () =>
          new Promise<void>((r) =>
            setTimeout(() => {
              finished = true;
              r();
            }, 150),
          ),
      },
    });
    expect(o.status === 'completed' && o.value).toBe('returned');
    expect(finished).toBe(true);
    expect(o.stats.elapsedMs).toBeGreaterThanOrEqual(140);
  });

  it('refuses host calls made after run() returned', async () => {
    const calls: string[] = [];
    const o = await sb.run({
      source: `async function run(api) {
        api.first().then(() => api.second()).catch(() => {});
        return 1;
      }`,
      capabilities: {
        first: async () => {
          calls.push('first');
          await new Promise((r) => setTimeout(r, 20));
        },
        second: () => {
          calls.push('second');
        },
      },
    });
    expect(o.status).toBe('completed');
    expect(calls).toEqual(['first']);
  });

  it('times out when a fire-and-forget call outlives the wall clock', async () => {
    const o = await sb.run({
      source: 'async function run(api) { api.never(); return 1; }',
      limits: { wallMs: 300, abortGraceMs: 100 },
      capabilities: { never: () => new Promise(() => {}) },
    });
    expect(o.status).toBe('timeout');
  });
});

describe('worker replacement', () => {
  it('replaces a worker whose slice starves the interrupt poll; co-resident runs continue, later runs work', async () => {
    const s = await createSandbox({
      poolSize: 1,
      limits: { cpuSliceMs: 300, wallMs: 60_000, abortGraceMs: 200 },
    });
    try {
      let calls = 0;
      const bystander = s.run({
        source: 'async function run(api) { return await api.wait(); }',
        capabilities: {
          wait: () => {
            calls += 1;
            return new Promise((r) => setTimeout(() => r('late'), 3000));
          },
        },
      });
      const hog = await s.run({
        source: 'async function run() { for (;;) new Array(200000).fill(0); }',
        capabilities: noCaps,
      });
      expect(hog.status).toBe('timeout');
      // Stopped by its CPU slice (thread CPU time), not by the wall clock: no wall-time bound here,
      // which a loaded machine would trip.
      expect(codeOf(hog)).toBe('WF_SANDBOX_CPU_SLICE');
      // The bystander continued on a fresh worker (replayed), and its call ran once.
      const b = await bystander;
      expect(b).toMatchObject({ status: 'completed', value: 'late' });
      expect(b.stats.workerId).not.toBe(hog.stats.workerId || 'w1');
      expect(calls).toBe(1);
      const after = await s.run({
        source: 'async function run() { return 7; }',
        capabilities: noCaps,
      });
      expect(after.status === 'completed' && after.value).toBe(7);
      expect(after.stats.workerId).not.toBe(hog.stats.workerId || 'w1');
    } finally {
      await s.close();
    }
  });
});

describe('pool', () => {
  it('keeps serving after runs that retire modules', async () => {
    const bad = await sb.run({
      source: 'async function run() { for (;;) {} }',
      capabilities: noCaps,
    });
    expect(bad.status).toBe('timeout');
    const ok = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        sb.run({
          source: `async function run(api) { return await api.id(${i}); }`,
          capabilities: { id: (x) => x },
        }),
      ),
    );
    expect(ok.map((o) => o.status === 'completed' && o.value)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('rejects run() after close()', async () => {
    const s = await createSandbox({ poolSize: 1 });
    await s.close();
    await expect(s.run({ source: '', capabilities: {} })).rejects.toMatchObject({
      code: 'WF_SANDBOX_CLOSED',
    });
  });
});
