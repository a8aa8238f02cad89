// A child process for the fault-injection and cross-process tests (bundled with esbuild so it
// starts fast). Modes:
//   fault <config.json>   loops save / replace / rename / delete and appends run events, logging
//                         every step to an ops log, until it is SIGKILLed;
//   save <config.json>    waits for a start file, then one create-only save; prints the outcome;
//   replace <config.json> waits for a start file, then N replace-saves; prints the outcomes;
//   hold <config.json>    begins a run and stays alive until killed;
//   import <config.json>  imports a trusted-local entry twice (editing it between) and prints.
//   boundary <config.json> records one run from begin to finish and SIGKILLs itself just before
//                         its `count`-th write call (helpers/faulty-fs.ts); prints "done" if it
//                         got through them all.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { openCatalog, openRunStore } from '../../src/index.js';
import { installFaultyFs } from './faulty-fs.js';
import { makeCapsule } from './fixtures.js';

interface Config {
  readonly project: string;
  readonly runsProject: string;
  readonly opsLog: string;
  readonly iteration: number;
  readonly startFile?: string;
  readonly name?: string;
  readonly marker?: string;
  readonly count?: number;
  readonly entry?: { name: string; scope: 'project' | 'personal'; kind: 'ts' | 'mjs' | 'js' };
  readonly file?: string;
}

const [mode, configPath] = process.argv.slice(2);
const config = JSON.parse(
  await import('node:fs').then((fs) => fs.readFileSync(configPath!, 'utf8')),
) as Config;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitForStart(): Promise<void> {
  while (config.startFile && !existsSync(config.startFile)) await sleep(2);
}
const log = (line: string) => appendFileSync(config.opsLog, `${line}\n`);

if (mode === 'save') {
  const catalog = await openCatalog({ project: config.project });
  await waitForStart();
  const r = await catalog.save(config.name!, makeCapsule(config.name!, config.marker));
  process.stdout.write(JSON.stringify(r.ok ? { ok: true } : { ok: false, code: r.error.code }));
} else if (mode === 'replace') {
  const catalog = await openCatalog({ project: config.project });
  await waitForStart();
  const out: unknown[] = [];
  for (let i = 0; i < (config.count ?? 1); i++) {
    const marker = `${config.marker}-${i}`;
    const r = await catalog.save(config.name!, makeCapsule(config.name!, marker), {
      replace: true,
    });
    out.push(r.ok ? { ok: true, marker } : { ok: false, code: r.error.code, marker });
  }
  process.stdout.write(JSON.stringify(out));
} else if (mode === 'hold') {
  const store = await openRunStore({ project: config.runsProject });
  await store.begin({
    runId: config.name!,
    workflow: 'held',
    trust: 'capability-generated',
    manifest: {},
    args: null,
    seed: 1,
    startTime: 0,
    startedAt: Date.now(),
  });
  process.stdout.write('ready\n');
  setInterval(() => undefined, 1000);
} else if (mode === 'import') {
  const catalog = await openCatalog({ project: config.project });
  const entry = config.entry!;
  const first = await catalog.importTrustedLocal(entry, { confirmed: true });
  const a = first.ok ? await first.module.run() : { error: first.error };
  writeFileSync(config.file!, 'export async function run() { return "edited"; }\n');
  const second = await catalog.importTrustedLocal(entry, { confirmed: true });
  const b = second.ok ? await second.module.run() : { error: second.error };
  process.stdout.write(JSON.stringify({ a, b }));
} else if (mode === 'boundary') {
  const faults = await installFaultyFs();
  const store = await openRunStore({ project: config.runsProject, snapshotIntervalMs: 1 });
  const runId = config.name!;
  faults.arm({ at: config.count!, kill: true });
  await store.begin({
    runId,
    workflow: 'boundary',
    trust: 'capability-generated',
    manifest: { name: 'boundary' },
    source: 'async function run() {}',
    args: null,
    seed: 1,
    startTime: 0,
    startedAt: Date.now(),
  });
  for (let seq = 1; seq <= 6; seq++) {
    store.event({ seq, runId, type: 'workflow-log', time: Date.now(), data: { n: seq } });
    if (seq % 2 === 0) {
      store.journal(runId, {
        seq: seq / 2,
        settleSeq: seq / 2,
        method: 'runAgent',
        input: { prompt: `p${seq}` },
        outcome: { ok: true, value: { text: `t${seq}` } },
        settledAt: seq,
      });
    }
    if (seq === 3) await store.flush();
  }
  await store.artifact(runId, 'notes', { n: 1 });
  await store.finish(runId, {
    status: 'completed',
    result: { answer: 42 },
    cost: {
      wallClockDurationMs: 1,
      agentsStarted: 3,
      agentsCompleted: 3,
      cacheHits: 0,
      tokenUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      peakConcurrency: 1,
    },
    endedAt: Date.now(),
  });
  process.stdout.write(`done ${faults.count()}\n`);
} else if (mode === 'fault') {
  // Started ahead of time by the test; begins only when told, so node's boot is off the clock.
  await waitForStart();
  const POOL = ['w-a', 'w-b', 'w-c', 'w-d', 'w-e', 'w-f'];
  const catalog = await openCatalog({ project: config.project });
  const store = await openRunStore({ project: config.runsProject });
  const runId = `run-${config.iteration}`;
  await store.begin({
    runId,
    workflow: 'fault',
    trust: 'capability-generated',
    manifest: { name: 'fault' },
    source: 'async function run() {}',
    args: null,
    seed: config.iteration,
    startTime: 0,
    startedAt: Date.now(),
  });
  log(`begun ${runId}`);
  const listing = await catalog.list();
  const live = new Set(listing.entries.map((e) => e.name));
  let seq = 0;
  let counter = 0;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
  process.stdout.write('ready\n');
  for (;;) {
    const free = POOL.filter((n) => !live.has(n));
    const used = POOL.filter((n) => live.has(n));
    const roll = Math.random();
    const marker = `m-${config.iteration}-${counter++}`;
    if (roll < 0.3 && free.length > 0) {
      const name = pick(free);
      log(`start save ${name} ${marker}`);
      const r = await catalog.save(name, makeCapsule(name, marker));
      log(`done save ${name} ${marker} ${r.ok ? 'ok' : r.error.code}`);
      if (r.ok) live.add(name);
    } else if (roll < 0.6 && used.length > 0) {
      const name = pick(used);
      log(`start replace ${name} ${marker}`);
      const r = await catalog.save(name, makeCapsule(name, marker), { replace: true });
      log(`done replace ${name} ${marker} ${r.ok ? 'ok' : r.error.code}`);
    } else if (roll < 0.8 && used.length > 0 && free.length > 0) {
      const from = pick(used);
      const to = pick(free);
      log(`start rename ${from} ${to}`);
      const r = await catalog.rename(from, to);
      log(`done rename ${from} ${to} ${r.ok ? 'ok' : r.error.code}`);
      if (r.ok) {
        live.delete(from);
        live.add(to);
      }
    } else if (used.length > 0) {
      const name = pick(used);
      log(`start delete ${name}`);
      const r = await catalog.delete(name);
      log(`done delete ${name} ${r.ok ? 'ok' : r.error.code}`);
      if (r.ok) live.delete(name);
    }
    const burst = 1 + Math.floor(Math.random() * 20);
    for (let i = 0; i < burst; i++) {
      seq++;
      // Now and then a large event: a SIGKILL can then land inside its write(2) (a torn line).
      // Now and then a large event: a SIGKILL can then land inside its write(2) (a torn line).
      store.event({
        seq,
        runId,
        type: 'workflow-log',
        time: Date.now(),
        data: { message: `e${seq}`, pad: 'p'.repeat(seq % 61 === 0 ? 400_000 : seq % 200) },
      });
    }
    if (counter % 4 === 0) {
      await store.flush();
      log(`flushed ${runId} ${seq}`);
    }
  }
}
