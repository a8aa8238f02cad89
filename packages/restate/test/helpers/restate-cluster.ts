// A three-node Restate cluster on 127.0.0.1 for the node-loss test: one config file per node
// (replicated log and metadata, replication 2, every role on every node), the first node
// provisioning the cluster, free ports, temp base dirs, telemetry off, one partition.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, serverBinary } from './server.js';

export interface ClusterNode {
  readonly name: string;
  /** The node-to-node address; it also serves the node's /metrics and /health. */
  readonly node: string;
  readonly ingress: string;
  readonly admin: string;
  /** SIGKILLs the node (its data dir stays). */
  kill(): Promise<void>;
  alive(): boolean;
  log(): string;
}

export interface RestateCluster {
  readonly nodes: readonly ClusterNode[];
  /** The live node leading the (one) partition, from its metrics; undefined while none does. */
  leader(): Promise<ClusterNode | undefined>;
  stop(): Promise<void>;
}

/** Whether a node's metrics say it leads a partition now. */
async function leads(node: ClusterNode): Promise<boolean> {
  if (!node.alive()) return false;
  try {
    const text = await (await fetch(`${node.node}/metrics`)).text();
    return /^restate_num_active_partition_leaders\{[^}]*\} [1-9]/m.test(text);
  } catch {
    return false;
  }
}

export async function startRestateCluster(size = 3): Promise<RestateCluster> {
  const root = await mkdtemp(join(tmpdir(), 'wf-restate-cluster-'));
  const ports = [];
  for (let i = 0; i < size; i += 1)
    ports.push({ node: await freePort(), ingress: await freePort(), admin: await freePort() });
  const first = `http://127.0.0.1:${ports[0]?.node}`;
  const procs: ChildProcess[] = [];
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < size; i += 1) {
    const p = ports[i] as { node: number; ingress: number; admin: number };
    const name = `n${i + 1}`;
    const config = join(root, `${name}.toml`);
    await writeFile(
      config,
      [
        'cluster-name = "wf-test"',
        `node-name = "${name}"`,
        `base-dir = "${join(root, name)}"`,
        `auto-provision = ${i === 0}`,
        'default-replication = 2',
        'default-num-partitions = 1',
        `bind-address = "127.0.0.1:${p.node}"`,
        `advertised-address = "http://127.0.0.1:${p.node}"`,
        'roles = ["http-ingress", "admin", "worker", "log-server", "metadata-server"]',
        '[bifrost]',
        'default-provider = "replicated"',
        '[metadata-client]',
        `addresses = ["${first}"]`,
        '[ingress]',
        `bind-address = "127.0.0.1:${p.ingress}"`,
        '[admin]',
        `bind-address = "127.0.0.1:${p.admin}"`,
        '',
      ].join('\n'),
    );
    let out = '';
    const proc = spawn(serverBinary(), ['-c', config, '--no-logo'], {
      env: {
        ...process.env,
        RESTATE_DISABLE_TELEMETRY: 'true',
        RESTATE_LISTEN_MODE: 'tcp',
        RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE: '64MB',
        RESTATE_LOG_FILTER: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      out = (out + String(d)).slice(-20_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    procs.push(proc);
    nodes.push({
      name,
      node: `http://127.0.0.1:${p.node}`,
      ingress: `http://127.0.0.1:${p.ingress}`,
      admin: `http://127.0.0.1:${p.admin}`,
      alive: () => proc.exitCode === null && proc.signalCode === null,
      kill: async () => {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGKILL');
        await exited;
      },
      log: () => out,
    });
  }
  const stop = async () => {
    await Promise.all(
      procs.map(async (proc) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        // A node asked to stop may take longer than 5 s: SIGKILL after a while.
        const t = setTimeout(() => proc.kill('SIGKILL'), 8_000);
        await exited;
        clearTimeout(t);
      }),
    );
    await rm(root, { recursive: true, force: true });
  };
  const leader = async () => {
    for (const node of nodes) if (await leads(node)) return node;
    return undefined;
  };
  const deadline = Date.now() + 90_000;
  for (const node of nodes) {
    for (;;) {
      if (!node.alive()) {
        await stop();
        throw new Error(`restate node ${node.name} exited: ${node.log()}`);
      }
      try {
        const [a, i] = await Promise.all([
          fetch(`${node.admin}/health`),
          fetch(`${node.ingress}/restate/health`),
        ]);
        if (a.ok && i.ok) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`restate node ${node.name} not healthy after 90 s: ${node.log()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // Ready once a node leads the partition (the cluster is provisioned and serving).
  while (!(await leader())) {
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`no partition leader after 90 s: ${nodes.map((n) => n.log()).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { nodes, leader, stop };
}
