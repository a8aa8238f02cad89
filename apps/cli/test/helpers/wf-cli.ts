// Spawns the real `wf` bin (apps/cli/bin/wf.cjs over the bundled build) in a throwaway project
// directory with its own DSH_HOME, so tests never touch the user's catalog or runs. The build runs
// once per vitest run, in test/global-setup.ts.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..', '..', '..');
export const WF_BIN = join(REPO, 'apps', 'cli', 'bin', 'wf.cjs');

export interface WfResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
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

/** A workflow of five instant agents side by side (the start-up tests' and bench's). */
export const FIVE_AGENTS = `async function run(wf, args) {
  return wf.parallel([1, 2, 3, 4, 5].map((i) => () => wf.runAgent({ name: 'a' + i, prompt: 'p' })));
}
`;

/** A project holding five.workflow.js (FIVE_AGENTS) and one recorded run of it. */
export function projectWithOneRun(): Project {
  const p = tempProject();
  p.file('five.workflow.js', FIVE_AGENTS);
  const run = spawnSync(process.execPath, [WF_BIN, 'run', 'five.workflow.js', '--no-progress'], {
    cwd: p.dir,
    env: p.env,
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    p.cleanup();
    throw new Error(`wf run five.workflow.js exited ${run.status}: ${run.stderr}`);
  }
  return p;
}

/** @babel/parser's file as @wf/source-contract resolves it (what dist/cli/parser.cjs copies). */
export function parserFile(): string {
  const contract = createRequire(join(REPO, 'apps', 'cli', 'package.json')).resolve(
    '@wf/source-contract/package.json',
  );
  return createRequire(contract).resolve('@babel/parser');
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
