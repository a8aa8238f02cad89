// An in-memory RunRecorder: keeps every run's start record, events, journal, artifacts (as JSON
// text), snapshot and finish record. The default recorder of an engine, and the one tests inspect.
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
  /** Parsed from the stored JSON text on each read: a fresh array every time. */
  readonly events: RunEvent[];
  /** Parsed from the stored JSON text on each read: a fresh array every time. */
  readonly journal: JournalEntry[];
  /** Parsed from the stored JSON text on each read. */
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

/** A run as stored: JSON text, not parsed copies. */
interface StoredRun {
  readonly start: RunStartRecord;
  readonly events: string[];
  readonly journal: string[];
  readonly artifacts: Map<string, string>;
  readonly snapshot: Record<string, unknown>;
  finish?: RunFinishRecord;
}

/**
 * invariant 6: events and journal entries carry guest-controlled inputs and answers. Kept as
 * parsed objects they cost about 14 times their JSON size (2.8 GB in 90 s of a flooding run);
 * kept as JSON text they cost their size. `get` parses on each read of `events`/`journal`.
 */
function view(run: StoredRun): RecordedRun {
  const recorded = {
    start: run.start,
    get events() {
      return run.events.map((t) => JSON.parse(t) as RunEvent);
    },
    get journal() {
      return run.journal.map((t) => JSON.parse(t) as JournalEntry);
    },
    get artifacts() {
      return new Map([...run.artifacts].map(([k, t]) => [k, JSON.parse(t) as unknown]));
    },
    snapshot: run.snapshot,
  };
  Object.defineProperty(recorded, 'finish', {
    enumerable: true,
    get: () => run.finish,
    set: (record: RunFinishRecord) => {
      run.finish = record;
    },
  });
  return recorded as RecordedRun;
}

export function createMemoryRecorder(): MemoryRecorder {
  const runs = new Map<string, StoredRun>();
  const need = (runId: string): StoredRun => {
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
      need(event.runId).events.push(JSON.stringify(event));
    },
    journal(runId, entry, text) {
      // The engine's own serialisation of this entry, when it passes one (computed once per call).
      need(runId).journal.push(typeof text === 'string' ? text : JSON.stringify(entry));
    },
    async artifact(runId, name, value) {
      const run = need(runId);
      if (run.artifacts.has(name)) {
        throw new EngineError(
          'WF_ENGINE_ARTIFACT_EXISTS',
          `artifact "${name}" was already written in run ${runId}; artifacts are write-once`,
        );
      }
      run.artifacts.set(name, JSON.stringify(value ?? null));
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
      return { start: run.start, journal: run.journal.map((t) => JSON.parse(t) as JournalEntry) };
    },
    get: (runId) => {
      const run = runs.get(runId);
      return run ? view(run) : undefined;
    },
    runIds: () => [...runs.keys()],
  };
}
