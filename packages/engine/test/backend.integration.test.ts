// The execution backend port: a backend's journal is replayed when the same run id
// executes again (a continued run), appends arrive in delivery order, backend.agents replaces
// options.agents, and backend.deployment is the deployment-wide cap children acquire.
import type { Sandbox } from '@wf/sandbox';
import { expect, it } from 'vitest';
import {
  type ExecutionBackend,
  type JournalEntry,
  createEngine,
  createSimulatedAgents,
} from '../src/index.js';
import { REVIEW_ARGS, REVIEW_MANIFEST, REVIEW_SOURCE } from './fixtures/review-flow.js';
import { runToEnd, shareSandbox } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

const start = (runId: string) => ({
  workflow: { manifest: REVIEW_MANIFEST, source: REVIEW_SOURCE },
  args: REVIEW_ARGS,
  trust: 'capability-generated' as const,
  runId,
  seed: 42,
  startTime: 1_700_000_000_000,
});

/** A backend whose journal is an array, like a durable store seen from one executor. */
function arrayBackend(stored: JournalEntry[], extra: Partial<ExecutionBackend> = {}) {
  const appended: number[] = [];
  const backend: ExecutionBackend = {
    name: 'array',
    async openJournal() {
      return {
        entries: [...stored],
        append(entry) {
          appended.push(entry.settleSeq);
          if (!stored.some((e) => e.settleSeq === entry.settleSeq)) stored.push(entry);
        },
      };
    },
    ...extra,
  };
  return { backend, appended };
}

it('a run continued on its backend journal replays it: no journaled child runs again, same result', async () => {
  const stored: JournalEntry[] = [];
  const first = arrayBackend(stored);
  const agents1 = createSimulatedAgents({ seed: 3 });
  const full = await runToEnd(
    createEngine({ agents: agents1, sandbox, backend: first.backend }),
    start('run-x'),
  );
  expect(full.done.status).toBe('completed');
  // delivery order, each entry once
  expect(first.appended).toEqual(stored.map((_, i) => i + 1));
  expect(full.events[0]?.data.backend).toBe('array');

  // The executor was lost after 9 deliveries: the next one continues from that prefix.
  const prefix = stored.filter((e) => e.settleSeq <= 9);
  const journaledChildren = prefix
    .filter((e) => e.outcome.ok && e.method === 'runAgent')
    .map((e) => (e.outcome as { value: { value: { name: string } } }).value.value.name);
  expect(journaledChildren.length).toBeGreaterThanOrEqual(6);
  const second = arrayBackend(prefix);
  const agents2 = createSimulatedAgents({ seed: 3 });
  const continued = await runToEnd(
    createEngine({ agents: agents2, sandbox, backend: second.backend }),
    start('run-x'),
  );
  expect(continued.done.status).toBe('completed');
  expect(continued.done.result).toEqual(full.done.result);
  const rerun = agents2.requests().map((r) => r.name);
  for (const name of journaledChildren) expect(rerun).not.toContain(name);
  expect(agents2.stats().started).toBe(agents1.stats().started - journaledChildren.length);
  expect(prefix.map((e) => e.settleSeq)).toEqual(stored.map((_, i) => i + 1));
}, 60_000);

it('backend.agents launches the children and backend.deployment is acquired once per child', async () => {
  const unused = createSimulatedAgents({ seed: 1 });
  const used = createSimulatedAgents({ seed: 3 });
  let acquired = 0;
  let held = 0;
  let peak = 0;
  const backend: ExecutionBackend = {
    name: 'custom',
    agents: used,
    deployment: {
      async acquire() {
        acquired += 1;
        held += 1;
        peak = Math.max(peak, held);
        return () => {
          held -= 1;
        };
      },
    },
  };
  const out = await runToEnd(createEngine({ agents: unused, sandbox, backend }), start('run-y'));
  expect(out.done.status).toBe('completed');
  expect(unused.stats().started).toBe(0);
  expect(used.stats().started).toBe(out.done.cost.agentsStarted);
  expect(acquired).toBe(out.done.cost.agentsStarted);
  expect(held).toBe(0);
  expect(peak).toBeLessThanOrEqual(REVIEW_MANIFEST.maxConcurrency);
}, 60_000);

it('backend.nested runs wf.workflow as its own run: the guest sees the same ids, result and limits', async () => {
  const m = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: 'A nested-workflow check.',
    phases: ['work'],
    readOnly: true,
    maxAgents: 20,
    maxConcurrency: 2,
    patterns: ['fan-out-and-synthesize'],
    ...extra,
  });
  const inner = {
    manifest: m('inner-flow'),
    source: `async function run(wf, args) {
      const rs = await wf.parallel(args.names.map((n) => () => wf.runAgent({ name: n, prompt: 'p ' + n })));
      return { ids: rs.map((r) => r.taskId), texts: rs.map((r) => r.finalText), runId: wf.runId, pick: Math.random() };
    }`,
  };
  const nesting = {
    manifest: m('nesting-flow'),
    source: `async function run(wf) { return await wf.workflow('inner-flow', { names: ['x'] }); }`,
  };
  const resolveWorkflow = async (name: string) =>
    name === 'inner-flow' ? inner : name === 'nesting-flow' ? nesting : undefined;
  const parent = (body: string, extra: Record<string, unknown> = {}) => ({
    workflow: {
      manifest: m('parent-flow', extra),
      source: `async function run(wf, args) {\n${body}\n}`,
    },
    trust: 'capability-generated' as const,
    runId: 'nest-1',
    seed: 9,
    startTime: 1_700_000_000_000,
  });
  const flow = parent(`
    const a = await wf.runAgent({ name: 'first', prompt: 'p' });
    const n = await wf.workflow('inner-flow', { names: ['b', 'c', 'd'] });
    const z = await wf.synthesize({ inputs: n.texts, rubric: 'r' });
    return { a: a.taskId, n, z: z.taskId, pick: Math.random() };`);

  const embedded = await runToEnd(
    createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox, resolveWorkflow }),
    flow,
  );
  expect(embedded.done.status).toBe('completed');

  const calls: unknown[] = [];
  const backend: ExecutionBackend = {
    name: 'nesting',
    async nested(call) {
      calls.push({ callId: call.callId, scope: call.scope, limits: call.limits });
      const engine = createEngine({
        agents: createSimulatedAgents({ seed: 3 }),
        sandbox,
        resolveWorkflow,
      });
      const { done } = await runToEnd(engine, {
        workflow: { manifest: call.workflow.manifest, source: call.workflow.source },
        args: call.args,
        trust: 'capability-generated',
        runId: `${call.parentRunId}.wf${call.callId}`,
        seed: call.seed,
        startTime: call.startTime,
        nested: call.scope,
        limits: call.limits,
      });
      return done;
    },
  };
  const engine = createEngine({
    agents: createSimulatedAgents({ seed: 3 }),
    sandbox,
    resolveWorkflow,
    backend,
  });
  const onBackend = await runToEnd(engine, flow);
  expect(onBackend.done.status).toBe('completed');
  expect(JSON.stringify(onBackend.done.result)).toBe(JSON.stringify(embedded.done.result));
  expect(onBackend.done.cost.agentsStarted).toBe(embedded.done.cost.agentsStarted);
  expect(calls).toEqual([
    {
      callId: 2,
      scope: { guestRunId: 'nest-1', firstTaskSeq: 1, budgetTotal: null },
      limits: { maxAgents: 19 },
    },
  ]);

  // the nested run is a nested scope: it cannot nest again, and that fails the parent
  const twice = await runToEnd(engine, {
    ...parent(`return await wf.workflow('nesting-flow', {});`),
    runId: 'nest-2',
  });
  expect(twice.done.status).toBe('failed');
  expect(twice.done.error?.code).toBe('WF_ENGINE_NESTING_LIMIT');
  // the parent's maxAgents bounds the nested run's children, and that fails the parent too
  const capped = await runToEnd(engine, {
    ...parent(
      `await wf.runAgent({ name: 'a', prompt: 'p' }); return await wf.workflow('inner-flow', { names: ['b', 'c'] });`,
      { maxAgents: 2 },
    ),
    runId: 'nest-3',
  });
  expect(capped.done.status).toBe('failed');
  expect(capped.done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
});
