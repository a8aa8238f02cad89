// Shared test helpers: a valid manifest, a trusted-local start, run-to-completion with collected
// events, and one real sandbox per test file.
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll } from 'vitest';
import type { HostWorkflowApi, JournalEntry, RunEvent, RunRecorder } from '../src/index.js';
import type { Engine, RunDone, StartOptions } from '../src/index.js';

export function manifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'test-flow',
    description: 'A workflow used by the engine tests.',
    phases: ['work'],
    readOnly: false,
    maxAgents: 20,
    maxConcurrency: 4,
    patterns: ['fan-out-and-synthesize'],
    ...overrides,
  };
}

/** Start options for a trusted-local run: a host function with a host-side wf. */
export const local = (
  run: (wf: HostWorkflowApi, args: unknown) => unknown,
  m: Record<string, unknown> = manifest(),
) => ({
  workflow: { manifest: m, run },
  trust: 'trusted-local' as const,
});

export async function runToEnd(
  engine: Engine,
  options: StartOptions,
): Promise<{ done: RunDone; events: RunEvent[]; runId: string }> {
  const handle = await engine.start(options);
  const events: RunEvent[] = [];
  const collect = (async () => {
    for await (const e of handle.events) events.push(e);
  })();
  const done = await handle.done;
  await collect;
  return { done, events, runId: handle.runId };
}

export function byType(events: readonly RunEvent[], type: RunEvent['type']): RunEvent[] {
  return events.filter((e) => e.type === type);
}

/** Invariant 7 as an assertion: one agent-started and one agent-completed per child id. */
export function childLifecycles(events: readonly RunEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of events) {
    if (e.type !== 'agent-started' && e.type !== 'agent-completed') continue;
    const id = String(e.data.childId);
    out.set(id, [...(out.get(id) ?? []), e.type]);
  }
  return out;
}

/** Creates one real sandbox (one worker) before the file's tests and closes it after them. */
export function shareSandbox(set: (sandbox: Sandbox) => void): void {
  let created: Sandbox | undefined;
  beforeAll(async () => {
    created = await createSandbox({ poolSize: 1 });
    set(created);
  });
  afterAll(async () => {
    await created?.close();
  });
}

/**
 * The children a journal holds results for: runAgent and wait answers and child-result records (a
 * spawned child counts once its record is journaled, waited for or not). A wait answer that refers
 * to its record names no child: the record does.
 */
export function journaledChildNames(journal: readonly JournalEntry[]): string[] {
  return [
    ...new Set(
      journal
        .filter((e) => e.outcome.ok && ['runAgent', 'wait', 'child-result'].includes(e.method))
        .map((e) => (e.outcome as { value: { value: { name: string } } }).value.value.name)
        .filter((name) => name !== undefined),
    ),
  ];
}

/** The recorder as a resume sees it with only the journal entries `keep` accepts. */
export function withJournal(
  recorder: RunRecorder,
  keep: (entry: JournalEntry) => boolean,
): RunRecorder {
  return {
    ...recorder,
    load: async (runId) => {
      const loaded = await recorder.load?.(runId);
      return loaded && { start: loaded.start, journal: loaded.journal.filter(keep) };
    },
  };
}
