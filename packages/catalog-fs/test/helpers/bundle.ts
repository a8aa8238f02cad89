// Bundles test/helpers/child.ts (and the package sources it imports) into one ESM file, so the
// fault-injection loop can start hundreds of child processes in seconds (no TS loader per start).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export async function bundleChild(outfile: string): Promise<string> {
  await build({
    entryPoints: [fileURLToPath(new URL('./child.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@wf/source'],
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}

export interface ChildRun {
  readonly pid: number;
  readonly stdout: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `node <bundle> <mode> <config>`; `ready` resolves when it prints "ready". */
export function startChild(bundle: string, mode: string, configPath: string): ChildRun {
  const child = spawn(process.execPath, [bundle, mode, configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => {
    markReady = r;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      markReady();
      if (code !== 0 && signal === null && err)
        process.stderr.write(`child ${mode} failed: ${err}\n`);
      resolve({ code, signal });
    });
  });
  return {
    pid: child.pid!,
    stdout: () => out,
    exited,
    ready,
    kill: (signal = 'SIGKILL') => child.kill(signal),
  };
}
