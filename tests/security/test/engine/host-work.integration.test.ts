// Host work on guest-controlled input, attacked next to innocent runs on the same engine and
// sandbox (invariant 6): each hostile run must fail alone, the innocent runs must return their
// results within 3x of their solo latency, and the host event loop must not stall (invariant 6).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openRunStore } from '@wf/catalog-fs';
import {
  createEngine,
  createSimulatedAgents,
  type Engine,
  type RunDone,
  type RunRecorder,
} from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const manifest = (name: string) => ({
  name,
  description: 'A workflow run next to others on one engine.',
  phases: ['work'],
  readOnly: false,
  maxAgents: 8,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
});

/** What every bystander does: a structured child, a workspace read, a small result. */
const INNOCENT = `async function run(wf, args) {
  const a = await wf.runAgent({ name: 'innocent', prompt: 'p',
    outputSchema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] } });
  const text = await wf.readFile('ok.txt');
  return { v: typeof a.structured.v, text, n: args.n };
}`;
const BYSTANDERS = 3;
/**
 * Bystander latency may grow to 3x solo, but never has to beat this floor: on the shared 2-core
 * machine, with the rest of the suite running, a hostile validation holding a core for its full
 * second (the schema worker's limit) delayed bystanders by up to 4 s of wall time.
 */
const LATENCY_FLOOR_MS = 5_000;
/** The bound on a busy event-loop stall (SECURITY.md, host-work bounds), on top of what the same bystanders cause alone. */
const STALL_BOUND_MS = 100;

let base: string;
let ws: string;
let sandbox: Sandbox;
let engine: Engine;
let recorder: RunRecorder;
let soloMs = 0;
let baselineStallMs = 0;

/** CPU time of this (the main) thread in ms, from Linux's per-thread stat (10 ms ticks). */
function mainThreadCpuMs(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Longest event-loop stall while `work` runs, by a 5 ms interval probe (perf_hooks' histogram is
 * reported alongside). A gap counts only as far as the main thread was *busy* in it (its own CPU
 * time, +10 ms for the tick): on a machine running more threads than cores a runnable thread
 * waits for a core, which is load, not host work.
 */
async function stallDuring<T>(
  work: () => Promise<T>,
): Promise<{ value: T; stallMs: number; wallStallMs: number; histogramMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let last = performance.now();
  let lastCpu = mainThreadCpuMs();
  let busiest = 0;
  let widest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = mainThreadCpuMs();
    const gap = now - last - 5;
    widest = Math.max(widest, gap);
    busiest = Math.max(busiest, Math.min(gap, cpu - lastCpu + 10));
    last = now;
    lastCpu = cpu;
  }, 5);
  try {
    const value = await work();
    return {
      value,
      stallMs: busiest,
      wallStallMs: widest,
      histogramMs: histogram.max / 1e6 - 5,
    };
  } finally {
    clearInterval(timer);
    histogram.disable();
  }
}

async function start(source: string, args: unknown, name = 'bystander'): Promise<RunDone> {
  const handle = await engine.start({
    workflow: { manifest: manifest(name), source },
    args,
    trust: 'capability-generated',
  });
  return handle.done;
}

async function timed(source: string, args: unknown): Promise<{ done: RunDone; ms: number }> {
  const t0 = performance.now();
  const done = await start(source, args);
  return { done, ms: performance.now() - t0 };
}

/**
 * Starts `hostile` next to BYSTANDERS innocent runs and checks the bystanders: same results as
 * alone, latency within 3x of solo (floor LATENCY_FLOOR_MS), and the event-loop stall bound.
 */
async function besideBystanders(hostile: string, args: unknown = {}): Promise<RunDone> {
  const { value, stallMs, wallStallMs, histogramMs } = await stallDuring(async () => {
    const attack = start(hostile, args, 'hostile');
    const innocents = Array.from({ length: BYSTANDERS }, (_, n) => timed(INNOCENT, { n }));
    return { attack: await attack, innocents: await Promise.all(innocents) };
  });
  value.innocents.forEach(({ done }, n) => {
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result).toEqual({ v: 'string', text: 'hello workspace', n });
  });
  const worst = Math.max(...value.innocents.map((i) => i.ms));
  const why = `solo ${soloMs.toFixed(0)} ms, bystanders ${value.innocents.map((i) => i.ms.toFixed(0)).join('/')} ms, busy stall ${stallMs.toFixed(0)} ms (baseline ${baselineStallMs.toFixed(0)} ms), wall stall ${wallStallMs.toFixed(0)} ms, histogram max ${histogramMs.toFixed(0)} ms`;
  console.log(why);
  expect(worst, why).toBeLessThan(Math.max(3 * soloMs, LATENCY_FLOOR_MS));
  expect(stallMs, why).toBeLessThan(STALL_BOUND_MS + baselineStallMs);
  return value.attack;
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'wf-host-work-'));
  ws = join(base, 'workspace');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  mkdirSync(join(ws, 'workflows'));
  writeFileSync(join(ws, 'ok.txt'), 'hello workspace');
  writeFileSync(join(ws, 'workflows', 'saved.workflow.json'), '{"secret":"catalog"}');
  // The real run store, where the plugin and the CLI keep it.
  recorder = await openRunStore({ project: ws });
  symlinkSync(join(ws, '.dsh'), join(ws, 'link-to-dsh'));
  sandbox = await createSandbox({ poolSize: 2 });
  engine = createEngine({
    agents: createSimulatedAgents({
      respond: (request) =>
        request.name === 'heavy' ? { structured: { list: HEAVY_ANSWER } } : undefined,
    }),
    sandbox,
    recorder,
    workspace: ws,
    readFile: { deny: [join(ws, 'workflows')] },
    resolveWorkflow: async (name) =>
      name === 'child-flow'
        ? { manifest: manifest('child-flow'), source: 'async function run(wf, args) { return 1; }' }
        : undefined,
  });
  // Warm up (schema workers, sandbox modules), then the solo latency; the stall baseline is the
  // probe's reading for the same bystanders run together with no attack (GC, a loaded machine).
  await timed(INNOCENT, { n: 0 });
  const solo = [];
  for (let i = 0; i < 3; i += 1) solo.push(await timed(INNOCENT, { n: 0 }));
  soloMs = Math.max(...solo.map((r) => r.ms));
  for (let i = 0; i < 2; i += 1) {
    const quiet = await stallDuring(() =>
      Promise.all(Array.from({ length: BYSTANDERS }, (_, n) => timed(INNOCENT, { n }))),
    );
    baselineStallMs = Math.max(baselineStallMs, quiet.stallMs);
  }
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await sandbox?.close();
  rmSync(base, { recursive: true, force: true });
});

/** anyOf/allOf of $refs `depth` levels deep: about 1 KB, 4^depth nodes once expanded. */
function refNest(depth: number): unknown {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i += 1) {
    const next = { $ref: `#/$defs/d${i + 1}` };
    defs[`d${i}`] = { anyOf: [next, { allOf: [next, next] }, next] };
  }
  defs[`d${depth}`] = { type: 'string', minLength: 3 };
  return { type: 'object', $defs: defs, properties: { v: { $ref: '#/$defs/d0' } } };
}

// Every item passes only through the last branch of an anyOf whose two other branches are
// 11-level trees failing at each of their 2^10 leaves, each leaf a linear-time regex over the
// 400-character item: about 10,000 nodes expanded (inside the budget), 2,048 regex runs per
// item, seconds of ajv work for 500 items (a 200 KB answer).
function heavySchema(): unknown {
  const defs: Record<string, unknown> = { h11: { pattern: '^(a|b)*c$' } };
  for (let i = 10; i >= 0; i -= 1) {
    const next = { $ref: `#/$defs/h${i + 1}` };
    defs[`h${i}`] = { anyOf: [next, next, ...(i === 0 ? [{ type: 'string' }] : [])] };
  }
  return {
    type: 'object',
    $defs: defs,
    properties: { list: { type: 'array', items: { $ref: '#/$defs/h0' } } },
  };
}
const HEAVY_ANSWER = Array.from({ length: 500 }, () => 'ab'.repeat(200));

describe('structured output: ajv never runs on the host event loop', () => {
  it.each([12, 16])(
    'an anyOf/allOf-of-$ref schema %i levels deep is refused before launch, with its path',
    async (depth) => {
      const done = await besideBystanders(
        `async function run(wf) {
          return await wf.runAgent({ name: 'refs', prompt: 'p', outputSchema: ${JSON.stringify(refNest(depth))} });
        }`,
      );
      expect(done.status).toBe('failed');
      expect(done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
      expect(done.error?.message).toMatch(/outputSchema .*#\/\$defs\/d\d+.* expands to more than/);
    },
    60_000,
  );

  it('a schema inside the budget whose validation is heavy runs in a worker, under its time limit', async () => {
    const done = await besideBystanders(
      `async function run(wf) {
        const t = await wf.runAgent({ name: 'heavy', prompt: 'p', outputSchema: ${JSON.stringify(heavySchema())} });
        return t === null ? wf.lastFailure().error : 'validated';
      }`,
    );
    expect(done.status).toBe('completed');
    // On a loaded machine the worker's 1 s limit ends it; on a fast one ajv may finish first.
    // Either way the work ran off the host thread (the stall bound above).
    if (done.result !== 'validated') {
      expect(done.result).toMatchObject({ code: 'WF_ENGINE_OUTPUT_INVALID' });
      expect(JSON.stringify(done.result)).toContain('longer than 1000 ms');
    }
  }, 60_000);
});

describe('call inputs: validation work is bounded', () => {
  it('a wf.workflow input of more than 20,000 JSON values is refused as too large', async () => {
    const done = await besideBystanders(
      `async function run(wf) {
        const a = [];
        for (let i = 0; i < 20000; i += 1) a.push({ a: [1, { b: 2 }] });
        return await wf.workflow('child-flow', { a });
      }`,
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_BRIDGE_CALL_TOO_LARGE');
    expect(done.error?.message).toContain('more than 20000 JSON values');
  }, 60_000);
});

describe('simulated provider: generated answers are clamped', () => {
  it('minLength 1.5e8 does not make the host pad a 150 MB string', async () => {
    const done = await besideBystanders(
      `async function run(wf) {
        const t = await wf.runAgent({ name: 'pad', prompt: 'p', outputSchema: { type: 'object',
          properties: { s: { type: 'string', minLength: 150000000 }, l: { type: 'array', minItems: 100000000 } } } });
        return t === null ? wf.lastFailure().error.code : t.status;
      }`,
    );
    expect(done.status).toBe('completed');
    // The clamped answer cannot satisfy the schema: the task fails like any wrong answer.
    expect(done.result).toBe('WF_ENGINE_OUTPUT_INVALID');
  }, 60_000);
});

describe('wf.readFile: never the run store or the catalog', () => {
  it('reads of .dsh/ and the deny roots fail WF_ENGINE_READ_PROTECTED in every spelling', async () => {
    const own = await engine.start({
      workflow: { manifest: manifest('own'), source: INNOCENT },
      args: { n: 0 },
      trust: 'capability-generated',
    });
    expect((await own.done).status).toBe('completed');
    const id = own.runId;
    const paths = [
      `.dsh/workflow-runs/${id}/run.json`,
      `./.dsh/workflow-runs/${id}/run.json`,
      `sub/../.dsh/workflow-runs/${id}/run.json`,
      `.dsh//workflow-runs/${id}/run.json`,
      `.dsh/./workflow-runs/${id}/events.jsonl`,
      `.DSH/workflow-runs/${id}/run.json`,
      `${ws}/.dsh/workflow-runs/${id}/run.json`,
      '.dsh',
      'workflows/saved.workflow.json',
      './workflows/saved.workflow.json',
      'sub/../workflows/saved.workflow.json',
      'WORKFLOWS/saved.workflow.json',
      `${ws}/workflows/saved.workflow.json`,
    ];
    const done = await besideBystanders(
      `async function run(wf, args) {
        const out = {};
        for (const p of args.paths) {
          try { out[p] = 'READ: ' + (await wf.readFile(p)); } catch (e) { out[p] = e.code; }
        }
        try { out.link = await wf.readFile('link-to-dsh/workflow-runs/${id}/run.json'); } catch (e) { out.link = e.code; }
        out.ok = await wf.readFile('ok.txt');
        return out;
      }`,
      { paths },
    );
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const out = done.result as Record<string, string>;
    for (const p of paths) expect(out[p], p).toBe('WF_ENGINE_READ_PROTECTED');
    // A symlink into the store is refused as a symlink, before its target is looked at.
    expect(out.link).toBe('WF_ENGINE_READ_DENIED');
    expect(out.ok).toBe('hello workspace');
    expect(JSON.stringify(done)).not.toContain('leaseToken');
  }, 60_000);
});
