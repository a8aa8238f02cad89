// Fault injection: a child process loops save / replace / rename / delete and appends run events;
// we SIGKILL it at random moments (>= 200 times; WF_LONG=1 for 1000) and after each kill reopen
// the catalog and the run store and check invariants 8 and 9. Then a child records one run and
// SIGKILLs itself before each of its write calls in turn, every write boundary of begin, record
// and finish: no half-made run, no end without its result (invariant 12).
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { openCatalog, openRunStore } from '../src/index.js';
import { bundleChild, startChild } from './helpers/bundle.js';
import { memoryTmp, tempDir } from './helpers/fixtures.js';

const ITERATIONS = process.env.WF_LONG === '1' ? 1000 : 200;

let dir: string;
let cleanup: () => void;
let bundle: string;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('wf-fault-'));
  bundle = await bundleChild(join(dir, 'child.mjs'));
});
afterAll(() => cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ls = (path: string) => (existsSync(path) ? readdirSync(path) : []);
const markerOf = (text: string) => /^\/\/ (m-\d+-\d+)$/m.exec(text)?.[1];

it(`keeps every invariant across ${ITERATIONS} SIGKILLs at random moments`, {
  timeout: ITERATIONS * 1000,
}, async () => {
  const project = join(dir, 'project', '.dsh', 'workflows');
  // A fresh run-store project every 20 lives keeps recover()'s scan (O(runs)) small.
  const runsProjectFor = (iteration: number) => join(dir, `runs-${Math.floor(iteration / 20)}`);
  const opsLog = join(dir, 'ops.log');
  const archiveSeen = new Map<string, string>(); // archive file -> marker (immutable once linked)
  const completed = new Set<string>(); // markers whose save/replace finished ok
  const phase = { spawnToKill: 0, check: 0 };
  const stats = { kills: 0, midOp: 0, renamesInterrupted: 0, tornTails: 0, beforeReady: 0 };
  let logOffset = 0;

  const prepare = (iteration: number) => {
    const configPath = join(dir, `config-${iteration}.json`);
    const startFile = join(dir, `go-${iteration}`);
    const config = {
      project,
      runsProject: runsProjectFor(iteration),
      opsLog,
      iteration,
      startFile,
    };
    writeFileSync(configPath, JSON.stringify(config));
    return { child: startChild(bundle, 'fault', configPath), startFile };
  };
  let next = prepare(0);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const runsProject = runsProjectFor(iteration);
    const { child, startFile } = next;
    const t0 = Date.now();
    writeFileSync(startFile, '');
    // Mostly kill mid-loop; sometimes during startup (open-time repair, begin).
    if (iteration % 10 === 9) {
      await sleep(Math.random() * 30);
      stats.beforeReady++;
    } else {
      await child.ready;
      await sleep(Math.random() * 30);
    }
    child.kill('SIGKILL');
    const exit = await child.exited;
    expect(exit.signal ?? `exit ${exit.code}`).toBe('SIGKILL');
    // The next child boots while we check this one (it waits for its start file).
    if (iteration + 1 < ITERATIONS) next = prepare(iteration + 1);
    stats.kills++;
    const t1 = Date.now();
    phase.spawnToKill += t1 - t0;

    // What the child did in this life (the ops log is written synchronously, so it is exact).
    const logText = readFileSync(opsLog, 'utf8').slice(logOffset);
    logOffset += Buffer.byteLength(logText);
    const lines = logText.split('\n').filter(Boolean);
    let pending: string[] | undefined;
    let begun = false;
    let flushedSeq = 0;
    for (const line of lines) {
      const parts = line.split(' ');
      if (parts[0] === 'begun') begun = true;
      else if (parts[0] === 'flushed') flushedSeq = Number(parts[2]);
      else if (parts[0] === 'start') pending = parts;
      else if (parts[0] === 'done') {
        pending = undefined;
        if ((parts[1] === 'save' || parts[1] === 'replace') && parts[4] === 'ok')
          completed.add(parts[3]!);
      }
    }

    // Reopen: replays intents, removes temps and the dead child's lock.
    const catalog = await openCatalog({ project });
    const raw = ls(project);
    expect(raw.filter((f) => f.startsWith('.wf-'))).toEqual([]);
    const listing = await catalog.list();
    const live = new Map<string, string>(); // name -> marker
    for (const entry of listing.entries) {
      // No partial capsule: every listed entry is a whole, valid capsule.
      expect(entry, `${entry.name}: ${entry.error}`).toMatchObject({
        valid: true,
        kind: 'capsule',
      });
      // list() already validated it fully; read the marker straight from the file.
      const text = readFileSync(join(project, `${entry.name}.workflow.json`), 'utf8');
      const marker = markerOf((JSON.parse(text) as { source: string }).source);
      expect(marker).toBeDefined();
      live.set(entry.name, marker!);
    }
    // A version is live under at most one name (an interrupted rename never leaves both).
    expect(new Set(live.values()).size).toBe(live.size);
    const archiveDir = join(project, '.archive');
    for (const file of ls(archiveDir).filter((f) => !archiveSeen.has(f))) {
      const text = readFileSync(join(archiveDir, file), 'utf8');
      const parsed = JSON.parse(text) as { source: string };
      archiveSeen.set(file, markerOf(parsed.source)!);
    }
    // No lost version: every completed save is live or archived.
    const everywhere = new Set([...live.values(), ...archiveSeen.values()]);
    for (const marker of completed) expect(everywhere.has(marker), `lost ${marker}`).toBe(true);
    if (pending) {
      stats.midOp++;
      const [, op, a, b] = pending;
      if (op === 'rename') {
        stats.renamesInterrupted++;
        // Exactly one of the old or the new name resolves.
        expect(Number(live.has(a!)) + Number(live.has(b!))).toBe(1);
      }
      if (op === 'replace') expect(live.has(a!)).toBe(true);
      if ((op === 'save' || op === 'replace') && live.get(a!) === b) completed.add(b!);
    }

    // The run store: the dead child's run is interrupted; events readable to the last whole line.
    // Every fourth life we also tear the last line ourselves, as a power loss mid-write would.
    const eventsFile = join(
      runsProject,
      '.dsh',
      'workflow-runs',
      `run-${iteration}`,
      'events.jsonl',
    );
    if (begun && iteration % 4 === 0 && existsSync(eventsFile))
      appendFileSync(eventsFile, '{"seq":999999,"type":"workfl');
    const store = await openRunStore({ project: runsProject });
    const runId = `run-${iteration}`;
    const shown = await store.show(runId);
    if (begun) {
      expect(shown.ok && shown.run.snapshot?.status).toBe('interrupted');
      // recover() at open removed the dead owner's temp files too.
      expect(ls(join(eventsFile, '..')).filter((f) => f.startsWith('.wf-'))).toEqual([]);
      const text = readFileSync(eventsFile, 'utf8');
      if (text !== '' && !text.endsWith('\n')) stats.tornTails++;
      const events = await store.events(runId);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.length).toBeGreaterThanOrEqual(flushedSeq);
    } else if (shown.ok) {
      // Killed inside begin(): whatever exists is terminal after recovery.
      expect(shown.run.snapshot?.status).toBe('interrupted');
    }
    await store.close();
    phase.check += Date.now() - t1;
  }
  // The loop must actually have hit operations in progress, or it proves nothing.
  expect(stats.midOp).toBeGreaterThan(ITERATIONS / 10);
  process.stdout.write(
    `fault injection: ${JSON.stringify({ ...stats, versions: completed.size, archived: archiveSeen.size, ...phase })}\n`,
  );
});

it('SIGKILL at every write boundary of begin, record and finish: a run is whole or absent, resumable, never ended without its result', {
  timeout: 300_000,
}, async () => {
  const seen = { absent: 0, interrupted: 0, completed: 0 };
  // On a memory file system where there is one: 64 boundaries of fsyncs to a real disk cost
  // seconds and prove nothing more.
  const { dir: boundaryDir, cleanup: removeBoundaryDir } = tempDir('wf-boundary-', memoryTmp());
  onTestFinished(removeBoundaryDir);
  const start = (at: number) => {
    const runsProject = join(boundaryDir, `boundary-${at}`);
    const configPath = join(dir, `boundary-${at}.json`);
    writeFileSync(
      configPath,
      JSON.stringify({
        runsProject,
        opsLog: join(dir, 'unused'),
        iteration: at,
        name: 'run-b',
        count: at,
      }),
    );
    return { child: startChild(bundle, 'boundary', configPath), runsProject };
  };
  // A run without a kill counts the write calls: the boundaries to kill at.
  const clean = start(Number.MAX_SAFE_INTEGER);
  expect((await clean.child.exited).code, clean.child.stdout()).toBe(0);
  const boundaries = Number(/^done (\d+)$/m.exec(clean.child.stdout())?.[1]);
  expect(boundaries).toBeGreaterThan(10);
  const check = async (at: number, runsProject: string, killed: boolean) => {
    const label = `killed before write ${at}`;
    const store = await openRunStore({ project: runsProject });
    const root = join(runsProject, '.dsh', 'workflow-runs');
    // Recovery removed the dead writer's temp directory and files: nothing half-made is left.
    expect(
      ls(root).filter((f) => f.startsWith('.wf-tmp-')),
      label,
    ).toEqual([]);
    const listed = await store.list();
    if (listed.length === 0) {
      expect(killed, label).toBe(true);
      expect(
        ls(root).filter((f) => f.startsWith('run-')),
        label,
      ).toEqual([]);
      seen.absent++;
    } else {
      expect(
        listed.map((r) => r.runId),
        label,
      ).toEqual(['run-b']);
      const snapshot = listed[0]?.snapshot;
      const runDir = join(root, 'run-b');
      const events = await store.events('run-b');
      expect(
        events.map((e) => e.seq),
        label,
      ).toEqual(events.map((_, i) => i + 1));
      expect((await store.load('run-b'))?.start.runId, label).toBe('run-b');
      if (snapshot?.status === 'completed') {
        // Its end on disk: the result beside it, every event and journal line before it.
        expect(JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')), label).toEqual({
          result: { answer: 42 },
        });
        expect(events.length, label).toBe(6);
        expect((await store.load('run-b'))?.journal.length, label).toBe(3);
        seen.completed++;
      } else {
        expect(snapshot?.status, label).toBe('interrupted');
        expect(existsSync(join(runDir, 'result.json')), label).toBe(false);
        seen.interrupted++;
      }
    }
    await store.close();
  };
  // Two children at a time, each in its own project.
  for (let at = 1; at <= boundaries; at += 2) {
    const pair = [at, at + 1].filter((n) => n <= boundaries).map((n) => ({ n, ...start(n) }));
    for (const { n, child, runsProject } of pair) {
      const exit = await child.exited;
      // The write count varies by a few coalesced snapshots: a child that got through them all
      // finished its run, and is checked as such.
      if (exit.signal !== 'SIGKILL') expect(exit.code, child.stdout()).toBe(0);
      await check(n, runsProject, exit.signal === 'SIGKILL');
    }
  }
  // Every outcome was reached: killed in begin, between begin and the end, after the end.
  expect(seen.absent).toBeGreaterThan(0);
  expect(seen.interrupted).toBeGreaterThan(0);
  expect(seen.completed).toBeGreaterThan(0);
  process.stdout.write(`write boundaries: ${boundaries}, ${JSON.stringify(seen)}\n`);
});
