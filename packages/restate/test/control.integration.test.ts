// Operating a Restate run from outside (controlRun, the CLI's wf stop / pause / resume): a
// stopped run stops its remote children where they run (they end `stopped` long before their
// time, and give their deployment slots back), and a paused run starts no child until it is
// resumed, then completes with the uninterrupted result.
import { type AgentProvider, createEngine, createSimulatedAgents } from '@wf/engine';
import { expect, it } from 'vitest';
import { awaitRun, controlRun, fetchRun, submitRun } from '../src/index.js';
import { useSingleWorker } from './helpers/single-worker.js';

const log: { kind: 'start' | 'end'; name: string; status?: string; at: number }[] = [];

function loggedAgents(): AgentProvider {
  const inner = createSimulatedAgents({
    seed: 3,
    respond: (r) => ({ delayMs: r.name.startsWith('slow') ? 60_000 : 300 }),
  });
  return {
    ...inner,
    async start(request, signal) {
      log.push({ kind: 'start', name: request.name, at: Date.now() });
      const handle = await inner.start(request, signal);
      void handle.result.then((r) =>
        log.push({ kind: 'end', name: request.name, status: r.status, at: Date.now() }),
      );
      return handle;
    },
  };
}

const s = useSingleWorker({ agents: loggedAgents(), deploymentConcurrency: 4 });

const manifest = {
  name: 'controlled',
  description: 'Children to stop and pause.',
  phases: ['work'],
  readOnly: true,
  maxAgents: 20,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
};

async function until(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a stopped run stops its remote children where they run, and gives their slots back', async () => {
  const source = `async function run(wf) {
    return wf.parallel(['slow-a', 'slow-b'].map((name) => () => wf.runAgent({ name, prompt: 'p', readOnly: true })));
  }`;
  await submitRun(s.server.ingress, {
    runId: 'stop-1',
    workflow: { manifest, source },
    trust: 'capability-generated',
  });
  await until('both children to start', () => log.filter((l) => l.kind === 'start').length >= 2);
  const asked = Date.now();
  await controlRun(s.server.ingress, 'stop-1', { run: 'stopping', reason: 'the user stopped it' });
  const done = await awaitRun(s.server.ingress, 'stop-1');
  expect(done.status).toBe('stopped');
  // The children, 60 s long, ended stopped on the worker soon after (they ran to their end
  // before: a stop only ended the wait).
  await until('both children to end', () => log.filter((l) => l.kind === 'end').length >= 2);
  for (const end of log.filter((l) => l.kind === 'end')) {
    expect(end.status).toBe('stopped');
    expect(end.at - asked).toBeLessThan(30_000);
  }
  const slots = await fetch(`${s.server.ingress}/WfSemaphore/deployment/state`, {
    method: 'POST',
  });
  expect(((await slots.json()) as { held: string[] }).held).toEqual([]);
  const record = await fetchRun(s.server.ingress, 'stop-1');
  expect(record?.finish?.status).toBe('stopped');
}, 60_000);

it('a paused run starts no child until resumed, then completes with the uninterrupted result', async () => {
  log.length = 0;
  const source = `async function run(wf) {
    const out = [];
    for (let i = 0; i < 6; i += 1) out.push((await wf.runAgent({ name: 'step-' + i, prompt: 'p' + i, readOnly: true })).finalText);
    return { out, pick: Math.random() };
  }`;
  const start = {
    runId: 'pause-1',
    workflow: { manifest, source },
    trust: 'capability-generated' as const,
    seed: 5,
    startTime: 1_700_000_000_000,
  };
  const engine = createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox: s.sandbox });
  const reference = await (await engine.start({ ...start, workflow: { manifest, source } })).done;
  await engine.close();

  await submitRun(s.server.ingress, start);
  await until('two children to end', () => log.filter((l) => l.kind === 'end').length >= 2);
  await controlRun(s.server.ingress, 'pause-1', { run: 'paused' });
  // The worker reads the control within its poll interval; a child launched meanwhile may run.
  await new Promise((r) => setTimeout(r, 2_500));
  const startedWhilePaused = log.filter((l) => l.kind === 'start').length;
  await new Promise((r) => setTimeout(r, 2_500));
  expect(log.filter((l) => l.kind === 'start').length).toBe(startedWhilePaused);
  expect(startedWhilePaused).toBeLessThan(6);
  const paused = await fetchRun(s.server.ingress, 'pause-1');
  expect(paused?.events.some((e) => e.type === 'workflow-paused')).toBe(true);

  await controlRun(s.server.ingress, 'pause-1', { run: 'running' });
  const done = await awaitRun(s.server.ingress, 'pause-1');
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toBe(JSON.stringify(reference.result));
}, 60_000);
