// Parity: every shipped workflow (built-ins and patterns) on simulated agents gives a
// byte-identical result on the embedded engine and on Restate (real server, one worker), for the
// same seed, args and start time.
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { SHIPPED_WORKFLOWS } from '@wf/patterns';
import { expect, it } from 'vitest';
import { awaitRun, JOURNAL_OBJECT, submitRun } from '../src/index.js';
import { nestedReferenceRun, nestedStart, resolveNested } from './helpers/flow.js';
import { useSingleWorker } from './helpers/single-worker.js';

const c = useSingleWorker({
  agents: createSimulatedAgents({ seed: 3 }),
  resolveWorkflow: resolveNested,
});

const exampleArgs = (capsule: unknown): unknown =>
  (capsule as { inputs?: { examples?: unknown[] } }).inputs?.examples?.[0] ?? {};

it('every shipped workflow: same status and byte-identical result on both backends', async () => {
  const results: string[] = [];
  const embedded = createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox: c.sandbox });
  const runs = SHIPPED_WORKFLOWS.map((capsule, i) => ({
    capsule,
    runId: `parity-${capsule.manifest.name}`,
    args: exampleArgs(capsule),
    seed: 1000 + i,
    startTime: 1_700_000_000_000 + i,
  }));
  // Warm-up on both sides (discarded): the first structured answers start the schema workers,
  // and a cold start on a loaded machine can exceed the 1 s validation bound on either side.
  const first = runs[0];
  if (first) {
    const warm = { manifest: first.capsule.manifest, source: first.capsule.source };
    await (await embedded.start({ workflow: warm, args: first.args, trust: 'trusted-package' }))
      .done;
    await submitRun(c.server.ingress, {
      runId: 'parity-warm-up',
      workflow: warm,
      args: first.args,
      trust: 'trusted-package',
    });
    await awaitRun(c.server.ingress, 'parity-warm-up');
  }
  // One after the other, embedded first: parity, not load. (The schema workers' limit is CPU
  // time, so a loaded machine does not change a result on either side.)
  for (const r of runs) {
    const handle = await embedded.start({
      workflow: { manifest: r.capsule.manifest, source: r.capsule.source },
      args: r.args,
      trust: 'trusted-package',
      runId: r.runId,
      seed: r.seed,
      startTime: r.startTime,
    });
    const local = await handle.done;
    await submitRun(c.server.ingress, {
      runId: r.runId,
      workflow: {
        manifest: r.capsule.manifest,
        source: r.capsule.source,
        name: r.capsule.manifest.name,
      },
      args: r.args,
      trust: 'trusted-package',
      seed: r.seed,
      startTime: r.startTime,
    });
    const remote = await awaitRun(c.server.ingress, r.runId);
    expect(remote.status, r.runId).toBe(local.status);
    expect(remote.error, r.runId).toEqual(local.error);
    expect(JSON.stringify(remote.result), r.runId).toBe(JSON.stringify(local.result));
    expect(remote.cost.agentsStarted, r.runId).toBe(local.cost.agentsStarted);
    results.push(r.runId);
  }
  expect(results).toHaveLength(SHIPPED_WORKFLOWS.length);
  await embedded.close();
}, 180_000);

// No shipped workflow nests: this one does (wf.workflow as its own WfRun invocation on Restate).
it('a nesting workflow: same status, byte-identical result and child count on both backends', async () => {
  const local = await nestedReferenceRun(c.sandbox, 'parity-nested', 4242);
  await submitRun(c.server.ingress, nestedStart('parity-nested', 4242));
  const remote = await awaitRun(c.server.ingress, 'parity-nested');
  expect(local.status).toBe('completed');
  expect(remote.status).toBe(local.status);
  expect(JSON.stringify(remote.result)).toBe(JSON.stringify(local.result));
  expect(remote.cost.agentsStarted).toBe(local.cost.agentsStarted);
}, 120_000);

it('the durable journal keeps one execution: consecutive deliveries only, a different copy is refused', async () => {
  const entry = (settleSeq: number, value: unknown) => ({
    seq: settleSeq,
    settleSeq,
    method: 'log',
    input: { message: 'x' },
    outcome: { ok: true, value },
    settledAt: 1_700_000_000_000 + settleSeq,
  });
  const base = `${c.server.ingress}/${JOURNAL_OBJECT}/journal-check`;
  const append = async (batch: unknown[]) =>
    (await fetch(`${base}/append`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch),
    }).then((r) => r.json())) as { ok: boolean; count: number };
  expect(await append([entry(1, 'a'), entry(2, 'b')])).toEqual({ ok: true, count: 2 });
  // a retried request: the same copies are accepted again
  expect(await append([entry(2, 'b'), entry(3, 'c')])).toEqual({ ok: true, count: 3 });
  // another attempt's different delivery #3, and a gap, are refused
  expect(await append([entry(3, 'other')])).toEqual({ ok: false, count: 3 });
  expect(await append([entry(5, 'e')])).toEqual({ ok: false, count: 3 });
  const stored = (await fetch(`${base}/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'null',
  }).then((r) => r.json())) as { outcome: { value: unknown } }[];
  expect(stored.map((e) => e.outcome.value)).toEqual(['a', 'b', 'c']);
});
