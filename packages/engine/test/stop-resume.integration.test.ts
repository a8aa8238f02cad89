// Honest resume (issue 14 item 1) through the real sandbox: a run stopped mid fan-out resumes to
// the result of an uninterrupted run; children it stopped run again, children that completed are
// replayed (never re-run), and a stop is never replayed as a failure. Resuming across real and
// simulated agents is refused unless asked for.
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  type AgentProvider,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type RunEvent,
  type RunHandle,
} from '../src/index.js';
import { manifest, runToEnd, shareSandbox } from './helpers.js';

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

describe('known defect: spawned children that completed before the stop', () => {
  // A spawnAgent child's answer is journaled only when the guest waits for it (wf.wait). A child
  // that completed before a stop or crash, with no wait yet, is launched again on resume: its
  // tokens are spent twice. `it.fails` keeps the repro honest: it goes red once fixed (then drop
  // `.fails`). The fix needs the child's result journaled when it completes, outside the guest's
  // delivery order (the Restate journal store too).
  const SPAWN = `async function run(wf, args) {
  const t = await wf.spawnAgent({ name: 'quick', prompt: 'q' });
  const s = await wf.runAgent({ name: 'slow', prompt: 's' });
  const q = await wf.wait(t.taskId);
  return [q.status, s.status];
}`;
  const spawnAgents = (slowMs: number) =>
    createSimulatedAgents({
      seed: 5,
      respond: (r) => ({ delayMs: r.name === 'quick' ? 1 : slowMs }),
    });

  it.fails('is not launched again on resume', async () => {
    const recorder = createMemoryRecorder();
    const start = {
      workflow: { manifest: manifest({ phases: ['angles'] }), source: SPAWN },
      args: {},
      trust: 'capability-generated' as const,
      seed: 7,
      startTime: 1_700_000_000_000,
      runId: 'run-spawned',
    };
    const first = createEngine({ agents: spawnAgents(60_000), sandbox, recorder });
    const stopped = await stopWhen(await first.start(start), (s) =>
      completedNames(s).includes('quick'),
    );
    expect(stopped.done.status).toBe('stopped');
    const again = spawnAgents(1);
    const done = await (
      await createEngine({ agents: again, sandbox, recorder }).resume('run-spawned')
    ).done;
    expect(done.status).toBe('completed');
    expect(again.requests().map((r) => r.name)).toEqual(['slow']);
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
