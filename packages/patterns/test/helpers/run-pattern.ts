// Runs a shipped capsule end to end: the real engine, the real QuickJS sandbox, simulated agents
// scripted per test. Returns what the tests assert on: the outcome, the events, the provider's
// stats and requests, and the recorded run (artifacts).
import {
  type AgentRequest,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type RecordedRun,
  type RunDone,
  type RunEvent,
  type SimulatedAgentStats,
  type SimulatedResponse,
} from '@wf/engine';
import type { WorkflowCapsule } from '@wf/bridge';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect } from 'vitest';

let shared: Sandbox | undefined;

/**
 * One real QuickJS sandbox (worker pool) for every run in the calling test file: each run still
 * gets a fresh runtime and context, only the worker start-up is shared.
 */
export function useSharedSandbox(): () => Sandbox {
  beforeAll(async () => {
    shared = await createSandbox({ poolSize: 2 });
  });
  afterAll(async () => {
    await shared?.close();
    shared = undefined;
  });
  return () => {
    if (!shared) throw new Error('the shared sandbox exists only inside tests');
    return shared;
  };
}

export interface PatternRun {
  readonly done: RunDone;
  readonly result: Record<string, unknown>;
  readonly events: RunEvent[];
  readonly stats: SimulatedAgentStats;
  readonly requests: readonly AgentRequest[];
  readonly recorded: RecordedRun;
}

export interface RunPatternOptions {
  readonly respond?: (request: AgentRequest) => SimulatedResponse | undefined;
  /** Child duration; a few ms lets parallel children overlap so concurrency is exercised. */
  readonly delayMs?: number;
  /** Root for wf.readFile. */
  readonly workspace?: string;
  /** Subtrees of `.dsh/` wf.readFile may open (as the plugin allows its review packets). */
  readonly readFileAllow?: readonly string[];
  /** Override the provider's advertised capabilities. */
  readonly capabilities?: { readonly toolFilter?: boolean; readonly outputSchema?: boolean };
  /** Engine limits (a deployment tighter than the manifest). */
  readonly limits?: { readonly maxConcurrency?: number; readonly maxAgents?: number };
}

export async function runPattern(
  capsule: WorkflowCapsule,
  args: unknown,
  options: RunPatternOptions = {},
): Promise<PatternRun> {
  const agents = createSimulatedAgents({
    delayMs: options.delayMs ?? 3,
    ...(options.respond ? { respond: options.respond } : {}),
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
  });
  const recorder = createMemoryRecorder();
  const engine = createEngine({
    agents,
    recorder,
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(options.readFileAllow ? { readFile: { allow: options.readFileAllow } } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(shared ? { sandbox: shared } : {}),
  });
  try {
    const handle = await engine.start({
      workflow: { manifest: capsule.manifest, source: capsule.source },
      args,
      trust: 'trusted-package',
      seed: 7,
    });
    const events: RunEvent[] = [];
    for await (const e of handle.events) events.push(e);
    const done = await handle.done;
    const recorded = recorder.get(handle.runId);
    if (!recorded) throw new Error('run was not recorded');
    return {
      done,
      result: (done.result ?? {}) as Record<string, unknown>,
      events,
      stats: agents.stats(),
      requests: agents.requests(),
      recorded,
    };
  } finally {
    await engine.close();
  }
}

/** Phase names in the order they started, checking each completed before the next began. */
export function phasesOf(events: readonly RunEvent[]): string[] {
  const order: string[] = [];
  const open: string[] = [];
  for (const e of events) {
    if (e.type === 'phase-started') {
      open.push(String(e.data.phase));
      order.push(String(e.data.phase));
    } else if (e.type === 'phase-completed') {
      expect(open.pop()).toBe(String(e.data.phase));
    }
  }
  expect(open).toEqual([]);
  return order;
}

/**
 * What every pattern run must satisfy: completed, phases as expected, agents and concurrency
 * within the manifest (provider stats and engine cost agree), every child read-only and started
 * and ended exactly once, in the phase it belongs to.
 */
export function expectWithinManifest(
  capsule: WorkflowCapsule,
  run: PatternRun,
  expected: { phases: readonly string[]; agents: number },
): void {
  const m = capsule.manifest;
  expect(run.done.error).toBeUndefined();
  expect(run.done.status).toBe('completed');
  expect(phasesOf(run.events)).toEqual(expected.phases);
  for (const p of expected.phases) expect(m.phases).toContain(p);
  expect(run.stats.started).toBe(expected.agents);
  expect(run.done.cost.agentsStarted).toBe(expected.agents);
  expect(run.stats.started).toBeLessThanOrEqual(m.maxAgents);
  expect(run.stats.peakActive).toBeLessThanOrEqual(m.maxConcurrency);
  expect(run.done.cost.peakConcurrency).toBeLessThanOrEqual(m.maxConcurrency);
  expect(run.stats.completed).toBe(run.stats.started);
  for (const r of run.requests) expect(r.readOnly, r.name).toBe(true);
  const lifecycle = new Map<string, string[]>();
  for (const e of run.events) {
    if (e.type !== 'agent-started' && e.type !== 'agent-completed') continue;
    const id = String(e.data.childId);
    lifecycle.set(id, [...(lifecycle.get(id) ?? []), e.type]);
  }
  expect(lifecycle.size).toBe(expected.agents);
  for (const l of lifecycle.values()) expect(l).toEqual(['agent-started', 'agent-completed']);
  // Tasks inherit the phase they were started in; only manifest phases are used.
  for (const r of run.requests) if (r.phase !== undefined) expect(m.phases).toContain(r.phase);
}

/** The requests whose name matches, in launch order. */
export function named(run: PatternRun, pattern: RegExp): AgentRequest[] {
  return run.requests.filter((r) => pattern.test(r.name));
}

/** The evidence JSON a synthesis child was given (the engine appends it to the prompt). */
export function synthesisEvidence(run: PatternRun): unknown {
  const s = run.requests.find((r) => r.kind === 'synthesis');
  if (!s) throw new Error('no synthesis child');
  return JSON.parse(s.prompt.slice(s.prompt.indexOf('Evidence:\n') + 'Evidence:\n'.length));
}

/**
 * Children really overlapped, and never more than `max` at once. (The exact peak depends on
 * timing on a loaded machine, so only the bound is exact.)
 */
export function expectParallel(run: PatternRun, max: number): void {
  expect(run.stats.peakActive).toBeGreaterThan(1);
  expect(run.stats.peakActive).toBeLessThanOrEqual(max);
  expect(run.done.cost.peakConcurrency).toBeLessThanOrEqual(max);
}
