// 100 runs x 20 simulated agents: the embedded engine (baseline) and Restate with 1 and 2 worker
// processes behind one balancer address, and 2 workers with the deployment semaphore split over 4
// keys (semaphoreShards: 4), side by side in this run on one real server. Prints
// wall time, throughput and the per-host-call overhead against the embedded baseline, median of
// BENCH_ROUNDS rounds (default 3), after the @wf/bench calibration line. Instant agents: this
// measures the orchestration cost only.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibration } from '@wf/bench';
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { createSandbox } from '@wf/sandbox';
import { awaitRun, registerDeployment, submitRun } from '@wf/restate';
import { startBalancer } from '../test/helpers/balancer.js';
import { logLines } from '../test/helpers/counted-agents.js';
import { startRestateServer } from '../test/helpers/server.js';
import { spawnWorker } from '../test/helpers/workers.js';
import { AGENTS, CALLS_PER_RUN, manifest, source } from './workload.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SHARDS = 4;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main() {
  await calibration();
  const sandbox = await createSandbox({ poolSize: 1 });
  const dir = await mkdtemp(join(tmpdir(), 'wf-restate-bench-'));
  const server = await startRestateServer();
  const workers = await Promise.all(
    [0, 1].map(() => spawnWorker(server.ingress, join(dir, 'agents.log'), 0, 16, 1, 'built')),
  );
  // The same cap over 4 semaphore keys (one WfSemaphore key serialises every acquire and release).
  const sharded = await Promise.all(
    [0, 1].map(() => spawnWorker(server.ingress, join(dir, 'agents.log'), 0, 16, SHARDS, 'built')),
  );
  const balancer = await startBalancer([workers[0]?.port as number]);
  await registerDeployment(server.admin, balancer.url);

  const embedded = async (round: number) => {
    const engine = createEngine({
      agents: createSimulatedAgents({ seed: 3 }),
      sandbox,
      limits: { deploymentConcurrency: 16 },
    });
    const t0 = performance.now();
    const handles = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        engine.start({
          workflow: { manifest, source },
          args: { n: AGENTS },
          trust: 'trusted-package',
          runId: `e${round}-${i}`,
          seed: i,
        }),
      ),
    );
    const dones = await Promise.all(handles.map((h) => h.done));
    const ms = performance.now() - t0;
    await engine.close();
    if (dones.some((d) => d.status !== 'completed')) throw new Error('an embedded run failed');
    return ms;
  };
  const agentsLog = join(dir, 'agents.log');
  // Children each worker process started for one configuration's runs: a configuration whose
  // work did not reach all its workers would show here (the balancer keeps open connections).
  const spread = (prefix: string) => {
    const perPid = new Map<string, number>();
    for (const l of logLines(agentsLog))
      if (l.kind === 'start' && l.key.startsWith(prefix))
        perPid.set(l.pid, (perPid.get(l.pid) ?? 0) + 1);
    return [...perPid.values()].join('/');
  };
  const restate = async (label: string, round: number) => {
    const t0 = performance.now();
    const ids = Array.from({ length: RUNS }, (_, i) => `${label}${round}-${i}`);
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
    const ms = performance.now() - t0;
    if (dones.some((d) => d.status !== 'completed'))
      throw new Error(
        `a ${label} run failed: ${JSON.stringify(dones.find((d) => d.status !== 'completed'))}`,
      );
    return ms;
  };

  const times = {
    embedded: [] as number[],
    one: [] as number[],
    two: [] as number[],
    sharded: [] as number[],
  };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      times.embedded.push(await embedded(round));
      balancer.setBackends([workers[0]?.port as number], { dropOpen: true });
      times.one.push(await restate('w1-', round));
      balancer.setBackends(
        workers.map((w) => w.port),
        { dropOpen: true },
      );
      times.two.push(await restate('w2-', round));
      balancer.setBackends(
        sharded.map((w) => w.port),
        { dropOpen: true },
      );
      times.sharded.push(await restate('s2-', round));
      process.stderr.write(
        `children per worker process: 1 worker ${spread(`w1-${round}-`)}, 2 workers ${spread(`w2-${round}-`)}, ${SHARDS} keys ${spread(`s2-${round}-`)}\n`,
      );
      process.stderr.write(
        `round ${round + 1}: embedded ${times.embedded.at(-1)?.toFixed(0)} ms, 1 worker ${times.one.at(-1)?.toFixed(0)} ms, 2 workers ${times.two.at(-1)?.toFixed(0)} ms, 2 workers x ${SHARDS} keys ${times.sharded.at(-1)?.toFixed(0)} ms\n`,
      );
    }
  } finally {
    await Promise.allSettled([...workers, ...sharded].map((w) => w.kill('SIGTERM')));
    await balancer.close();
    await server.stop();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
  const base = median(times.embedded);
  const line = (name: string, xs: number[]) => {
    const ms = median(xs);
    const calls = RUNS * CALLS_PER_RUN;
    return `${name.padEnd(22)} ${ms.toFixed(0).padStart(7)} ms  ${((RUNS * 1000) / ms).toFixed(1).padStart(6)} runs/s  ${((RUNS * AGENTS * 1000) / ms).toFixed(0).padStart(5)} children/s  ${(ms / base).toFixed(2).padStart(6)}x embedded  ${(((ms - base) * 1000) / calls).toFixed(0).padStart(6)} µs/host call over embedded`;
  };
  process.stdout.write(
    `restate throughput: ${RUNS} runs x ${AGENTS} instant simulated agents, deployment cap 16, median of ${ROUNDS}\n` +
      `${line('embedded (baseline)', times.embedded)}\n${line('restate, 1 worker', times.one)}\n${line('restate, 2 workers', times.two)}\n${line(`2 workers, ${SHARDS} keys`, times.sharded)}\n` +
      `2 workers / 1 worker: ${(median(times.two) / median(times.one)).toFixed(2)}x wall time; ${SHARDS} semaphore keys / 1: ${(median(times.sharded) / median(times.two)).toFixed(2)}x\n` +
      `rounds (ms): embedded ${times.embedded.map((x) => x.toFixed(0)).join(', ')}; 1 worker ${times.one.map((x) => x.toFixed(0)).join(', ')}; 2 workers ${times.two.map((x) => x.toFixed(0)).join(', ')}; ${SHARDS} keys ${times.sharded.map((x) => x.toFixed(0)).join(', ')}; load average at the end ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}\n`,
  );
}

await main();
