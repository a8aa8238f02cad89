// `wf runs` and `wf show last` read what they print: at most one listing of the runs
// directory and one read of the runs index per command, plus the open of the file being
// rewritten when that pass rewrites it; no listing at all once the index vouches for the store
// (counted by a preload that wraps node:fs/promises, test/fixtures/fs-trace.mjs). Crash recovery
// still marks a run whose owner died, also one the index never saw, and also through `wf show <id>`.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openRunStore } from '@wf/catalog-fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const { collect, json, tempProject, WF_BIN } = cli;
const TRACE_HOOK = join(import.meta.dirname, 'fixtures', 'fs-trace.mjs');

let p: cli.Project;
const T = 1_800_000_000_000;
const runsDir = () => join(p.dir, '.dsh', 'workflow-runs');
const runJson = (runId: string) => join(runsDir(), runId, 'run.json');

function start(runId: string, startedAt: number) {
  return {
    runId,
    workflow: 'review',
    trust: 'capability-generated' as const,
    manifest: { name: 'review', phases: ['run'] },
    source: 'async function run(wf, args) { return 1; }',
    args: {},
    seed: 1,
    startTime: startedAt,
    startedAt,
  };
}

/** `wf <args>` with the fs trace preloaded: its result and what it read. */
async function traced(args: readonly string[]) {
  const trace = join(p.dir, '..', 'fs-trace.json');
  rmSync(trace, { force: true });
  const result = await collect(
    spawn(process.execPath, ['--import', TRACE_HOOK, WF_BIN, ...args], {
      cwd: p.dir,
      env: { ...p.env, WF_FS_TRACE: trace },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const reads = JSON.parse(readFileSync(trace, 'utf8')) as {
    runsDirListed: number;
    indexRead: number;
    indexAppended: number;
  };
  return { result, reads };
}

function ownerDied(runId: string): void {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  const snap = JSON.parse(readFileSync(runJson(runId), 'utf8'));
  snap.owner = { ...snap.owner, pid: Number(dead.stdout.toString()), token: 'gone' };
  writeFileSync(runJson(runId), JSON.stringify(snap));
}

beforeAll(async () => {
  p = tempProject();
  const store = await openRunStore({ project: p.dir, recoverAtOpen: false });
  for (let i = 0; i < 30; i++) {
    await store.begin(start(`run-ended-${String(i).padStart(2, '0')}`, T + i * 1000));
    await store.finish(`run-ended-${String(i).padStart(2, '0')}`, {
      status: 'completed',
      endedAt: T + i * 1000 + 5,
      cost: {
        wallClockDurationMs: 5,
        agentsStarted: 0,
        agentsCompleted: 0,
        cacheHits: 0,
        tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        peakConcurrency: 0,
      },
    });
  }
  // Left running by processes that are gone: the newest, and an older one.
  await store.begin(start('run-crashed-new', T + 100_000));
  await store.begin(start('run-crashed-old', T + 500));
  await store.close();
  ownerDied('run-crashed-new');
  ownerDied('run-crashed-old');
}, 60_000);
afterAll(() => p?.cleanup());

describe('wf runs and wf show last in one pass', () => {
  it('wf show <id> still recovers a run whose owner died', async () => {
    const { result, reads } = await traced(['show', 'run-crashed-old', '--json']);
    expect(result.code).toBe(0);
    expect(json(result).run).toMatchObject({ status: 'interrupted', interruptedFrom: 'running' });
    // The recorder's plain lines have no header yet: the header read finds none, then one full
    // pass (its read, and the open of the file it rewrites).
    expect(reads).toMatchObject({ runsDirListed: 1, indexRead: 3 });
  });

  it('wf runs recovers and lists with one listing of the runs directory when the index lost a run', async () => {
    // The newest crashed run was never indexed (recorded before the index, or its append lost).
    const index = join(runsDir(), '.runs-index.jsonl');
    const kept = readFileSync(index, 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.includes('run-crashed-new'));
    writeFileSync(index, kept.map((line) => `${line}\n`).join(''));

    const { result, reads } = await traced(['runs', '--json', '--limit', '3']);
    expect(result.code).toBe(0);
    const out = json(result) as { runs: { runId: string; status: string }[]; total: number };
    expect(out.total).toBe(32);
    expect(out.runs.map((r) => [r.runId, r.status])).toEqual([
      ['run-crashed-new', 'interrupted'],
      ['run-ended-29', 'completed'],
      ['run-ended-28', 'completed'],
    ]);
    // The hand edit left the index disagreeing with the directory: the header read finds that,
    // then one full pass (its read, and the open of the file it rewrites).
    expect(reads).toMatchObject({ runsDirListed: 1, indexRead: 3 });
  });

  it('wf show last and wf runs then read the index once and list nothing', async () => {
    const last = await traced(['show', 'last', '--json']);
    expect(last.result.code).toBe(0);
    expect(json(last.result).run).toMatchObject({
      runId: 'run-crashed-new',
      status: 'interrupted',
    });
    expect(last.reads).toMatchObject({ runsDirListed: 0, indexRead: 1 });
    const runs = await traced(['runs', '--json', '--limit', '3']);
    expect((json(runs.result) as { total: number }).total).toBe(32);
    expect(runs.reads).toMatchObject({ runsDirListed: 0, indexRead: 1 });
  });
});
