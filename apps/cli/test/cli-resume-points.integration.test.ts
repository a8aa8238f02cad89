// Honest resume, with real processes and the real run store: Ctrl-C (SIGINT to a
// real `wf run`) at five points of a fan-out, then `wf resume`: exit 0, a result.json byte-identical
// to an uninterrupted run's, and no child that completed before the Ctrl-C run again (counted from
// the agents' side: agent-started events are emitted only when the provider launched a child).
// With and without --seed. Each interrupt waits for an observable event in the run store, never a
// sleep, so a loaded machine only widens the windows.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { openRunStore } from '@wf/catalog-fs';
import { describe, expect, it } from 'vitest';
import {
  collect,
  json,
  type Project,
  startWf,
  tempProject,
  type WfResult,
  wf,
} from './helpers/wf-cli.js';

const ANGLES = ['scope', 'evidence', 'risk', 'cost'];
const CHILDREN = [...ANGLES, 'synthesis'];

// The plan and wrap-up phases wait for a gate file in the project (polled with wf.readFile): the
// test holds a run there for as long as it likes, before the first child and after the last one.
// A missing gate is an ordinary error the workflow catches; the number of polls never reaches the
// result, so a run that waited gives the result of one that did not.
const SOURCE = `function busy(n) {
  let x = 0;
  for (let j = 0; j < n; j += 1) x = (x + j * 7) % 1000003;
  return x;
}

async function gate(wf, file) {
  for (;;) {
    try {
      await wf.readFile(file);
      return;
    } catch (e) {
      busy(5000);
    }
  }
}

async function run(wf, args) {
  await wf.phase('plan', () => gate(wf, 'gate-plan.txt'));
  const found = await wf.phase('angles', () =>
    wf.parallel(args.angles.map((a) => () => wf.runAgent({ name: a, prompt: 'Investigate the ' + a + ' of: ' + args.question, readOnly: true }))),
  );
  const merged = await wf.phase('synthesis', () => wf.synthesize({ inputs: found.map((f) => (f ? f.finalText : null)), rubric: 'merge, dedupe, rank' }));
  await wf.phase('wrap-up', () => gate(wf, 'gate-wrap-up.txt'));
  return { synthesis: merged.text, angles: found.map((f) => (f ? f.finalText : null)), pick: Math.floor(Math.random() * 1e9) };
}
`;

const CAPSULE = {
  format: 'dsh.workflow',
  version: 1,
  workflowApiVersion: 1,
  minDshVersion: '0.1.0-rc.8',
  manifest: {
    name: 'resume-points',
    description: 'Plans, fans out over angles, synthesizes, wraps up',
    phases: ['plan', 'angles', 'synthesis', 'wrap-up'],
    readOnly: true,
    maxAgents: 12,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize'],
    inputSchema: {
      type: 'object',
      properties: {
        question: { type: 'string' },
        angles: { type: 'array', items: { type: 'string' } },
      },
      required: ['question', 'angles'],
      additionalProperties: false,
    },
  },
  source: SOURCE,
};
const ARGS = JSON.stringify({ question: 'Is the cache safe to drop?', angles: ANGLES });
const GATES = ['gate-plan.txt', 'gate-wrap-up.txt'];

interface Ev {
  readonly type: string;
  readonly data: { readonly [key: string]: unknown };
}

function runDirs(p: Project): string[] {
  const root = join(p.dir, '.dsh', 'workflow-runs');
  return existsSync(root) ? readdirSync(root).filter((n) => n.startsWith('run-')) : [];
}

function eventsOf(p: Project, runId: string): Ev[] {
  const file = join(p.dir, '.dsh', 'workflow-runs', runId, 'events.jsonl');
  if (!existsSync(file)) return [];
  const out: Ev[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    try {
      out.push(JSON.parse(line) as Ev);
    } catch {
      // the last line may still be being written
    }
  }
  return out;
}

const resultBytes = (p: Project, runId: string) =>
  readFileSync(join(p.dir, '.dsh', 'workflow-runs', runId, 'result.json'));

const started = (events: readonly Ev[]) =>
  events.filter((e) => e.type === 'agent-started').map((e) => String(e.data.name));
const completed = (events: readonly Ev[]) =>
  events
    .filter((e) => e.type === 'agent-completed' && e.data.status === 'completed')
    .map((e) => String(e.data.name));
const entered = (events: readonly Ev[], phase: string) =>
  events.some((e) => e.type === 'phase-started' && e.data.phase === phase);

/** Polls the run store until `when` holds for the run's events, then sends SIGINT. */
async function interruptWhen(
  p: Project,
  child: ChildProcess,
  exited: Promise<WfResult>,
  when: (events: readonly Ev[]) => boolean,
): Promise<void> {
  const deadline = Date.now() + 90_000;
  const seen = () => {
    const [runId] = runDirs(p);
    return runId ? eventsOf(p, runId) : [];
  };
  while (Date.now() < deadline) {
    if (when(seen())) {
      child.kill('SIGINT');
      return;
    }
    if (child.exitCode !== null) {
      const r = await exited;
      throw new Error(
        `wf run ended (exit ${r.code}) before the interrupt point; events: ${seen()
          .map((e) => e.type)
          .join(', ')}\n${r.stdout}\n${r.stderr}`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(
    `the interrupt point was never observed; events: ${seen()
      .map((e) => e.type)
      .join(', ')}`,
  );
}

interface Point {
  readonly name: string;
  /** Gate files present while the interrupted run runs (the resume and reference have both). */
  readonly gates: readonly string[];
  readonly when: (events: readonly Ev[]) => boolean;
  /** What the interrupted run's own record must show, proving the point was really hit. */
  readonly check: (events: readonly Ev[]) => void;
}

const POINTS: readonly Point[] = [
  {
    name: 'before the first child',
    gates: [],
    when: (e) => entered(e, 'plan'),
    check: (e) => expect(started(e)).toEqual([]),
  },
  {
    name: 'mid first wave',
    gates: ['gate-plan.txt'],
    when: (e) => started(e).length >= 2,
    check: (e) => {
      expect(started(e).length).toBeGreaterThanOrEqual(2);
      expect(completed(e)).toEqual([]);
    },
  },
  {
    name: 'after some children completed',
    gates: ['gate-plan.txt'],
    when: (e) => completed(e).length >= 1,
    check: (e) => {
      expect(completed(e).length).toBeGreaterThanOrEqual(1);
      expect(completed(e).length).toBeLessThan(ANGLES.length);
    },
  },
  {
    name: 'during synthesis',
    gates: ['gate-plan.txt'],
    when: (e) => started(e).includes('synthesis'),
    check: (e) => {
      expect([...completed(e)].sort()).toEqual([...ANGLES].sort());
      expect(started(e)).toContain('synthesis');
    },
  },
  {
    name: 'right before the end',
    gates: ['gate-plan.txt'],
    when: (e) => entered(e, 'wrap-up'),
    check: (e) => expect([...completed(e)].sort()).toEqual([...CHILDREN].sort()),
  },
];

describe.each([
  { mode: 'without --seed', seed: [] as string[] },
  { mode: 'with --seed 5', seed: ['--seed', '5'] },
])('Ctrl-C then wf resume, $mode', ({ seed }) => {
  let reference: Buffer | undefined;

  /** The uninterrupted run (instant children: durations never change a result). */
  async function uninterrupted(): Promise<Buffer> {
    if (reference) return reference;
    const p = tempProject();
    try {
      const file = p.file('points.workflow.json', CAPSULE);
      for (const g of GATES) p.file(g, 'open');
      const r = await wf(['run', file, '--args', ARGS, '--delay-ms', '0', '--json', ...seed], p);
      expect(r.code, r.stderr).toBe(0);
      reference = resultBytes(p, String(json(r).runId));
      return reference;
    } finally {
      p.cleanup();
    }
  }

  it.each(POINTS)(
    'at $name: the uninterrupted result, exit 0, no completed child re-run',
    {
      timeout: 180_000,
    },
    async (point) => {
      const expected = await uninterrupted();
      const p = tempProject();
      try {
        const file = p.file('points.workflow.json', CAPSULE);
        for (const g of point.gates) p.file(g, 'open');
        // Children take 2 to 8 s: the points between them have windows of seconds, far wider
        // than the store's flush delay; the first and the last point are held by the gates.
        const child = startWf(
          ['run', file, '--args', ARGS, '--delay-ms', '4000', '--no-progress', '--json', ...seed],
          p,
        );
        const exited = collect(child, 120_000);
        await interruptWhen(p, child, exited, point.when);
        const first = await exited;
        expect(first.code, first.stderr).toBe(130);
        const stopped = json(first) as { runId: string; status: string };
        expect(stopped.status).toBe('stopped');
        const before = eventsOf(p, stopped.runId);
        point.check(before);

        for (const g of GATES) p.file(g, 'open');
        const resumed = await wf(['resume', stopped.runId, '--delay-ms', '0', '--json'], p);
        expect(resumed.code, resumed.stderr).toBe(0);
        const doc = json(resumed) as {
          runId: string;
          status: string;
          resumedFromRunId: string;
          cost: { cacheHits: number };
        };
        expect(doc).toMatchObject({ status: 'completed', resumedFromRunId: stopped.runId });
        expect(resultBytes(p, doc.runId).equals(expected)).toBe(true);

        // From the agents' side: the resumed run launched exactly the children that had not
        // completed, each once; those that had are answered from the journal.
        const done = completed(before);
        const relaunched = started(eventsOf(p, doc.runId));
        for (const name of done) expect(relaunched).not.toContain(name);
        expect([...relaunched].sort()).toEqual(CHILDREN.filter((c) => !done.includes(c)).sort());
        expect(doc.cost.cacheHits).toBe(done.length);
      } finally {
        p.cleanup();
      }
    },
  );
});

describe('a lost run (the process killed) resumes too', () => {
  it('SIGKILL after some children completed: the run is marked interrupted, wf resume re-runs only the children whose results were not journaled', {
    timeout: 180_000,
  }, async () => {
    const reference = tempProject();
    const p = tempProject();
    try {
      const refFile = reference.file('points.workflow.json', CAPSULE);
      for (const g of GATES) reference.file(g, 'open');
      const ref = await wf(
        ['run', refFile, '--args', ARGS, '--delay-ms', '0', '--json'],
        reference,
      );
      expect(ref.code, ref.stderr).toBe(0);
      const expected = resultBytes(reference, String(json(ref).runId));

      const file = p.file('points.workflow.json', CAPSULE);
      p.file('gate-plan.txt', 'open');
      const child = startWf(
        ['run', file, '--args', ARGS, '--delay-ms', '4000', '--no-progress', '--json'],
        p,
      );
      const exited = collect(child, 120_000);
      const when = (e: readonly Ev[]) => completed(e).length >= 1;
      const deadline = Date.now() + 90_000;
      while (!when(eventsOf(p, runDirs(p)[0] ?? 'none')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      // No handler runs: nothing is stopped or finished, the record stays `running`.
      child.kill('SIGKILL');
      expect((await exited).signal).toBe('SIGKILL');
      const [lostId] = runDirs(p) as [string];
      expect(completed(eventsOf(p, lostId)).length).toBeGreaterThanOrEqual(1);

      for (const g of GATES) p.file(g, 'open');
      const resumed = await wf(['resume', lostId, '--delay-ms', '0', '--json'], p);
      expect(resumed.code, resumed.stderr).toBe(0);
      const doc = json(resumed) as { runId: string; status: string; cost: { cacheHits: number } };
      expect(doc.status).toBe('completed');
      expect(resultBytes(p, doc.runId).equals(expected)).toBe(true);
      const shown = json(await wf(['show', lostId, '--json'], p)) as { run: { status: string } };
      expect(shown.run.status).toBe('interrupted');
      // From the journal: a child whose result reached it is never launched again; every other
      // child (running when the host died, or never started) is, once.
      const journal = readFileSync(
        join(p.dir, '.dsh', 'workflow-runs', lostId, 'journal.jsonl'),
        'utf8',
      )
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as {
              method: string;
              outcome: { ok: boolean; value?: { value?: { name?: string; status?: string } } };
            },
        );
      const journaled = journal
        .filter(
          (e) =>
            e.method === 'runAgent' &&
            e.outcome.ok &&
            e.outcome.value?.value?.status === 'completed',
        )
        .map((e) => String(e.outcome.value?.value?.name));
      const relaunched = started(eventsOf(p, doc.runId));
      expect([...relaunched].sort()).toEqual(CHILDREN.filter((c) => !journaled.includes(c)).sort());
      expect(doc.cost.cacheHits).toBe(journaled.length);
    } finally {
      reference.cleanup();
      p.cleanup();
    }
  });
});

describe('resumed runs say so, and real runs are not resumed on simulated agents', () => {
  it('wf show, wf runs and the report name the source run; a DSH-recorded run needs --simulate', {
    timeout: 120_000,
  }, async () => {
    const p = tempProject();
    try {
      // A run recorded into the project's real run store by an engine whose provider is real
      // (named as the DSH one is; its children answer like the simulated ones), stopped mid-way.
      for (const g of GATES) p.file(g, 'open');
      const store = await openRunStore({ project: p.dir });
      const inner = createSimulatedAgents({ delayMs: 60_000 });
      const engine = createEngine({
        agents: { name: 'dsh:spawn', capabilities: inner.capabilities, start: inner.start },
        recorder: store,
        workspace: p.dir,
      });
      const handle = await engine.start({
        workflow: { manifest: CAPSULE.manifest, source: SOURCE },
        args: JSON.parse(ARGS),
        trust: 'capability-generated',
        seed: 1,
      });
      for await (const e of handle.events) if (e.type === 'agent-started') handle.stop('host exit');
      expect((await handle.done).status).toBe('stopped');
      await engine.close();
      await store.close();
      const realId = handle.runId;

      const refused = await wf(['resume', realId, '--json'], p);
      expect(refused.code).toBe(4);
      expect(json(refused)).toMatchObject({
        ok: false,
        error: { code: 'WF_CLI_RESUME_PROVIDER_MISMATCH' },
      });
      expect(String((json(refused).error as { message: string }).message)).toContain('dsh:spawn');
      // nothing was recorded by the refused resume
      expect(runDirs(p)).toEqual([realId]);

      const forced = await wf(['resume', realId, '--simulate', '--delay-ms', '0', '--json'], p);
      expect(forced.code, forced.stderr).toBe(0);
      const newId = String(json(forced).runId);
      const shown = json(await wf(['show', newId, '--json'], p)) as {
        run: Record<string, unknown>;
      };
      expect(shown.run).toMatchObject({
        resumedFromRunId: realId,
        resumedFrom: { runId: realId, at: expect.any(Number) },
        provider: 'simulated',
        simulated: true,
      });
      const showText = (await wf(['show', newId], p)).stdout;
      expect(showText).toContain(`resumed    from ${realId}`);
      expect(showText).toMatch(/agents {5}simulated: no model was called/);
      const original = (await wf(['show', realId], p)).stdout;
      expect(original).toContain('agents     dsh:spawn');
      const runs = (await wf(['runs'], p)).stdout;
      expect(runs).toMatch(new RegExp(`${newId}\\s+resume-points\\s+completed \\(resumed\\)`));
      expect(runs).toMatch(new RegExp(`${realId}\\s+resume-points\\s+stopped\\s`));
      const runsJson = json(await wf(['runs', '--json'], p)) as { runs: Record<string, unknown>[] };
      expect(runsJson.runs.find((r) => r.runId === newId)).toMatchObject({
        resumedFromRunId: realId,
        simulated: true,
      });
      const report = await wf(['report', newId, '--out', 'r.html'], p);
      expect(report.code).toBe(0);
      const html = readFileSync(join(p.dir, 'r.html'), 'utf8');
      expect(html).toContain(`resumed from run <code>${realId}</code>`);
      expect(html).toContain('agents: simulated: no model was called');
    } finally {
      p.cleanup();
    }
  });
});
