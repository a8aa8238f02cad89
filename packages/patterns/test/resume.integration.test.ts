// The shipped workflows are deterministic, so they resume: a run whose journal was cut mid-way
// (as if the host died) resumes from it without re-running the journaled children and ends with
// exactly the result an uninterrupted run gives.
import type { WorkflowCapsule } from '@wf/bridge';
import {
  type AgentRequest,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type JournalEntry,
  type RunDone,
  type RunRecorder,
  type SimulatedResponse,
} from '@wf/engine';
import { describe, expect, it } from 'vitest';
import { buildReviewPackets, loopUntilDone, scopedReview, tournament } from '../src/index.js';
import { useSharedSandbox } from './helpers/run-pattern.js';

const diff = ['src/auth/login.ts', 'src/db.ts']
  .map((p) =>
    [`diff --git a/${p} b/${p}`, `--- a/${p}`, `+++ b/${p}`, '@@ -1 +1 @@', '-a', '+b', ''].join(
      '\n',
    ),
  )
  .join('');
const built = buildReviewPackets(diff, { maxFilesPerPacket: 1 });
if (!built.ok) throw new Error(built.error.message);

const reviewer = (r: AgentRequest): SimulatedResponse | undefined => {
  const file = /^Files: (\S+)/m.exec(r.prompt)?.[1];
  if (r.name.startsWith('review-') && file) {
    const finding = {
      file,
      line: 1,
      severity: 'high',
      category: 'correctness',
      title: `b in ${file}`,
      detail: 'd',
      suggestion: 's',
    };
    return { structured: { findings: [finding], summary: 'one' } };
  }
  if (r.name.startsWith('verifier-')) {
    const ids = [...r.prompt.matchAll(/^(F-[0-9a-f]{16}) \|/gm)].map((m) => m[1]);
    return {
      structured: {
        dispositions: ids.map((id) => ({ id, disposition: 'confirmed', reason: 'seen' })),
      },
    };
  }
  return undefined;
};
const rounds = (r: AgentRequest): SimulatedResponse | undefined => {
  const n = Number(/^round-(\d+)$/.exec(r.name)?.[1] ?? 0);
  return n > 0 && n < 3
    ? { structured: { findings: [{ title: `finding ${n}`, detail: 'x' }] } }
    : undefined;
};

const cases: [
  string,
  WorkflowCapsule,
  unknown,
  ((r: AgentRequest) => SimulatedResponse | undefined) | undefined,
  number,
][] = [
  ['scoped-review', scopedReview, { packets: built.packets }, reviewer, 6],
  ['tournament', tournament, { request: 'q' }, undefined, 5],
  ['loop-until-done', loopUntilDone, { request: 'q' }, rounds, 3],
];

async function finish(handle: { events: AsyncIterable<unknown>; done: Promise<RunDone> }) {
  for await (const _ of handle.events) {
    // drain
  }
  return handle.done;
}

const sandbox = useSharedSandbox();

describe('resume from a cut journal', () => {
  it.each(cases)(
    '%s resumes to the uninterrupted result',
    async (_name, capsule, args, respond, cut) => {
      const start = (runId?: string) => ({
        workflow: { manifest: capsule.manifest, source: capsule.source },
        args,
        trust: 'trusted-package' as const,
        seed: 11,
        startTime: 1_700_000_000_000,
        ...(runId ? { runId } : {}),
      });
      const agentsFor = () => createSimulatedAgents({ seed: 5, ...(respond ? { respond } : {}) });

      const referenceEngine = createEngine({ agents: agentsFor(), sandbox: sandbox() });
      const reference = await finish(await referenceEngine.start(start()));
      await referenceEngine.close();
      expect(reference.status).toBe('completed');

      // The host "dies" after `cut` journal entries: later entries are never persisted.
      const inner = createMemoryRecorder();
      let kept = 0;
      const recorder: RunRecorder = {
        ...inner,
        journal(runId: string, entry: JournalEntry) {
          if (kept < cut) inner.journal(runId, entry);
          kept += 1;
        },
      };
      const firstEngine = createEngine({ agents: agentsFor(), recorder, sandbox: sandbox() });
      await finish(await firstEngine.start(start('run-cut')));
      await firstEngine.close();
      const journal = inner.get('run-cut')?.journal ?? [];
      const journaled = journal.filter((e) => e.outcome.ok && e.method === 'runAgent').length;
      expect(journaled).toBeGreaterThan(0);

      const agents = agentsFor();
      const resumer = createEngine({ agents, recorder: inner, sandbox: sandbox() });
      const done = await finish(await resumer.resume('run-cut'));
      await resumer.close();
      expect(done.error).toBeUndefined();
      expect(done.status).toBe('completed');
      // Identical but for where the audit artifact lives (each run has its own artifact store).
      const withoutRefs = (r: unknown) => {
        const { audit, ...rest } = r as { audit?: { name: string } };
        return { ...rest, ...(audit ? { audit: audit.name } : {}) };
      };
      expect(withoutRefs(done.result)).toEqual(withoutRefs(reference.result));
      // Journaled children are answered from the journal, not launched again.
      expect(agents.stats().started).toBe(reference.cost.agentsStarted - journaled);
      expect(done.cost.cacheHits).toBe(journaled);
    },
  );
});
