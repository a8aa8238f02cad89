// Worker processes for the failover and concurrency tests, spawned from test/fixtures/worker.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './server.js';

const fixture = fileURLToPath(new URL('../fixtures/worker.ts', import.meta.url));
const pkgDir = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  readonly port: number;
  readonly pid: number;
  readonly proc: ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
  output(): string;
}

export async function spawnWorker(
  ingress: string,
  log: string,
  delayMs: number,
  capacity: number,
  shards = 1,
  /** 'source': the packages' TypeScript (the tests); 'built': their dist/, as users run them (benches). */
  from: 'source' | 'built' = 'source',
  /** `port`: listen there (a restart in place); `store`: a disk run store's project directory. */
  where: { port?: number; store?: string } = {},
): Promise<WorkerProcess> {
  const port = where.port ?? (await freePort());
  const proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ...(from === 'source' ? ['--conditions=@wf/source'] : []),
      fixture,
      ingress,
      String(port),
      log,
      String(delayMs),
      String(capacity),
      String(shards),
      where.store ?? '',
    ],
    { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout?.on('data', (d) => {
    out += String(d);
  });
  proc.stderr?.on('data', (d) => {
    out = (out + String(d)).slice(-20_000);
  });
  const deadline = Date.now() + 60_000;
  while (!out.includes('ready ')) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`worker did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    pid: proc.pid as number,
    proc,
    async kill(signal = 'SIGKILL') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill(signal);
      await exited;
    },
    output: () => out,
  };
}
