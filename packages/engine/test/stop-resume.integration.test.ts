// Honest resume through the real sandbox: a run stopped mid fan-out resumes to
// the result of an uninterrupted run; children it stopped run again, children that completed are
// replayed (never re-run), and a stop is never replayed as a failure. Resuming across real and
// simulated agents is refused unless asked for.
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  type AgentProvider,
  createEngine,
  type JournalEntry,
  createMemoryRecorder,
  createSimulatedAgents,
  type RunEvent,
  type RunHandle,
  type RunRecorder,
} from '../src/index.js';
import { manifest, runToEnd, shareSandbox, withJournal } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

const SOURCE = `async function run(wf, args) {
  const found = await wf.phase('angles', () =>
    wf.parallel(args.angles.map((a) => () => wf.runAgent({ name: a, prompt: 'Investigate ' + a }))),
  );
  wf.log('angles done: ' + found.filter(Boolean).length);
  const merged = await wf.synthesize({ inputs: found.map((f) => (f ? f.finalText : null)), rubric: 'merge' });
  return { synthesis: merged.text, angles: found.map((f) => (f ? f.status : 'missing')) };
}`;
const ANGLES = ['quick', 'brisk', 'slow', 'slower'];

const flow = (runId?: string) => ({
  workflow: { manifest: manifest({ phases: ['angles'] }), source: SOURCE },
  args: { angles: ANGLES },
  trust: 'capability-generated' as const,
  seed: 7,
  startTime: 1_700_000_000_000,
  ...(runId ? { runId } : {}),
});

/** quick and brisk finish at once; the others (slow, slower, synthesis) take `slowMs`. */
function agents(slowMs: number, fast: readonly string[] = ['quick', 'brisk']) {
  return createSimulatedAgents({
    seed: 5,
    respond: (r) => ({ delayMs: fast.includes(r.name) ? 1 : slowMs }),
  });
}

/** Stops the run once `when` holds for the events seen so far (an observable point, no sleep). */
async function stopWhen(handle: RunHandle, when: (seen: readonly RunEvent[]) => boolean) {
  const seen: RunEvent[] = [];
  for await (const e of handle.events) {
    seen.push(e);
    if (when(seen)) handle.stop('interrupted by the test');
  }
  return { done: await handle.done, seen };
}

const completedNames = (events: readonly RunEvent[]) =>
  events
    .filter((e) => e.type === 'agent-completed' && e.data.status === 'completed')
    .map((e) => String(e.data.name));

describe('stop, then resume', () => {
  it.each([
    {
      point: 'before the first child',
      fast: ['quick', 'brisk'],
      when: (s: readonly RunEvent[]) => s.some((e) => e.type === 'phase-started'),
    },
    {
      point: 'after some children completed',
      fast: ['quick', 'brisk'],
      when: (s: readonly RunEvent[]) => completedNames(s).length === 2,
    },
    {
      point: 'during synthesis',
      fast: ANGLES,
      when: (s: readonly RunEvent[]) =>
        s.some((e) => e.type === 'agent-started' && e.data.kind === 'synthesis'),
    },
  ])(
    'stopped $point: resume re-runs only what did not complete and gives the uninterrupted result',
    async ({ fast, when }) => {
      const reference = await runToEnd(createEngine({ agents: agents(1), sandbox }), flow());
      expect(reference.done.status).toBe('completed');
      expect(reference.done.result).toMatchObject({ angles: ANGLES.map(() => 'completed') });

      const recorder = createMemoryRecorder();
      const first = createEngine({ agents: agents(60_000, fast), sandbox, recorder });
      const stopped = await stopWhen(await first.start(flow('run-stopped')), when);
      expect(stopped.done.status).toBe('stopped');
      const completedBefore = completedNames(stopped.seen);

      const resumedAgents = agents(1);
      const handle = await createEngine({ agents: resumedAgents, sandbox, recorder }).resume(
        'run-stopped',
      );
      const done = await handle.done;
      expect(done.error).toBeUndefined();
      expect(done.status).toBe('completed');
      // byte-identical to the uninterrupted run: no stop was replayed as a failure or a null
      expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.done.result));
      const rerun = resumedAgents.requests().map((r) => r.name);
      for (const name of completedBefore) expect(rerun).not.toContain(name);
      // every child that did not complete before the stop ran again, exactly once
      const expected = [...ANGLES, 'synthesis'].filter((n) => !completedBefore.includes(n));
      expect([...rerun].sort()).toEqual([...expected].sort());
      expect(done.cost.cacheHits).toBe(completedBefore.length);
      // the resumed run's event log says so too
      expect(recorder.get(handle.runId)?.events[0]).toMatchObject({
        type: 'workflow-started',
        data: { resumedFrom: { runId: 'run-stopped' }, provider: 'simulated', simulated: true },
      });
      expect(recorder.get(handle.runId)?.start).toMatchObject({
        resumedFromRunId: 'run-stopped',
        resumedFrom: { runId: 'run-stopped' },
        provider: 'simulated',
        simulated: true,
      });
    },
  );

  it('the journal marks answers shaped by the stop, and only those', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: agents(60_000), sandbox, recorder });
    const stopped = await stopWhen(
      await engine.start(flow('run-marks')),
      (s) => completedNames(s).length === 2,
    );
    expect(stopped.done.status).toBe('stopped');
    const journal = recorder.get('run-marks')?.journal ?? [];
    const marked = journal.filter((e) => e.afterHalt);
    const stoppedChildren = marked.filter((e) => e.method === 'runAgent').length;
    expect(stoppedChildren).toBe(2);
    for (const e of journal.filter((x) => !x.afterHalt && x.method === 'runAgent')) {
      expect((e.outcome as { value: { value: { status: string } } }).value.value.status).toBe(
        'completed',
      );
    }
  });
});

describe('spawned children that completed before the stop', () => {
  // A spawnAgent child's result is journaled when the child settles (a child-result record),
  // not when the guest waits for it: a child that completed before a stop, with no wf.wait yet,
  // is answered from the journal on resume, never launched again (its tokens are spent once).
  const SPAWN = `async function run(wf, args) {
  const t = await wf.spawnAgent({ name: 'quick', prompt: 'q' });
  const s = await wf.runAgent({ name: 'slow', prompt: 's' });
  const q = await wf.wait(t.taskId);
  return [q.status, s.status, q.text];
}`;
  const spawnAgents = (slowMs: number, quickText?: string) =>
    createSimulatedAgents({
      seed: 5,
      respond: (r) => ({
        delayMs: r.name === 'quick' ? 1 : slowMs,
        ...(r.name === 'quick' && quickText !== undefined ? { text: quickText } : {}),
      }),
    });
  const spawnStart = (runId: string) => ({
    workflow: { manifest: manifest({ phases: ['angles'] }), source: SPAWN },
    args: {},
    trust: 'capability-generated' as const,
    seed: 7,
    startTime: 1_700_000_000_000,
    runId,
  });
  const childResults = (journal: readonly JournalEntry[] | undefined) =>
    (journal ?? []).filter((e) => e.method === 'child-result' && e.afterHalt !== true);

  /** Runs SPAWN until `quick` completed (and `slow` has not), then stops it. */
  async function stoppedAfterQuick(recorder: RunRecorder, runId: string) {
    const first = createEngine({ agents: spawnAgents(60_000), sandbox, recorder });
    const stopped = await stopWhen(await first.start(spawnStart(runId)), (s) =>
      completedNames(s).includes('quick'),
    );
    expect(stopped.done.status).toBe('stopped');
  }

  it('is not launched again on resume', async () => {
    const reference = await runToEnd(
      createEngine({ agents: spawnAgents(1), sandbox }),
      spawnStart('run-spawn-reference'),
    );
    expect(reference.done.status).toBe('completed');
    const recorder = createMemoryRecorder();
    await stoppedAfterQuick(recorder, 'run-spawned');
    // recorded when it completed, though the guest had not waited for it
    const records = childResults(recorder.get('run-spawned')?.journal);
    expect(records.map((e) => (e.input as { name: string }).name)).toEqual(['quick']);
    expect(recorder.get('run-spawned')?.journal.some((e) => e.method === 'wait')).toBe(false);

    const again = spawnAgents(1);
    const handle = await createEngine({ agents: again, sandbox, recorder }).resume('run-spawned');
    const done = await handle.done;
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(again.requests().map((r) => r.name)).toEqual(['slow']);
    expect(done.cost.cacheHits).toBe(1);
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.done.result));
    // the resumed run's journal keeps the record: stopped and resumed again, still not relaunched
    expect(childResults(recorder.get(handle.runId)?.journal)).toHaveLength(1);
  });

  it('stopped twice: the record carried into the resumed journal still answers', async () => {
    const recorder = createMemoryRecorder();
    await stoppedAfterQuick(recorder, 'run-spawned-twice');
    const second = createEngine({ agents: spawnAgents(60_000), sandbox, recorder });
    const stoppedAgain = await stopWhen(
      await second.resume('run-spawned-twice', { runId: 'run-spawned-twice-2' }),
      (s) => s.some((e) => e.type === 'agent-started'),
    );
    expect(stoppedAgain.done.status).toBe('stopped');
    const third = spawnAgents(1);
    const done = await (
      await createEngine({ agents: third, sandbox, recorder }).resume('run-spawned-twice-2')
    ).done;
    expect(done.status).toBe('completed');
    expect(third.requests().map((r) => r.name)).toEqual(['slow']);
  });

  it('a journal without child-result records (older engines) resumes as before: relaunched', async () => {
    const recorder = createMemoryRecorder();
    await stoppedAfterQuick(recorder, 'run-spawned-old');
    const old = withJournal(recorder, (e) => e.method !== 'child-result');
    const again = spawnAgents(1);
    const done = await (
      await createEngine({ agents: again, sandbox, recorder: old }).resume('run-spawned-old')
    ).done;
    expect(done.status).toBe('completed');
    expect([...again.requests().map((r) => r.name)].sort()).toEqual(['quick', 'slow']);
    expect(done.cost.cacheHits).toBe(0);
  });

  it('the record counts against maxJournalBytes: a child never waited for cannot grow it unbounded', async () => {
    const recorder = createMemoryRecorder();
    const big = 'x'.repeat(64 * 1024);
    const engine = createEngine({
      agents: spawnAgents(1, big),
      sandbox,
      recorder,
      limits: { maxJournalBytes: 32 * 1024 },
    });
    const NEVER_WAITS = `async function run(wf) {
  await wf.spawnAgent({ name: 'quick', prompt: 'q' });
  await wf.runAgent({ name: 'slow', prompt: 's' });
  return 'done';
}`;
    const { done } = await runToEnd(engine, {
      ...spawnStart('run-spawn-budget'),
      workflow: { manifest: manifest({ phases: ['angles'] }), source: NEVER_WAITS },
    });
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
  });
});

describe('a spawn+wait fan-out journals each child result once', () => {
  // Each child's TaskResult is in its child-result record; the wf.wait answers that repeat it
  // store a reference ({ childResultOf: taskId }) and resume puts the record's result back.
  const FAN_OUT = `async function run(wf, args) {
  const tasks = [];
  for (let i = 0; i < args.n; i++) tasks.push(await wf.spawnAgent({ name: 'c' + i, prompt: 'p' + i }));
  const out = [];
  for (let i = 0; i < tasks.length; i++) {
    const r = await wf.wait(tasks[i].taskId);
    out.push([r.name, r.status, r.text, r.finalText === r.text, Object.keys(r).join(',')]);
    if (i === args.fast - 1) await wf.log('fast children waited for');
  }
  return out;
}`;
  const N = 20;
  const FAST = 10;
  const answerOf = (name: string) => `${name}:`.padEnd(2048, name.slice(1));
  /** Children c0..c(FAST-1) answer at once, the rest after `slowMs`. */
  const fanAgents = (slowMs: number) =>
    createSimulatedAgents({
      seed: 5,
      respond: (r) => ({
        delayMs: Number(r.name.slice(1)) < FAST ? 1 : slowMs,
        text: answerOf(r.name),
      }),
    });
  const fanStart = (runId: string) => ({
    workflow: { manifest: manifest({ maxConcurrency: N }), source: FAN_OUT },
    args: { n: N, fast: FAST },
    trust: 'capability-generated' as const,
    seed: 7,
    startTime: 1_700_000_000_000,
    runId,
  });
  // spawnAgent resolves once its child is published: every child holds a slot at once
  const limits = { maxConcurrency: N, deploymentConcurrency: N };
  const refs = (journal: readonly JournalEntry[] | undefined) =>
    (journal ?? []).filter(
      (e) =>
        e.method === 'wait' &&
        e.outcome.ok &&
        typeof (e.outcome.value as { value: { childResultOf?: unknown } }).value.childResultOf ===
          'string',
    );
  const occurrences = (journal: readonly JournalEntry[] | undefined, text: string) =>
    JSON.stringify(journal ?? []).split(text).length - 1;

  it('each answer is stored once: the wait answers refer to the records', async () => {
    const recorder = createMemoryRecorder();
    const { done } = await runToEnd(
      createEngine({ agents: fanAgents(1), sandbox, recorder, limits }),
      fanStart('run-fan-out'),
    );
    expect(done.status).toBe('completed');
    const journal = recorder.get('run-fan-out')?.journal;
    for (let i = 0; i < N; i++) expect(occurrences(journal, answerOf(`c${i}`))).toBe(1);
    expect(refs(journal)).toHaveLength(N);
    expect((done.result as unknown[][]).map((r) => r[3])).toEqual(Array(N).fill(true));
    // 20 records of ~2 KB, 20 references and the spawns: well under twice one copy of the answers
    const bytes = (journal ?? []).reduce((n, e) => n + JSON.stringify(e).length, 0);
    expect(bytes).toBeLessThan(N * 2048 * 1.5);
  });

  it('stopped after some waits, resume gives the wait answers of an uninterrupted run', async () => {
    const reference = await runToEnd(
      createEngine({ agents: fanAgents(1), sandbox, limits }),
      fanStart('run-fan-reference'),
    );
    expect(reference.done.status).toBe('completed');
    const recorder = createMemoryRecorder();
    const stopped = await stopWhen(
      await createEngine({ agents: fanAgents(60_000), sandbox, recorder, limits }).start(
        fanStart('run-fan-stopped'),
      ),
      (s) => s.some((e) => e.type === 'workflow-log'),
    );
    expect(stopped.done.status).toBe('stopped');
    const journal = recorder.get('run-fan-stopped')?.journal;
    expect(refs(journal).filter((e) => e.afterHalt !== true)).toHaveLength(FAST);

    const again = fanAgents(1);
    const handle = await createEngine({ agents: again, sandbox, recorder, limits }).resume(
      'run-fan-stopped',
    );
    const done = await handle.done;
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(done.cost.cacheHits).toBe(FAST);
    expect(again.requests()).toHaveLength(N - FAST);
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.done.result));
    // the resumed run's journal refers too
    expect(refs(recorder.get(handle.runId)?.journal)).toHaveLength(N);
  });

  it('a reference whose record was removed fails the resume with WF_ENGINE_REPLAY_DIVERGED', async () => {
    const recorder = createMemoryRecorder();
    await runToEnd(
      createEngine({ agents: fanAgents(1), sandbox, recorder, limits }),
      fanStart('run-fan-torn'),
    );
    const torn = withJournal(
      recorder,
      (e) => !(e.method === 'child-result' && (e.input as { name: string }).name === 'c3'),
    );
    const again = fanAgents(1);
    const done = await (
      await createEngine({ agents: again, sandbox, recorder: torn, limits }).resume('run-fan-torn')
    ).done;
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(done.error?.message).toContain('child-result record of task-4');
  });

  it('a journal written before references (full wait answers, no records) still resumes', async () => {
    const reference = await runToEnd(
      createEngine({ agents: fanAgents(1), sandbox, limits }),
      fanStart('run-fan-reference-old'),
    );
    const recorder = createMemoryRecorder();
    await stopWhen(
      await createEngine({ agents: fanAgents(60_000), sandbox, recorder, limits }).start(
        fanStart('run-fan-old'),
      ),
      (s) => s.some((e) => e.type === 'workflow-log'),
    );
    // rewrite it as an older engine wrote it: each wait answer in full, no child-result records
    const old: RunRecorder = {
      ...recorder,
      load: async (runId) => {
        const loaded = await recorder.load?.(runId);
        if (!loaded) return loaded;
        const results = new Map<string, unknown>();
        const journal: JournalEntry[] = [];
        for (const e of loaded.journal) {
          const value = e.outcome.ok
            ? (e.outcome.value as { value: Record<string, unknown> })
            : undefined;
          if (e.method === 'child-result') {
            results.set(String(value?.value.taskId), value?.value);
            continue;
          }
          const ref = value?.value?.childResultOf;
          journal.push(
            typeof ref === 'string'
              ? { ...e, outcome: { ok: true, value: { ...value, value: results.get(ref) } } }
              : e,
          );
        }
        expect(journal.some((e) => e.method === 'wait')).toBe(true);
        return { start: loaded.start, journal };
      },
    };
    const again = fanAgents(1);
    const done = await (
      await createEngine({ agents: again, sandbox, recorder: old, limits }).resume('run-fan-old')
    ).done;
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(done.cost.cacheHits).toBe(FAST);
    expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.done.result));
  });
});

describe('resume across real and simulated agents', () => {
  /** A provider that says it is real (as the DSH one does); its children are simulated here. */
  function realLooking(): AgentProvider {
    const inner = createSimulatedAgents({ seed: 5 });
    return { name: 'dsh:spawn', capabilities: inner.capabilities, start: inner.start };
  }

  it('refuses a real run on simulated agents with a named error, unless asked explicitly', async () => {
    const recorder = createMemoryRecorder();
    const real = createEngine({ agents: realLooking(), sandbox, recorder });
    const stopped = await stopWhen(await real.start(flow('run-real')), (s) =>
      s.some((e) => e.type === 'agent-started'),
    );
    expect(stopped.done.status).toBe('stopped');
    expect(recorder.get('run-real')?.start).toMatchObject({
      provider: 'dsh:spawn',
      simulated: false,
    });

    const simulated = createEngine({ agents: agents(1), sandbox, recorder });
    await expect(simulated.resume('run-real')).rejects.toMatchObject({
      code: 'WF_ENGINE_RESUME_PROVIDER_MISMATCH',
      message: expect.stringContaining('recorded with real agents (provider "dsh:spawn")'),
    });
    // the reverse too: a simulated record is not continued by real agents
    const sim = await runToEnd(
      createEngine({ agents: agents(1), sandbox, recorder }),
      flow('run-sim'),
    );
    await expect(real.resume(sim.runId)).rejects.toMatchObject({
      code: 'WF_ENGINE_RESUME_PROVIDER_MISMATCH',
    });

    const handle = await simulated.resume('run-real', { allowProviderChange: true });
    const done = await handle.done;
    expect(done.status).toBe('completed');
    expect(recorder.get(handle.runId)?.start).toMatchObject({
      provider: 'simulated',
      simulated: true,
      resumedFromRunId: 'run-real',
    });
  });
});
