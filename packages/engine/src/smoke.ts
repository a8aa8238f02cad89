// smokeRun: prove a capsule works before anyone spends tokens on it. Instant simulated agents,
// tight limits, the authoring profile of the source contract; the outcome is data.
import { parseCapsule } from '@wf/bridge';
import { checkWorkflowSource } from '@wf/source-contract';
import { createEngine } from './engine.js';
import { emptyCost } from './internal/engine-state.js';
import { createMemoryRecorder } from './memory-recorder.js';
import type { RunEvent } from './ports.js';
import {
  createSimulatedAgents,
  type SimulatedAgentStats,
  type SimulatedAgentsOptions,
} from './simulated-agents.js';
import type { RunDone, SandboxLike } from './types.js';

export interface SmokeOptions {
  /** Args for the run; default the capsule's first `inputs.examples` entry, else `{}`. */
  readonly args?: unknown;
  /** Script the simulated children (default: deterministic answers, schema-shaped output). */
  readonly respond?: SimulatedAgentsOptions['respond'];
  readonly seed?: number;
  readonly sandbox?: SandboxLike;
  /** Wall limit of the smoke run; default 30 s. */
  readonly wallMs?: number;
}

export interface SmokeResult {
  /** True when the run completed and started at least one agent. */
  readonly ok: boolean;
  readonly done: RunDone;
  readonly events: readonly RunEvent[];
  readonly stats: SimulatedAgentStats;
  /** Human-readable reasons `ok` is false (capsule issues, run error, no agent work). */
  readonly problems: readonly string[];
}

export async function smokeRun(capsule: unknown, options: SmokeOptions = {}): Promise<SmokeResult> {
  const problems: string[] = [];
  const isCapsule = typeof capsule === 'object' && capsule !== null && 'format' in capsule;
  let manifest: unknown;
  let source: unknown;
  let examples: readonly unknown[] | undefined;
  if (isCapsule) {
    const parsed = parseCapsule(capsule);
    if (!parsed.ok) {
      for (const i of parsed.issues.slice(0, 10)) problems.push(`${i.path}: ${i.message}`);
      return {
        ok: false,
        done: refused('the capsule is invalid'),
        events: [],
        stats: zeroStats(),
        problems,
      };
    } else {
      manifest = parsed.capsule.manifest;
      source = parsed.capsule.source;
      examples = parsed.capsule.inputs?.examples;
    }
  } else {
    manifest = (capsule as { manifest?: unknown } | null)?.manifest;
    source = (capsule as { source?: unknown } | null)?.source;
  }
  const agents = createSimulatedAgents({
    delayMs: 0,
    ...(options.respond ? { respond: options.respond } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  });
  const engine = createEngine({
    agents,
    recorder: createMemoryRecorder(),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    limits: { maxCalls: 2000, wallMs: options.wallMs ?? 30_000, maxConcurrency: 8 },
    checkSource: (s) => checkWorkflowSource(s, { profile: 'authoring' }),
  });
  try {
    if (typeof source !== 'string') {
      problems.push('source: must be a string');
      return {
        ok: false,
        done: refused('the workflow has no source'),
        events: [],
        stats: agents.stats(),
        problems,
      };
    }
    const handle = await engine.start({
      workflow: { manifest, source },
      args: options.args ?? examples?.[0] ?? {},
      trust: 'capability-generated',
      seed: options.seed ?? 1,
    });
    const events: RunEvent[] = [];
    for await (const e of handle.events) events.push(e);
    const done = await handle.done;
    if (done.status !== 'completed')
      problems.push(`run ${done.status}: ${done.error?.code}: ${done.error?.message}`);
    else if (agents.stats().started === 0)
      problems.push('the workflow completed without starting any agent');
    return { ok: problems.length === 0, done, events, stats: agents.stats(), problems };
  } finally {
    await engine.close();
  }
}

function refused(message: string): RunDone {
  return {
    status: 'failed',
    error: { code: 'WF_ENGINE_INVALID_START', message },
    cost: emptyCost(),
  };
}

function zeroStats(): SimulatedAgentStats {
  return { started: 0, completed: 0, peakActive: 0, disposed: 0, doubleDisposed: 0 };
}
