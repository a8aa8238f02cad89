// An in-memory RunRecorder: keeps every run's start record, events, journal, artifacts, snapshot
// and finish record. The default recorder of an engine, and the one tests inspect.
import { EngineError } from './errors.js';
import type {
  JournalEntry,
  RunEvent,
  RunFinishRecord,
  RunRecorder,
  RunStartRecord,
} from './ports.js';

export interface RecordedRun {
  readonly start: RunStartRecord;
  readonly events: RunEvent[];
  readonly journal: JournalEntry[];
  readonly artifacts: Map<string, unknown>;
  readonly snapshot: Record<string, unknown>;
  finish?: RunFinishRecord;
}

export interface MemoryRecorder extends RunRecorder {
  /** The recorded run, or undefined. */
  get(runId: string): RecordedRun | undefined;
  runIds(): string[];
  load(
    runId: string,
  ): Promise<
    { readonly start: RunStartRecord; readonly journal: readonly JournalEntry[] } | undefined
  >;
}

export function createMemoryRecorder(): MemoryRecorder {
  const runs = new Map<string, RecordedRun>();
  const need = (runId: string): RecordedRun => {
    const run = runs.get(runId);
    if (!run) throw new Error(`run ${runId} was not begun on this recorder`);
    return run;
  };
  return {
    async begin(start) {
      if (runs.has(start.runId)) throw new Error(`run ${start.runId} was already begun`);
      runs.set(start.runId, {
        start: structuredClone(start),
        events: [],
        journal: [],
        artifacts: new Map(),
        snapshot: { status: 'running' },
      });
    },
    event(event) {
      need(event.runId).events.push(event);
    },
    journal(runId, entry) {
      need(runId).journal.push(entry);
    },
    async artifact(runId, name, value) {
      const run = need(runId);
      if (run.artifacts.has(name)) {
        throw new EngineError(
          'WF_ENGINE_ARTIFACT_EXISTS',
          `artifact "${name}" was already written in run ${runId}; artifacts are write-once`,
        );
      }
      run.artifacts.set(name, structuredClone(value));
      return { name, ref: `memory:${runId}/${name}` };
    },
    update(runId, patch) {
      Object.assign(need(runId).snapshot, patch);
    },
    async finish(runId, record) {
      const run = need(runId);
      run.finish = record;
      Object.assign(run.snapshot, { status: record.status });
    },
    async load(runId) {
      const run = runs.get(runId);
      if (!run) return undefined;
      return { start: run.start, journal: run.journal.slice() };
    },
    get: (runId) => runs.get(runId),
    runIds: () => [...runs.keys()],
  };
}
