import { createSimulatedAgents } from '@wf/engine';
import { createSandbox } from '@wf/sandbox';
import { awaitRun, registerDeployment, startRestateWorker, submitRun } from '../src/index.ts';
import { startRestateServer } from '../test/helpers/server.ts';
import { flowStart } from '../test/helpers/flow.ts';
const s = await startRestateServer();
const sandbox = await createSandbox({ poolSize: 1 });
const w = await startRestateWorker({
  ingress: s.ingress,
  agents: createSimulatedAgents({ seed: 3, delayMs: 300 }),
  sandbox,
  register: false,
});
const r1 = await registerDeployment(s.admin, w.url);
await submitRun(s.ingress, flowStart('f1', 1));
await new Promise((r) => setTimeout(r, 1000));
const r2 = await registerDeployment(s.admin, w.url);
console.log('ids', r1.id, r2.id);
const d = await (await fetch(`${s.admin}/deployments`)).json();
console.log(JSON.stringify(d).slice(0, 400));
const done = await awaitRun(s.ingress, 'f1');
console.log('done', done.status);
await w.close();
await sandbox.close();
await s.stop();
process.exit(0);
