// Conformance: the run store satisfies the engine's RunRecorder port (checked by the compiler
// below) and records real engine runs (real sandbox, simulated agents): events on disk equal the
// events the engine emitted, the snapshot is terminal, and `load()` feeds the engine's resume.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createEngine,
  createSimulatedAgents,
  type Engine,
  type RunEvent,
  type RunRecorder,
} from '@wf/engine';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { openRunStore, type RunStore } from '../src/index.js';
import { tempDir } from './helpers/fixtures.js';

const MANIFEST = {
  name: 'conformance',
  description: 'Fan out, write an artifact, synthesize.',
  phases: ['investigate', 'synthesize'],
  readOnly: true,
  maxAgents: 6,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};

const SOURCE = `async function run(wf, args) {
  const found = await wf.phase('investigate', () =>
    wf.parallel(args.angles.map((a) => () => wf.runAgent({ name: 'look-' + a, prompt: 'Investigate ' + a, readOnly: true }))));
  await wf.artifact('findings/raw', { count: found.length });
  wf.log({ message: 'investigated', data: { n: found.length } });
  const s = await wf.phase('synthesize', () => wf.synthesize({ inputs: found, rubric: 'merge' }));
  return { text: s.text, n: found.length, pick: Math.random() };
}`;

let dir: string;
let cleanup: () => void;
let store: RunStore;
const engines: Engine[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('wf-conformance-'));
  store = await openRunStore({ project: dir, fsync: 'always' });
});
afterEach(async () => {
  await store.close();
  cleanup();
});
afterAll(async () => {
  for (const engine of engines) await engine.close();
});

async function drive(handle: Awaited<ReturnType<Engine['start']>>) {
  const events: RunEvent[] = [];
  for await (const e of handle.events) events.push(e);
  return { events, done: await handle.done };
}

it('records a real engine run and resumes from what it recorded', async () => {
  const recorder: RunRecorder = store; // the structural conformance the compiler checks
  const engine = createEngine({ agents: createSimulatedAgents({ seed: 7 }), recorder });
  engines.push(engine);
  const handle = await engine.start({
    workflow: { manifest: MANIFEST, source: SOURCE },
    args: { angles: ['a', 'b', 'c'] },
    trust: 'capability-generated',
    runId: 'run-conf',
    seed: 11,
    startTime: 1_700_000_000_000,
  });
  const { events, done } = await drive(handle);
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');

  const onDisk = await store.events('run-conf');
  expect(onDisk.map((e) => [e.seq, e.type])).toEqual(events.map((e) => [e.seq, e.type]));
  const shown = await store.show('run-conf');
  expect(shown.ok && shown.run).toMatchObject({
    active: false,
    snapshot: {
      status: 'completed',
      workflow: 'conformance',
      eventCount: events.length,
      artifacts: [{ name: 'findings/raw' }],
    },
  });
  const runDir = join(dir, '.dsh', 'workflow-runs', 'run-conf');
  expect(readFileSync(join(runDir, 'script.js'), 'utf8')).toBe(SOURCE);
  const artifactRef = shown.ok ? (shown.run.snapshot?.artifacts[0]?.ref ?? '') : '';
  expect(JSON.parse(readFileSync(join(runDir, artifactRef), 'utf8'))).toEqual({ count: 3 });
  const loaded = await store.load('run-conf');
  expect(loaded?.start).toMatchObject({ runId: 'run-conf', seed: 11, workflow: 'conformance' });
  expect(loaded?.journal.length).toBeGreaterThan(3);

  // Resume from the disk record on a fresh store and engine: journaled children are answered
  // from the journal (cache hits), and the result is the same.
  const reopened = await openRunStore({ project: dir });
  const agents = createSimulatedAgents({ seed: 7 });
  const resumer = createEngine({ agents, recorder: reopened });
  engines.push(resumer);
  const resumed = await drive(await resumer.resume('run-conf', { runId: 'run-conf-2' }));
  expect(resumed.done.status).toBe('completed');
  expect(resumed.done.result).toEqual(done.result);
  expect(resumed.done.cost.cacheHits).toBeGreaterThan(0);
  const second = await reopened.show('run-conf-2');
  expect(second.ok && second.run.snapshot).toMatchObject({
    status: 'completed',
    resumedFromRunId: 'run-conf',
    resumedFrom: { runId: 'run-conf', at: expect.any(Number) },
    provider: 'simulated',
    simulated: true,
  });
  await reopened.close();
});

it('on disk, a spawned child that completed before a stop is answered from the journal on resume', async () => {
  const SPAWN = `async function run(wf) {
  const t = await wf.spawnAgent({ name: 'quick', prompt: 'q', readOnly: true });
  const s = await wf.runAgent({ name: 'slow', prompt: 's', readOnly: true });
  const q = await wf.wait(t.taskId);
  return [q.status, s.status, q.text];
}`;
  const agents = (slowMs: number) =>
    createSimulatedAgents({
      seed: 5,
      respond: (r) => ({ delayMs: r.name === 'quick' ? 1 : slowMs }),
    });
  const engine = createEngine({ agents: agents(60_000), recorder: store });
  engines.push(engine);
  const handle = await engine.start({
    workflow: { manifest: MANIFEST, source: SPAWN },
    trust: 'capability-generated',
    runId: 'run-spawn',
    seed: 11,
    startTime: 1_700_000_000_000,
  });
  for await (const e of handle.events) {
    if (e.type === 'agent-completed' && e.data.name === 'quick') handle.stop('stopped by the test');
  }
  expect((await handle.done).status).toBe('stopped');
  // the record is a journal.jsonl line like any other, and load() returns it
  const lines = readFileSync(
    join(dir, '.dsh', 'workflow-runs', 'run-spawn', 'journal.jsonl'),
    'utf8',
  )
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { method: string; afterHalt?: true });
  expect(lines.filter((e) => e.method === 'child-result' && !e.afterHalt)).toHaveLength(1);

  const reopened = await openRunStore({ project: dir });
  const again = agents(1);
  const resumer = createEngine({ agents: again, recorder: reopened });
  engines.push(resumer);
  const resumed = await drive(await resumer.resume('run-spawn', { runId: 'run-spawn-2' }));
  expect(resumed.done.error).toBeUndefined();
  expect(resumed.done.status).toBe('completed');
  expect(again.requests().map((r) => r.name)).toEqual(['slow']);
  expect(resumed.done.cost.cacheHits).toBe(1);
  const carried = await reopened.load('run-spawn-2');
  expect(carried?.journal.filter((e) => e.method === 'child-result')).toHaveLength(1);
  await reopened.close();
});

it('on disk, a wf.wait answer that repeats a child-result record is a reference line, and resume reads it back', async () => {
  const SPAWN = `async function run(wf) {
  const t = await wf.spawnAgent({ name: 'quick', prompt: 'q', readOnly: true });
  const q = await wf.wait(t.taskId);
  return [q.status, q.text, q.finalText === q.text, Object.keys(q)];
}`;
  const start = (runId: string) => ({
    workflow: { manifest: MANIFEST, source: SPAWN },
    trust: 'capability-generated' as const,
    runId,
    seed: 11,
    startTime: 1_700_000_000_000,
  });
  const engine = createEngine({ agents: createSimulatedAgents({ seed: 5 }), recorder: store });
  engines.push(engine);
  const first = await drive(await engine.start(start('run-ref')));
  expect(first.done.status).toBe('completed');
  const text = (first.done.result as [string, string])[1];
  const file = readFileSync(join(dir, '.dsh', 'workflow-runs', 'run-ref', 'journal.jsonl'), 'utf8');
  // the child's answer is on disk once: the wait line refers to the record line
  expect(file.split(JSON.stringify(text).slice(1, -1)).length - 1).toBe(1);
  const lines = file
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { method: string; outcome: { value: { value: unknown } } });
  expect(lines.find((e) => e.method === 'wait')?.outcome.value.value).toEqual({
    childResultOf: 'task-1',
  });

  const reopened = await openRunStore({ project: dir });
  const agents = createSimulatedAgents({ seed: 5 });
  const resumer = createEngine({ agents, recorder: reopened });
  engines.push(resumer);
  const resumed = await drive(await resumer.resume('run-ref', { runId: 'run-ref-2' }));
  expect(resumed.done.error).toBeUndefined();
  expect(resumed.done.result).toEqual(first.done.result);
  expect(agents.requests()).toHaveLength(0);
  await reopened.close();
});

it('on disk, journal entries over the line limit are stored whole in side files, and a resume over them replays them', async () => {
  // A file just under wf.readFile's 1 MiB limit and a 1.5 MB child answer: each entry's line
  // would be over the store's 1 MiB line limit.
  const READ = `async function run(wf) {
  const text = await wf.readFile('notes.txt');
  const big = await wf.runAgent({ name: 'big', prompt: 'b', readOnly: true });
  const slow = await wf.runAgent({ name: 'slow', prompt: 's', readOnly: true });
  return [text.length, text.slice(-12), big.text.length, slow.status];
}`;
  writeFileSync(join(dir, 'notes.txt'), `${'n'.repeat(1024 * 1024 - 12)}end-of-notes`);
  const agents = (slowMs: number) =>
    createSimulatedAgents({
      seed: 5,
      respond: (r) =>
        r.name === 'big' ? { text: 'B'.repeat(1_500_000) } : { delayMs: slowMs, text: 'slow' },
    });
  const start = (runId: string) => ({
    workflow: { manifest: MANIFEST, source: READ },
    trust: 'capability-generated' as const,
    runId,
    seed: 11,
    startTime: 1_700_000_000_000,
  });
  const reference = createEngine({ agents: agents(1), workspace: dir });
  engines.push(reference);
  const expected = (await drive(await reference.start(start('run-ref-big')))).done;
  expect(expected.status).toBe('completed');
  expect(expected.result).toEqual([1024 * 1024, 'end-of-notes', 1_500_000, 'completed']);

  const engine = createEngine({ agents: agents(60_000), recorder: store, workspace: dir });
  engines.push(engine);
  const handle = await engine.start(start('run-big'));
  for await (const e of handle.events)
    if (e.type === 'agent-started' && e.data.name === 'slow') handle.stop('stopped by the test');
  expect((await handle.done).status).toBe('stopped');
  const runDir = join(dir, '.dsh', 'workflow-runs', 'run-big');
  const lines = readFileSync(join(runDir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
  // every line is short; the two large entries are files, named in their lines
  for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(4096);
  const refs = lines
    .map((l) => JSON.parse(l) as { method: string; journalRef?: { file: string } })
    .filter((l) => l.journalRef);
  expect(refs.map((l) => l.method)).toEqual(['readFile', 'runAgent']);
  expect(readdirSync(join(runDir, 'journal-entries')).sort()).toEqual(
    refs.map((l) => l.journalRef?.file).sort(),
  );

  const reopened = await openRunStore({ project: dir });
  const again = agents(1);
  const resumer = createEngine({ agents: again, recorder: reopened, workspace: dir });
  engines.push(resumer);
  // the file changed since: the resumed run replays what the run read, not the file as it is now
  writeFileSync(join(dir, 'notes.txt'), 'changed');
  const resumed = await drive(await resumer.resume('run-big', { runId: 'run-big-2' }));
  expect(resumed.done.error).toBeUndefined();
  expect(resumed.done.result).toEqual(expected.result);
  expect(again.requests().map((r) => r.name)).toEqual(['slow']);

  // an entry file altered on disk makes the run unreadable, never a journal with a hole
  const first = refs[0]?.journalRef?.file as string;
  writeFileSync(join(runDir, 'journal-entries', first), '{"seq":1}');
  await expect(reopened.load('run-big')).rejects.toMatchObject({
    code: 'WF_CATALOG_RUN_CORRUPT',
    message: expect.stringContaining('does not match its hash'),
  });
  await reopened.close();
});
