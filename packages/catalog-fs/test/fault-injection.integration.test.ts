// Fault injection: a child process loops save / replace / rename / delete and appends run events;
// we SIGKILL it at random moments (>= 200 times; WF_LONG=1 for 1000) and after each kill reopen
// the catalog and the run store and check invariants 8 and 9.
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openCatalog, openRunStore } from '../src/index.js';
import { bundleChild, startChild } from './helpers/bundle.js';
import { tempDir } from './helpers/fixtures.js';

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
