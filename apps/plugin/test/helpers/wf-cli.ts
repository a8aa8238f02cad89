// Spawns the real `wf` bin (apps/plugin/bin/wf.js over the tsc build) in a throwaway project
// directory with its own DSH_HOME, so tests never touch the user's catalog or runs. The build runs
// once per test file under a cross-process lock (test files run in parallel workers).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..', '..', '..');
export const WF_BIN = join(REPO, 'apps', 'plugin', 'bin', 'wf.js');
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const LOCK = join(tmpdir(), `wf-plugin-build-${Buffer.from(REPO).toString('hex').slice(-24)}.lock`);

export interface WfResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export async function buildWf(): Promise<void> {
  // A lock directory: mkdir is atomic. A stale lock (a crashed build) is broken after 3 minutes.
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > 180_000)
          rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // The holder released it between our mkdir and stat.
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    await new Promise<void>((ok, fail) => {
      execFile(
        process.execPath,
        [TSC, '-b', join(REPO, 'apps', 'plugin')],
        { cwd: REPO },
        (error, stdout, stderr) =>
          error ? fail(new Error(`tsc -b apps/plugin failed:\n${stdout}${stderr}`)) : ok(),
      );
    });
    // Other test files (wf check's, the DSH end-to-end workspace) build apps/plugin too. Two
    // builds of stale outputs overlapping would rewrite dist/ under a running wf, so wait until
    // nobody else is building; later builds of up-to-date outputs write nothing.
    await otherBuildsDone();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function otherBuilders(): number[] {
  if (process.platform !== 'linux') return [];
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (
        argv.some((a) => /typescript[\\/]bin[\\/]tsc$|[\\/]tsc$/.test(a)) &&
        argv.includes('-b') &&
        argv.some((a) => /apps[\\/]plugin\/?$/.test(a))
      ) {
        out.push(Number(entry));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

async function otherBuildsDone(): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (otherBuilders().length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
}

export interface Project {
  readonly dir: string;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  file(name: string, content: string | object): string;
  cleanup(): void;
}

export function tempProject(): Project {
  const root = mkdtempSync(join(tmpdir(), 'wf-cli-'));
  const dir = join(root, 'project');
  const home = join(root, 'dsh-home');
  mkdirSync(dir);
  mkdirSync(home);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    DSH_HOME: home,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  };
  return {
    dir,
    home,
    env,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(
        path,
        typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`,
      );
      return path;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export function startWf(
  args: readonly string[],
  project: Project,
  extraEnv: NodeJS.ProcessEnv = {},
): ChildProcess {
  return spawn(process.execPath, [WF_BIN, ...args], {
    cwd: project.dir,
    env: { ...project.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function collect(child: ChildProcess, timeoutMs = 60_000): Promise<WfResult> {
  return new Promise((ok, fail) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(
        new Error(`wf did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, timeoutMs);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      ok({ code, signal, stdout, stderr });
    });
  });
}

export function wf(
  args: readonly string[],
  project: Project,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<WfResult> {
  return collect(startWf(args, project, extraEnv));
}

/** Parses the one JSON document a `--json` invocation prints, with the output on failure. */
export function json(result: WfResult): Record<string, unknown> {
  try {
    return JSON.parse(result.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(
      `stdout is not one JSON document (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  }
}

/** Resolves once `predicate` holds for the text a stream has produced so far. */
export function waitForOutput(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  predicate: (text: string) => boolean,
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((ok, fail) => {
    let text = '';
    const source = child[stream];
    const timer = setTimeout(
      () => fail(new Error(`timed out waiting on ${stream}; got:\n${text}`)),
      timeoutMs,
    );
    source?.on('data', (d: Buffer | string) => {
      text += d.toString();
      if (predicate(text)) {
        clearTimeout(timer);
        ok(text);
      }
    });
  });
}

/** A small realistic capsule: fan out over angles, then synthesize; `question` is required. */
export function demoCapsule(
  overrides: { name?: string; source?: string; maxAgents?: number } = {},
) {
  return {
    format: 'dsh.workflow',
    version: 1,
    workflowApiVersion: 1,
    minDshVersion: '0.1.0-rc.8',
    manifest: {
      name: overrides.name ?? 'angles-demo',
      description: 'Looks at a question from several angles, then merges the findings',
      phases: ['angles', 'synthesis'],
      readOnly: true,
      maxAgents: overrides.maxAgents ?? 12,
      maxConcurrency: 4,
      patterns: ['fan-out-and-synthesize'],
      inputSchema: {
        type: 'object',
        properties: {
          question: { type: 'string' },
          angles: { type: 'array', items: { type: 'string' } },
        },
        required: ['question'],
        additionalProperties: false,
      },
    },
    source:
      overrides.source ??
      `async function run(wf, args) {
  const angles = args.angles || ['scope', 'evidence', 'risk', 'recommendation'];
  const findings = await wf.phase('angles', () =>
    wf.parallel(angles.map((a) => () => wf.runAgent({ name: a, prompt: 'Investigate ' + a + ' of: ' + args.question, readOnly: true }))),
  );
  wf.log('angles done: ' + findings.filter(Boolean).length);
  const texts = findings.map((f) => (f ? f.finalText : null));
  const merged = await wf.phase('synthesis', () => wf.synthesize({ inputs: texts, rubric: 'merge, dedupe, rank' }));
  return { synthesis: merged.text, angles: findings.length };
}
`,
    inputs: {
      description: 'a question to investigate',
      examples: [{ question: 'Is the cache layer safe to remove?' }],
    },
  };
}
