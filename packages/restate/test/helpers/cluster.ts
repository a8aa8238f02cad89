// Two worker processes behind one balancer address, registered with a fresh Restate server, plus
// one real sandbox for the embedded reference runs: the setup the cluster and failover tests share.
// Registers the file's beforeAll/afterAll; `workers` may be replaced by a test (afterAll stops
// whichever are current).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll } from 'vitest';
import { registerDeployment } from '../../src/index.js';
import { type Balancer, startBalancer } from './balancer.js';
import { type RestateServer, startRestateServer } from './server.js';
import { spawnWorker, type WorkerProcess } from './workers.js';

export interface Cluster {
  server: RestateServer;
  balancer: Balancer;
  sandbox: Sandbox;
  dir: string;
  /** The agents' log all workers append to (see counted-agents.ts). */
  log: string;
  workers: WorkerProcess[];
}

/** `prefix` names the temp dir; `delayMs`, `capacity` and `shards` go to each worker. */
export function useCluster(prefix: string, delayMs: number, capacity: number, shards = 1): Cluster {
  const c = { workers: [] } as unknown as Cluster;
  beforeAll(async () => {
    c.dir = await mkdtemp(join(tmpdir(), prefix));
    c.log = join(c.dir, 'agents.log');
    c.server = await startRestateServer();
    c.workers = await Promise.all(
      [0, 1].map(() => spawnWorker(c.server.ingress, c.log, delayMs, capacity, shards)),
    );
    c.balancer = await startBalancer(c.workers.map((w) => w.port));
    await registerDeployment(c.server.admin, c.balancer.url);
    c.sandbox = await createSandbox({ poolSize: 1 });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(c.workers.map((w) => w.kill('SIGTERM')));
    await c.balancer?.close();
    await c.sandbox?.close();
    await c.server?.stop();
    if (c.dir) await rm(c.dir, { recursive: true, force: true });
  });
  return c;
}

/**
 * Replaces a killed worker: a new one (`delayMs`, capacity 16) joins behind the same address, so
 * the cluster keeps two workers.
 */
export async function replaceWorker(
  c: Cluster,
  victim: WorkerProcess | undefined,
  delayMs: number,
): Promise<void> {
  const survivor = c.workers.filter((w) => w !== victim);
  const replacement = await spawnWorker(c.server.ingress, c.log, delayMs, 16);
  c.workers = [...survivor, replacement];
  c.balancer.setBackends(c.workers.map((w) => w.port));
}
