// Parity (issue 15): every shipped workflow (built-ins and patterns) on simulated agents gives a
// byte-identical result on the embedded engine and on Restate (real server, one worker), for the
// same seed, args and start time.
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { SHIPPED_WORKFLOWS } from '@wf/patterns';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awaitRun, type RestateWorker, startRestateWorker, submitRun } from '../src/index.js';
import { type RestateServer, startRestateServer } from './helpers/server.js';

let server: RestateServer;
let sandbox: Sandbox;
let worker: RestateWorker;

beforeAll(async () => {
  process.env.RESTATE_LOGGING = 'WARN';
  server = await startRestateServer();
  sandbox = await createSandbox({ poolSize: 1 });
  worker = await startRestateWorker({
    ingress: server.ingress,
    admin: server.admin,
    agents: createSimulatedAgents({ seed: 3 }),
    sandbox,
  });
}, 90_000);

afterAll(async () => {
  await worker?.close();
  await sandbox?.close();
  await server?.stop();
});

const exampleArgs = (capsule: unknown): unknown =>
  (capsule as { inputs?: { examples?: unknown[] } }).inputs?.examples?.[0] ?? {};

it('every shipped workflow: same status and byte-identical result on both backends', async () => {
  const results: string[] = [];
  const embedded = createEngine({ agents: createSimulatedAgents({ seed: 3 }), sandbox });
  const runs = SHIPPED_WORKFLOWS.map((capsule, i) => ({
    capsule,
    runId: `parity-${capsule.manifest.name}`,
    args: exampleArgs(capsule),
    seed: 1000 + i,
    startTime: 1_700_000_000_000 + i,
  }));
  // One after the other, embedded first: parity, not load (a loaded machine can push a schema
  // validation past its 1 s bound on either side).
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
    await submitRun(server.ingress, {
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
    const remote = await awaitRun(server.ingress, r.runId);
    expect(remote.status, r.runId).toBe(local.status);
    expect(remote.error, r.runId).toEqual(local.error);
    expect(JSON.stringify(remote.result), r.runId).toBe(JSON.stringify(local.result));
    expect(remote.cost.agentsStarted, r.runId).toBe(local.cost.agentsStarted);
    results.push(r.runId);
  }
  expect(results).toHaveLength(SHIPPED_WORKFLOWS.length);
  await embedded.close();
}, 180_000);
