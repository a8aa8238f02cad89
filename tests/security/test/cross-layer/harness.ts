// Shared harness of the cross-layer attack suites: one real engine per attack, the real sandbox
// (shared per file, one worker), real simulated agents, and helpers that look for host detail
// (paths, Node version, environment values) in anything a workflow or the model can see.
import { homedir, tmpdir } from 'node:os';
import {
  type AgentProvider,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type EngineLimits,
  type MemoryRecorder,
  type ResolvedWorkflow,
  type RunDone,
  type RunEvent,
  type RunRecorder,
  type SimulatedAgents,
  type SimulatedAgentsOptions,
} from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';

export const baseManifest = (o: Record<string, unknown> = {}) => ({
  name: 'cross-layer-attack',
  description: 'A model-written workflow that attacks every layer under it.',
  phases: ['attack'],
  readOnly: false,
  maxAgents: 6,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize'],
  ...o,
});

export interface AttackOptions {
  readonly checker?: boolean;
  readonly agents?: SimulatedAgentsOptions;
  readonly provider?: AgentProvider;
  readonly limits?: Partial<EngineLimits>;
  readonly manifest?: Record<string, unknown>;
  readonly args?: unknown;
  readonly workspace?: string;
  readonly recorder?: RunRecorder;
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  /** The whole program instead of a body wrapped in `async function run(wf, args) {...}`. */
  readonly program?: boolean;
}

export interface AttackResult {
  readonly done: RunDone;
  readonly agents: SimulatedAgents | undefined;
  readonly events: readonly RunEvent[];
  readonly recorder: RunRecorder;
}

export const both = [true, false].map((checker) => ({
  checker,
  label: checker ? 'with checker' : 'checker bypassed',
}));

let shared: Promise<Sandbox> | undefined;
/** One sandbox per test file (vitest forks per file); closed by `closeSandbox` in afterAll. */
export function sandbox(): Promise<Sandbox> {
  shared ??= createSandbox({ poolSize: 1 });
  return shared;
}
export async function closeSandbox(): Promise<void> {
  if (shared) await (await shared).close();
  shared = undefined;
}

export function source(body: string): string {
  return `async function run(wf, args) {\n${body}\n}`;
}

export async function attack(body: string, opts: AttackOptions = {}): Promise<AttackResult> {
  const agents = opts.provider ? undefined : createSimulatedAgents(opts.agents ?? {});
  const recorder: RunRecorder = opts.recorder ?? createMemoryRecorder();
  const engine = createEngine({
    agents: opts.provider ?? (agents as SimulatedAgents),
    sandbox: await sandbox(),
    recorder,
    ...(opts.checker === false ? { checkSource: false as const } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.workspace !== undefined ? { workspace: opts.workspace } : {}),
    ...(opts.resolveWorkflow ? { resolveWorkflow: opts.resolveWorkflow } : {}),
  });
  try {
    const handle = await engine.start({
      workflow: {
        manifest: baseManifest(opts.manifest),
        source: opts.program ? body : source(body),
      },
      ...(opts.args !== undefined ? { args: opts.args } : {}),
      trust: 'capability-generated',
    });
    const events: RunEvent[] = [];
    const collecting = (async () => {
      for await (const e of handle.events) events.push(e);
    })();
    const done = await handle.done;
    await collecting;
    return { done, agents, events, recorder };
  } finally {
    await engine.close();
  }
}

export function memory(recorder: RunRecorder): MemoryRecorder {
  return recorder as MemoryRecorder;
}

/** Environment values long and specific enough that finding one in guest output is a leak. */
const envNeedles = Object.entries(process.env)
  .filter(([, v]) => typeof v === 'string' && v.length >= 8 && !/^(true|false|\d+)$/.test(v))
  .filter(([k]) => !/^(TERM|LANG|LC_|SHELL|_|SHLVL|COLORTERM|npm_config_user_agent)/.test(k))
  .map(([, v]) => v as string);

/** Host detail found in `text`: absolute host paths, the Node version, internals, env values. */
export function hostLeaks(text: string): string[] {
  const found: string[] = [];
  const needles = [
    process.cwd(),
    homedir(),
    tmpdir() === '/tmp' ? '/tmp/' : tmpdir(),
    '/work/',
    '/home/',
    'node_modules',
    'node:internal',
    'file://',
    process.version,
    `Node.js ${process.versions.node}`,
  ];
  for (const n of needles) if (n.length > 1 && text.includes(n)) found.push(n);
  // A host stack frame (guest frames look like `at run (workflow.js:3:9)`).
  const frame = /\bat [^\n"]*\((?:node:|file:|\/)[^)]*\)/.exec(text);
  if (frame) found.push(frame[0]);
  for (const v of envNeedles) if (text.includes(v)) found.push(`env:${v.slice(0, 12)}...`);
  return found;
}

/** Everything of a run the workflow or the model can see: the result, the error, the events. */
export function visibleText(r: AttackResult): string {
  return JSON.stringify({ done: r.done, events: r.events });
}
