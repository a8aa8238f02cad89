// Crash and resume: a child process runs a workflow with a file-backed recorder and is killed
// with SIGKILL mid-way; the run is resumed from its journal in this process. Completed children
// are not re-run and the result equals an uninterrupted run with the same seed.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEngine, createSimulatedAgents, type JournalEntry } from '../src/index.js';
import { createFileRecorder } from './fixtures/file-recorder.js';
import { REVIEW_ARGS, REVIEW_MANIFEST, REVIEW_SOURCE } from './fixtures/review-flow.js';
import { SPAWN_MANIFEST, SPAWN_SOURCE, spawnAgents } from './fixtures/spawn-flow.js';
import { journaledChildNames, runToEnd } from './helpers.js';

let sandbox: Sandbox;
let root: string;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
  root = await mkdtemp(join(tmpdir(), 'wf-engine-crash-'));
});
afterAll(async () => {
  await sandbox.close();
  await rm(root, { recursive: true, force: true });
});

const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));
const engineDir = fileURLToPath(new URL('..', import.meta.url));

type FileRecorder = ReturnType<typeof createFileRecorder>;

const refersToRecord = (e: JournalEntry) =>
  e.method === 'wait' &&
  e.outcome.ok &&
  typeof (e.outcome.value as { value: { childResultOf?: unknown } }).value.childResultOf ===
    'string';

it.each([
  // 1 phase + 6 reviews land first
  [
    'some children journaled',
    'run-crashed',
    async (r: FileRecorder, id: string) => r.journalLines(id) >= 9,
  ],
  // a verify child's wait answer stored as a reference to its child-result record
  [
    'a wait answer journaled as a reference',
    'run-crashed-ref',
    async (r: FileRecorder, id: string) =>
      ((await r.load?.(id))?.journal ?? []).some(refersToRecord),
  ],
] as const)(
  'a SIGKILLed run (%s) resumes from its journal with the uninterrupted result',
  async (_label, runId, ready) => {
    const recorder = createFileRecorder(root);
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=@wf/source', child, root, runId],
      {
        cwd: engineDir,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => {
      stdout += String(d);
    });
    proc.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      proc.on('exit', (_code, signal) => resolve(signal)),
    );
    // Kill once some (not all) children have been journaled.
    const deadline = Date.now() + 40_000;
    while (!(await ready(recorder, runId))) {
      if (Date.now() > deadline || proc.exitCode !== null) {
        throw new Error(`child did not progress: ${stdout} ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(stdout).not.toContain('finished');

    const loaded = await recorder.load?.(runId);
    const journal = loaded?.journal ?? [];
    const journaledChildren = journaledChildNames(journal);
    expect(journaledChildren.length).toBeGreaterThanOrEqual(6);

    const agents = createSimulatedAgents({ seed: 3 });
    const engine = createEngine({ agents, sandbox, recorder });
    const handle = await engine.resume(runId);
    const done = await handle.done;
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    const rerun = agents.requests().map((r) => r.name);
    for (const name of journaledChildren) expect(rerun).not.toContain(name);
    expect(done.cost.cacheHits).toBe(journaledChildren.length);

    const reference = await runToEnd(
      createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox }),
      {
        workflow: { manifest: REVIEW_MANIFEST, source: REVIEW_SOURCE },
        args: REVIEW_ARGS,
        trust: 'capability-generated',
        seed: 42,
        startTime: 1_700_000_000_000,
      },
    );
    expect(done.result).toEqual(reference.done.result);
  },
  60_000,
);

it('a spawned child that completed before the SIGKILL, never waited for, is not launched again', async () => {
  const recorder = createFileRecorder(root);
  const runId = 'run-crashed-spawn';
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@wf/source', child, root, runId, 'spawn'],
    { cwd: engineDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout.on('data', (d) => {
    output += String(d);
  });
  proc.stderr.on('data', (d) => {
    output += String(d);
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on('exit', (_code, signal) => resolve(signal)),
  );
  // Kill once the quick child's result is journaled; `slow` runs for a minute, so no wait yet.
  const quickRecorded = async () =>
    ((await recorder.load?.(runId))?.journal ?? []).some((e) => e.method === 'child-result');
  const deadline = Date.now() + 40_000;
  while (!(await quickRecorded())) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      throw new Error(`child did not progress: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  proc.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const journal = (await recorder.load?.(runId))?.journal ?? [];
  expect(journal.some((e) => e.method === 'wait')).toBe(false);

  const agents = spawnAgents(1);
  const done = await (await createEngine({ agents, sandbox, recorder }).resume(runId)).done;
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(agents.requests().map((r) => r.name)).toEqual(['slow']);
  expect(done.cost.cacheHits).toBe(1);
  const reference = await runToEnd(createEngine({ agents: spawnAgents(1), sandbox }), {
    workflow: { manifest: SPAWN_MANIFEST, source: SPAWN_SOURCE },
    args: {},
    trust: 'capability-generated',
    seed: 42,
    startTime: 1_700_000_000_000,
  });
  expect(done.result).toEqual(reference.done.result);
}, 60_000);
