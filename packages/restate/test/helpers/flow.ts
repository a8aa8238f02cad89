// The workflow the failover, restart and concurrency tests run: 6 reviews 3 at a time, 6
// verifications one by one, a synthesis (13 children), with Math.random in the result so a
// replay that changed the guest's course would show. Plus its uninterrupted reference result.
import { createEngine, createSimulatedAgents, type RunDone } from '@wf/engine';
import type { Sandbox } from '@wf/sandbox';

export const FLOW_MANIFEST = {
  name: 'review-verify-synthesize',
  description: 'Review areas, verify each finding, synthesize a report.',
  phases: ['review', 'verify', 'synthesize'],
  readOnly: true,
  maxAgents: 20,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize', 'adversarial-verification'],
};

export const FLOW_SOURCE = `async function run(wf, args) {
  const findings = await wf.phase('review', () =>
    wf.parallel(args.areas.map((area) => () =>
      wf.runAgent({ name: 'review-' + area, prompt: 'Review the ' + area + ' code', readOnly: true }))));
  wf.log({ message: 'reviewed', data: { count: findings.length } });
  const verified = await wf.phase('verify', async () => {
    const out = [];
    for (let i = 0; i < findings.length; i += 1) {
      const f = findings[i];
      const t = await wf.spawnAgent({ name: 'verify-' + i, prompt: 'Verify: ' + f.finalText, readOnly: true });
      const r = await wf.wait(t.taskId);
      out.push({ area: args.areas[i], ok: r.status === 'completed', text: r.finalText, pick: Math.random() });
    }
    return out;
  });
  const report = await wf.phase('synthesize', () =>
    wf.synthesize({ inputs: verified.map((v) => v.text), rubric: 'merge, dedupe, rank' }));
  return { report: report.text, verified, picks: verified.map((v) => v.pick) };
}`;

export const FLOW_ARGS = { areas: ['auth', 'billing', 'search', 'storage', 'api', 'ui'] };
export const FLOW_CHILDREN = 13;

export const flowStart = (runId: string, seed: number) => ({
  runId,
  workflow: { manifest: FLOW_MANIFEST, source: FLOW_SOURCE, name: FLOW_MANIFEST.name },
  args: FLOW_ARGS,
  trust: 'capability-generated' as const,
  seed,
  startTime: 1_700_000_000_000,
});

/** The uninterrupted run on the embedded engine (same agents' seed, same run id and seed). */
export async function referenceRun(
  sandbox: Sandbox,
  runId: string,
  seed: number,
): Promise<RunDone> {
  const engine = createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox });
  const { workflow, ...rest } = flowStart(runId, seed);
  const handle = await engine.start({
    ...rest,
    workflow: { manifest: workflow.manifest, source: workflow.source },
  });
  const done = await handle.done;
  await engine.close();
  return done;
}

// A parent that nests a workflow (no shipped workflow nests): one child, then `area-review` as a
// nested run (4 reviews 3 at a time, 4 verifications one by one), then a synthesis. Task ids,
// wf.runId and Math.random are in the result, so a nested run that the guest could tell apart
// from the embedded one (other ids, another run id, a replay that changed its course) shows.
export const NESTED_MANIFEST = {
  name: 'area-review',
  description: 'Review areas and verify each review.',
  phases: ['review'],
  readOnly: true,
  maxAgents: 20,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize'],
};

export const NESTED_SOURCE = `async function run(wf, args) {
  const reviews = await wf.parallel(args.areas.map((area) => () =>
    wf.runAgent({ name: 'review-' + area, prompt: 'Review the ' + area + ' code', readOnly: true })));
  const texts = [];
  for (let i = 0; i < reviews.length; i += 1) {
    const r = await wf.runAgent({ name: 'verify-' + i, prompt: 'Verify: ' + reviews[i].finalText, readOnly: true });
    texts.push(r.finalText);
  }
  return { texts, ids: reviews.map((r) => r.taskId), runId: wf.runId, pick: Math.random() };
}`;

export const PARENT_MANIFEST = { ...FLOW_MANIFEST, name: 'plan-nest-synthesize' };

export const PARENT_SOURCE = `async function run(wf, args) {
  const plan = await wf.runAgent({ name: 'plan', prompt: 'Plan a review of ' + args.areas.join(', '), readOnly: true });
  const inner = await wf.workflow('area-review', { areas: args.areas });
  const report = await wf.synthesize({ inputs: [plan.finalText].concat(inner.texts), rubric: 'merge' });
  return { plan: plan.taskId, inner, report: report.text, synthesis: report.taskId, pick: Math.random() };
}`;

export const NESTED_ARGS = { areas: ['auth', 'billing', 'search', 'storage'] };
/** Children of the parent (plan, synthesis) and of the nested run (4 + 4). */
export const NESTED_CHILDREN = { parent: 2, nested: 8 };

export const resolveNested = async (name: string) =>
  name === NESTED_MANIFEST.name ? { manifest: NESTED_MANIFEST, source: NESTED_SOURCE } : undefined;

export const nestedStart = (runId: string, seed: number) => ({
  runId,
  workflow: { manifest: PARENT_MANIFEST, source: PARENT_SOURCE, name: PARENT_MANIFEST.name },
  args: NESTED_ARGS,
  trust: 'capability-generated' as const,
  seed,
  startTime: 1_700_000_000_000,
});

/** The nesting run on the embedded engine (the nested workflow runs inside the parent's run). */
export async function nestedReferenceRun(
  sandbox: Sandbox,
  runId: string,
  seed: number,
): Promise<RunDone> {
  const engine = createEngine({
    agents: createSimulatedAgents({ seed: 3 }),
    sandbox,
    resolveWorkflow: resolveNested,
  });
  const { workflow, ...rest } = nestedStart(runId, seed);
  const handle = await engine.start({
    ...rest,
    workflow: { manifest: workflow.manifest, source: workflow.source },
  });
  const done = await handle.done;
  await engine.close();
  return done;
}
