// Journal and resume through the real sandbox: a run cut off mid-way resumes from its journal,
// answers journaled calls without re-running their children, and ends with the result an
// uninterrupted run gives. A changed source diverges with a clear error.
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type JournalEntry,
  type RunRecorder,
} from '../src/index.js';
import { REVIEW_ARGS, REVIEW_MANIFEST, REVIEW_SOURCE } from './fixtures/review-flow.js';
import { byType, journaledChildNames, runToEnd, shareSandbox } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

const start = (runId?: string) => ({
  workflow: { manifest: REVIEW_MANIFEST, source: REVIEW_SOURCE },
  args: REVIEW_ARGS,
  trust: 'capability-generated' as const,
  seed: 42,
  startTime: 1_700_000_000_000,
  ...(runId ? { runId } : {}),
});

/** A recorder that stops persisting the journal after `keep` entries, as if the host died there. */
function cutAfter(keep: number) {
  const inner = createMemoryRecorder();
  let kept = 0;
  const recorder: RunRecorder = {
    ...inner,
    journal(runId: string, entry: JournalEntry) {
      if (kept < keep) inner.journal(runId, entry);
      kept += 1;
    },
  };
  return { recorder, inner };
}

describe('journal and resume', () => {
  it.each([3, 7, 12, 13])(
    'resumes a run cut after %i journal entries without re-running journaled children, with the uninterrupted result',
    async (cut) => {
      const referenceAgents = createSimulatedAgents({ seed: 3 });
      const reference = await runToEnd(createEngine({ agents: referenceAgents, sandbox }), start());
      expect(reference.done.error).toBeUndefined();
      expect(reference.done.status).toBe('completed');

      const { recorder, inner } = cutAfter(cut);
      const first = createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox, recorder });
      const original = await runToEnd(first, start(`run-cut-${cut}`));
      expect(original.done.status).toBe('completed');
      const journal = inner.get(`run-cut-${cut}`)?.journal ?? [];
      expect(journal).toHaveLength(cut);
      const journaledChildren = journaledChildNames(journal);
      expect(journaledChildren.length).toBeGreaterThan(0);

      const agents = createSimulatedAgents({ seed: 3 });
      const resumer = createEngine({ agents, sandbox, recorder: inner });
      const handle = await resumer.resume(`run-cut-${cut}`);
      const events: string[] = [];
      for await (const e of handle.events) events.push(e.type);
      const done = await handle.done;
      expect(done.error).toBeUndefined();
      expect(done.status).toBe('completed');
      expect(done.result).toEqual(reference.done.result);
      const rerun = agents.requests().map((r) => r.name);
      // re-run children get exactly the task ids (and so the prompts) the uninterrupted run gave them
      const idsByName = new Map(referenceAgents.requests().map((r) => [r.name, r.taskId]));
      for (const r of agents.requests()) expect(r.taskId).toBe(idsByName.get(r.name));
      for (const name of journaledChildren) expect(rerun).not.toContain(name);
      expect(done.cost.cacheHits).toBe(journaledChildren.length);
      expect(events.filter((t) => t === 'cache-hit')).toHaveLength(journaledChildren.length);
      // the resumed run's log has the replayed part's phases too
      expect(events).toContain('phase-started');
      const resumed = inner.get(handle.runId);
      expect(resumed?.start.resumedFromRunId).toBe(`run-cut-${cut}`);
      // the new run's journal is complete: the replayed entries, then the live ones
      expect(resumed?.journal.slice(0, cut).map((e) => e.seq)).toEqual(journal.map((e) => e.seq));
      expect(resumed?.journal.map((e) => e.settleSeq)).toEqual(
        resumed?.journal.map((_, i) => i + 1),
      );
    },
  );

  it('a resumed run whose source changed stops replay with a clear divergence error', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: createSimulatedAgents(), sandbox, recorder });
    const first = await runToEnd(engine, start('run-src'));
    expect(first.done.status).toBe('completed');
    // tamper with the recorded source: the first review prompt changes
    const rec = recorder.get('run-src');
    if (!rec) throw new Error('no record');
    (rec.start as { source: string }).source = REVIEW_SOURCE.replace(
      "'Review the '",
      "'Inspect the '",
    );
    const handle = await engine.resume('run-src');
    const done = await handle.done;
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(done.error?.message).toMatch(/diverged at call #\d+: its input differs at \$\.prompt/);
    expect(done.error?.message).toContain('Inspect the');
  });

  it('the resumed run records the artifacts and logs of the replayed part', async () => {
    const { recorder, inner } = cutAfter(3);
    const source = `async function run(wf, args) {
      await wf.artifact('plan', { steps: 2 });
      wf.log('planned');
      const a = await wf.runAgent({ name: 'one', prompt: 'p' });
      const b = await wf.runAgent({ name: 'two', prompt: 'p' });
      return [a.status, b.status];
    }`;
    const flow = {
      workflow: {
        manifest: { ...REVIEW_MANIFEST, inputSchema: undefined, readOnly: false },
        source,
      },
      trust: 'capability-generated' as const,
      seed: 1,
      runId: 'run-art',
    };
    delete (flow.workflow.manifest as { inputSchema?: unknown }).inputSchema;
    const first = await runToEnd(
      createEngine({ agents: createSimulatedAgents(), sandbox, recorder }),
      flow,
    );
    expect(first.done.status).toBe('completed');
    const agents = createSimulatedAgents();
    const handle = await createEngine({ agents, sandbox, recorder: inner }).resume('run-art');
    const done = await handle.done;
    expect(done).toMatchObject({ status: 'completed', result: ['completed', 'completed'] });
    expect(inner.get(handle.runId)?.artifacts.get('plan')).toEqual({ steps: 2 });
    const log = inner.get(handle.runId)?.events.find((e) => e.type === 'workflow-log');
    expect(log?.data).toMatchObject({ message: 'planned', replayed: true });
    expect(agents.requests().map((r) => r.name)).toEqual(['two']);
  });

  it('wf.runId inside a resumed run is the logical run: calls that carry it replay, and the result is the uninterrupted one', async () => {
    const source = `async function run(wf, args) {
      const a = await wf.runAgent({ name: 'one', prompt: 'run ' + wf.runId + ' part one' });
      const b = await wf.runAgent({ name: 'two', prompt: 'run ' + wf.runId + ' part two' });
      const c = await wf.runAgent({ name: 'three', prompt: 'run ' + wf.runId + ' part three' });
      return { id: wf.runId, texts: [a.finalText, b.finalText, c.finalText] };
    }`;
    const flow = {
      workflow: { manifest: { ...REVIEW_MANIFEST, inputSchema: undefined }, source },
      trust: 'capability-generated' as const,
      seed: 5,
      startTime: 1_700_000_000_000,
    };
    delete (flow.workflow.manifest as { inputSchema?: unknown }).inputSchema;
    const reference = await runToEnd(
      createEngine({ agents: createSimulatedAgents({ seed: 4 }), sandbox }),
      { ...flow, runId: 'run-logical' },
    );
    expect(reference.done.status).toBe('completed');
    // Cut after the first answer, resume, cut the resumed run again, resume that one.
    const { recorder, inner } = cutAfter(1);
    await runToEnd(
      createEngine({ agents: createSimulatedAgents({ seed: 4 }), sandbox, recorder }),
      {
        ...flow,
        runId: 'run-logical',
      },
    );
    // The first resume loads the cut run and is itself cut after two entries.
    const second = cutAfter(2);
    const agents = createSimulatedAgents({ seed: 4 });
    const firstResume = await (
      await createEngine({
        agents,
        sandbox,
        recorder: { ...second.recorder, load: (id: string) => inner.load(id) },
      }).resume('run-logical', { runId: 'run-logical-2' })
    ).done;
    expect(firstResume.error).toBeUndefined();
    expect(firstResume.result).toEqual(reference.done.result);
    expect(second.inner.get('run-logical-2')?.start).toMatchObject({
      resumedFromRunId: 'run-logical',
      logicalRunId: 'run-logical',
    });
    // The children whose answers were journaled were not launched again.
    expect(agents.requests().map((r) => r.name)).toEqual(['two', 'three']);
    // The resumed run, cut, resumed once more: its guest still sees the first run's id.
    const again = await (
      await createEngine({
        agents: createSimulatedAgents({ seed: 4 }),
        sandbox,
        recorder: second.inner,
      }).resume('run-logical-2', { runId: 'run-logical-3' })
    ).done;
    expect(again.error).toBeUndefined();
    expect(again.result).toEqual(reference.done.result);
    expect(again.result).toMatchObject({ id: 'run-logical' });
    expect(second.inner.get('run-logical-3')?.start).toMatchObject({
      resumedFromRunId: 'run-logical-2',
      logicalRunId: 'run-logical',
    });
  });

  it('a divergence with the recorded source and args names the call, where its input differs and why, without blaming the source', async () => {
    const source = `async function run(wf, args) {
      const a = await wf.runAgent({ name: 'one', prompt: 'plan within ' + wf.budget.total });
      return a.finalText;
    }`;
    const flow = {
      workflow: { manifest: { ...REVIEW_MANIFEST, inputSchema: undefined }, source },
      trust: 'capability-generated' as const,
      seed: 5,
      runId: 'run-budget-read',
    };
    delete (flow.workflow.manifest as { inputSchema?: unknown }).inputSchema;
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: createSimulatedAgents(), sandbox, recorder });
    expect((await runToEnd(engine, flow)).done.status).toBe('completed');
    // The resume sets a token budget the recorded run did not have: the guest reads it.
    const done = await (await engine.resume('run-budget-read', { limits: { tokenBudget: 50_000 } }))
      .done;
    expect(done.error?.code).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(done.error?.message).toContain('resume diverged at call #1');
    expect(done.error?.message).toContain(
      'its input differs at $.prompt: journal "plan within null", now "plan within 50000"',
    );
    expect(done.error?.message).toContain("the source and args are the run's recorded ones");
    expect(done.error?.message).not.toMatch(/source (or|and) args changed/);
  });

  it('refuses to resume unknown and trusted-local runs', async () => {
    const recorder = createMemoryRecorder();
    const engine = createEngine({ agents: createSimulatedAgents(), sandbox, recorder });
    await expect(engine.resume('run-nope')).rejects.toMatchObject({
      code: 'WF_ENGINE_RESUME_UNAVAILABLE',
    });
    const local = await runToEnd(engine, {
      workflow: { manifest: REVIEW_MANIFEST, run: async () => 1 },
      args: REVIEW_ARGS,
      trust: 'trusted-local',
    });
    await expect(engine.resume(local.runId)).rejects.toMatchObject({
      code: 'WF_ENGINE_RESUME_UNAVAILABLE',
    });
    expect(byType(local.events, 'workflow-completed')).toHaveLength(1);
  });
});
