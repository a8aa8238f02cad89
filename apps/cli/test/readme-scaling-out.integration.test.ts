// The README's "Scaling out" runs as written: every command of its sh blocks, verbatim, with
// bash, from a directory laid out as a clone (./wf, packages/, node_modules, package.json linked
// to this one), on the ports it names. The server, the balancer and the workers are the blocks
// before the last; the last block's commands must exit 0. A command that needs a download (npx
// without -y), listens beyond 127.0.0.1 or is not found in a clone (wf instead of ./wf) fails here.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { REPO } from './helpers/wf-cli.js';

/** The sh blocks of the README's "Scaling out" section, each as its command lines. */
export function scalingOutBlocks(readme: string): string[][] {
  const start = readme.indexOf('## Scaling out');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    String(m[1])
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#')),
  );
}

const services: ChildProcess[] = [];
let dir: string | undefined;

afterAll(async () => {
  // Each command ran in its own process group: the group goes, whatever it started (npx's
  // restate-server child included), before its directory does.
  for (const p of services.reverse()) signalGroup(p, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (services.some(alive)) {
    if (Date.now() > deadline) for (const p of services) signalGroup(p, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function signalGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(p.pid as number), signal);
  } catch {
    // gone
  }
}

function alive(p: ChildProcess): boolean {
  try {
    process.kill(-(p.pid as number), 0);
    return true;
  } catch {
    return false;
  }
}

/** An address of this machine other than loopback, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function sh(line: string, cwd: string): { proc: ChildProcess; out: () => string } {
  const proc = spawn('bash', ['-c', line], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let text = '';
  proc.stdout?.on('data', (d) => {
    text += String(d);
  });
  proc.stderr?.on('data', (d) => {
    text += String(d);
  });
  return { proc, out: () => text };
}

async function until(what: string, test: () => boolean | Promise<boolean>, ms = 90_000) {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const healthy = async (url: string) => {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
};

it('README "Scaling out" runs verbatim: server, balancer, two workers, a run that completes', async () => {
  const blocks = scalingOutBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  for (const port of [8080, 9070, 5122, 9080, 9081, 9082])
    expect(await free(port), `port ${port}, which the README's commands use, is free`).toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'wf-readme-'));
  for (const name of ['wf', 'packages', 'node_modules', 'package.json'])
    symlinkSync(join(REPO, name), join(dir, name));
  const cwd = dir;

  const background = blocks.slice(0, -1).flat();
  for (const line of background) {
    const { proc, out } = sh(line, cwd);
    services.push(proc);
    const exited = () => proc.exitCode !== null || proc.signalCode !== null;
    if (line.includes('restate-server'))
      await until(`the server (${line})`, async () => {
        if (exited()) throw new Error(`${line} exited: ${out()}`);
        return healthy('http://127.0.0.1:9070/health');
      });
    else if (line.includes('wf worker'))
      await until(`the worker (${line})`, () => {
        if (exited()) throw new Error(`${line} exited: ${out()}`);
        return out().includes('wf worker: serving');
      });
    else
      await until(`${line} to keep running`, async () => {
        if (exited()) throw new Error(`${line} exited: ${out()}`);
        return !(await free(9080));
      });
  }
  // The server listens on 127.0.0.1 only.
  const outside = outsideAddress();
  if (outside !== undefined)
    for (const port of [8080, 9070])
      expect(await connects(outside, port), `port ${port} reached on ${outside}`).toBe(false);
  for (const line of blocks.at(-1) ?? []) {
    const { proc, out } = sh(line, cwd);
    const code = await new Promise<number | null>((r) => proc.once('close', r));
    expect(code, `${line}\n${out()}`).toBe(0);
    expect(out()).toContain('completed');
  }
}, 240_000);
