// Where a child's wall time goes on Restate: one in-process worker behind a counting HTTP proxy
// (the server's requests to the worker, by service/handler, with their durations) and a count of
// the worker's own ingress calls (by path), on BENCH_RUNS (default 5) runs x 20 instant agents.
// `node --import tsx --conditions=@wf/source bench/profile.ts` (a diagnostic, not a benchmark:
// the proxy adds a hop; compare counts, and wall time only against throughput.bench.ts).
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createSimulatedAgents } from '@wf/engine';
import { createSandbox } from '@wf/sandbox';
import { awaitRun, registerDeployment, startRestateWorker, submitRun } from '@wf/restate';
import { startRestateServer } from '../test/helpers/server.js';
import { AGENTS, manifest, source } from './workload.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

type Stat = { n: number; ms: number[] };
const stats = new Map<string, Stat>();
const note = (k: string, ms: number) => {
  const s = stats.get(k) ?? { n: 0, ms: [] };
  s.n += 1;
  s.ms.push(ms);
  stats.set(k, s);
};
// Outgoing: the worker's calls to the ingress (launch, attach, journal).
const origRequest = http.request;
(http as { request: typeof http.request }).request = ((
  ...args: Parameters<typeof http.request>
) => {
  const u = args[0] as URL;
  const path = String(u.pathname ?? u)
    .replace(/\/WfAgent\/[^/]+\//, '/WfAgent/<key>/')
    .replace(/\/WfJournal\/[^/]+\//, '/WfJournal/<run>/')
    .replace(/\/invocation\/[^/]+\//, '/invocation/<id>/')
    .replace(/\/WfRun\/[^/]+\//, '/WfRun/<run>/');
  const t0 = performance.now();
  const req = (origRequest as (...a: unknown[]) => http.ClientRequest)(...args);
  req.on('response', (res) => res.on('end', () => note(`out ${path}`, performance.now() - t0)));
  return req;
}) as typeof http.request;
syncBuiltinESMExports();

const server = await startRestateServer();
const sandbox = await createSandbox({ poolSize: 1 });
const worker = await startRestateWorker({
  ingress: server.ingress,
  agents: createSimulatedAgents({ seed: 3 }),
  sandbox,
  register: false,
  deploymentConcurrency: 16,
});
// Incoming: the server's invocation requests to the worker, through a proxy that times them.
const proxy = http.createServer((req, res) => {
  const t0 = performance.now();
  const key = `in ${req.url?.replace(/^\/invoke\//, '')}`;
  const up = origRequest(
    {
      host: '127.0.0.1',
      port: worker.port,
      path: req.url,
      method: req.method,
      headers: req.headers,
    },
    (ur) => {
      res.writeHead(ur.statusCode ?? 500, ur.headers);
      ur.pipe(res);
      ur.on('end', () => note(key, performance.now() - t0));
    },
  );
  up.on('error', () => res.destroy());
  req.pipe(up);
});
proxy.requestTimeout = 0;
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
await registerDeployment(server.admin, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const cpu0 = { server: server.cpuMs(), worker: process.cpuUsage() };
const t0 = performance.now();
const ids = Array.from({ length: RUNS }, (_, i) => `p-${i}`);
await Promise.all(
  ids.map((runId, i) =>
    submitRun(server.ingress, {
      runId,
      workflow: { manifest, source },
      args: { n: AGENTS },
      trust: 'trusted-package',
      seed: i,
      startTime: 1_700_000_000_000,
    }),
  ),
);
const dones = await Promise.all(ids.map((id) => awaitRun(server.ingress, id)));
const wall = performance.now() - t0;
const children = RUNS * AGENTS;
const workerCpu = process.cpuUsage(cpu0.worker);
const serverCpuMs = server.cpuMs() - cpu0.server;
const workerCpuMs = (workerCpu.user + workerCpu.system) / 1000;
process.stdout.write(
  `${RUNS} runs x ${AGENTS} instant children, deployment cap 16: ${wall.toFixed(0)} ms wall, ${(wall / children).toFixed(1)} ms per child; statuses ${[...new Set(dones.map((d) => d.status))].join(',')}\n` +
    `CPU per child (robust under load, unlike wall): server ${(serverCpuMs / children).toFixed(1)} ms, worker (with this proxy) ${(workerCpuMs / children).toFixed(1)} ms\n` +
    'requests (in: server -> worker, by handler; out: worker -> ingress, by path), per child, median and summed duration:\n',
);
for (const [k, s] of [...stats].sort()) {
  process.stdout.write(
    `  ${k.padEnd(46)} ${String(s.n).padStart(5)}  ${(s.n / children).toFixed(2).padStart(5)}/child  median ${med(s.ms).toFixed(1).padStart(7)} ms  total ${s.ms
      .reduce((a, b) => a + b, 0)
      .toFixed(0)
      .padStart(7)} ms\n`,
  );
}
await worker.close();
proxy.close();
await sandbox.close();
await server.stop();
process.exit(0);
