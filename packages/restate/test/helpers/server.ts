// The real Restate server for the tests and the bench: started from node_modules on 127.0.0.1
// with free ports and a temp base dir, telemetry off, one partition, small RocksDB memory.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export function serverBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@restatedev/restate-server/package.json');
  return createRequire(pkg).resolve(
    `@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`,
  );
}

export interface RestateServer {
  readonly ingress: string;
  readonly admin: string;
  readonly baseDir: string;
  /** SIGKILLs the server (its data dir stays). */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data dir; resolves when healthy. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  log(): string;
  /** The server process's CPU time so far (user + system, ms), from /proc. */
  cpuMs(): number;
}

export async function startRestateServer(): Promise<RestateServer> {
  const baseDir = await mkdtemp(join(tmpdir(), 'wf-restate-'));
  const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
  const ingress = `http://127.0.0.1:${ingressPort}`;
  const admin = `http://127.0.0.1:${adminPort}`;
  let proc: ChildProcess | undefined;
  let out = '';
  const launch = async () => {
    proc = spawn(serverBinary(), ['--bind-ip', '127.0.0.1', '--base-dir', baseDir, '--no-logo'], {
      env: {
        ...process.env,
        RESTATE_DISABLE_TELEMETRY: 'true',
        RESTATE_LISTEN_MODE: 'tcp',
        RESTATE_BIND_PORT: String(nodePort),
        RESTATE_INGRESS__BIND_PORT: String(ingressPort),
        RESTATE_ADMIN__BIND_PORT: String(adminPort),
        RESTATE_DEFAULT_NUM_PARTITIONS: '1',
        RESTATE_BOOTSTRAP_NUM_PARTITIONS: '1',
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
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`restate-server exited: ${out}`);
      try {
        const [a, i] = await Promise.all([
          fetch(`${admin}/health`),
          fetch(`${ingress}/restate/health`),
        ]);
        if (a.ok && i.ok) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`restate-server not healthy after 60 s: ${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    ingress,
    admin,
    baseDir,
    kill,
    restart: launch,
    async stop() {
      const p = proc;
      if (p && p.exitCode === null && p.signalCode === null) {
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      await rm(baseDir, { recursive: true, force: true });
    },
    log: () => out,
    cpuMs: () => procCpuMs(proc?.pid),
  };
}

/** User + system CPU time of a process (Linux /proc), in ms; 0 when it cannot be read. */
export function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second here).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
