// The records a run leaves: status, events, journal entries, start and finish records. Declared
// once here because the engine writes them and @wf/catalog-fs stores them, and neither may import
// the other (docs/design.md#layers). Types only; the RunRecorder port is the engine's, declared here
// with its records so the disk store can extend it.

import type { CapsuleRequires } from './capsule.js';

/** How far a workflow is trusted; decides sandboxing and approval. */
export type Trust = 'trusted-package' | 'capability-generated' | 'trusted-local';

export type RunStatus =
  | 'running'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'stopped'
  | 'denied'
  | 'interrupted';

/** The statuses a run ends in; a run in one of them never changes again. */
export type TerminalRunStatus = Exclude<RunStatus, 'running' | 'paused'>;

export type RunEventType =
  | 'workflow-started'
  | 'workflow-log'
  | 'workflow-completed'
  | 'workflow-failed'
  | 'workflow-stopped'
  | 'workflow-paused'
  | 'workflow-resumed'
  | 'phase-started'
  | 'phase-completed'
  | 'agent-started'
  | 'agent-completed'
  | 'agent-message'
  | 'synthesis-started'
  | 'synthesis-completed'
  | 'nested-started'
  | 'nested-completed'
  | 'artifact-written'
  | 'cache-hit'
  /** WARN_RATIO (80%) of a run limit used: data `{ limit, used, max, ratio, message }`. */
  | 'limit-warning';

/**
 * One line of a run's event log. `seq` is monotonic per run, starting at 1. `T` widens the type
 * for stores, which keep whatever event type they are given.
 */
export interface RunEvent<T extends string = RunEventType> {
  readonly seq: number;
  readonly runId: string;
  readonly type: T;
  /** Host wall-clock epoch ms when the event was emitted. */
  readonly time: number;
  readonly data: { readonly [key: string]: unknown };
}

export interface RunCost {
  readonly wallClockDurationMs: number;
  readonly agentsStarted: number;
  readonly agentsCompleted: number;
  readonly cacheHits: number;
  readonly tokenUsage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly totalTokens: number;
  };
  readonly peakConcurrency: number;
}

/** What the recorder is told when a run starts: enough to re-execute it for resume. */
export interface RunStartRecord {
  readonly runId: string;
  readonly workflow: string;
  readonly trust: Trust;
  readonly manifest: unknown;
  /** Source of a source-based run; absent for trusted-local host functions. */
  readonly source?: string;
  readonly args: unknown;
  readonly seed: number;
  /** Epoch ms the guest's logical clock starts at. */
  readonly startTime: number;
  readonly startedAt: number;
  readonly resumedFromRunId?: string;
  /** Set on a resumed run: the run it replays and when the resume started (epoch ms). */
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
  /**
   * Set on a resumed run: the run it continues across resumes (the first run of the chain, never
   * itself a resumed run). Its guest sees this id as `wf.runId`.
   */
  readonly logicalRunId?: string;
  /** The agent provider's name (`simulated`, `dsh:spawn`...): resume refuses a different kind. */
  readonly provider?: string;
  /** True when the children are simulated (no model is called). */
  readonly simulated?: boolean;
  readonly sourceRunId?: string;
  readonly revisionOf?: string;
  /** The capsule's `requires`: resume checks it again against the host it resumes on. */
  readonly requires?: CapsuleRequires;
}

/** One journaled host call: what the guest asked, what it got, and when (logical time). */
export interface JournalEntry {
  /** Order in which the guest issued the call, from 1. */
  readonly seq: number;
  /** Order in which the result was delivered to the guest, from 1. */
  readonly settleSeq: number;
  readonly method: string;
  readonly input: unknown;
  readonly outcome:
    | { readonly ok: true; readonly value: unknown }
    | {
        readonly ok: false;
        readonly error: {
          readonly code: string;
          readonly message: string;
          readonly data?: unknown;
        };
      };
  /** Logical epoch ms the guest clock was set to when this result was delivered. */
  readonly settledAt: number;
  /**
   * Delivered after the run was stopped or failed and shaped by that (a stopped child, a refused
   * call): kept for the record, never replayed on resume, where the call runs again live.
   */
  readonly afterHalt?: true;
}

export interface RunFinishRecord {
  readonly status: TerminalRunStatus;
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly cost: RunCost;
  readonly endedAt: number;
}

/**
 * Where a run is recorded. Calls are made in order; `event` and `journal` must not block the
 * engine (buffer and flush). The in-memory recorder ships in @wf/engine; the disk one in
 * @wf/catalog-fs (`openRunStore`).
 */
export interface RunRecorder {
  begin(run: RunStartRecord): Promise<void>;
  /**
   * Optional, for durable backends that re-execute a run after its executor was lost (a worker
   * restarted in place, another sharing the store): begins the run, or continues recording one
   * this recorder holds under the same start, appending (`continued: true`). A different run under
   * the id is refused.
   */
  beginOrContinue?(run: RunStartRecord): Promise<{ readonly continued: boolean }>;
  /** Optional: stops recording a live run without ending it (its executor moved elsewhere). */
  detach?(runId: string): Promise<void>;
  event(event: RunEvent): void;
  /**
   * `text`, when given, is `JSON.stringify(entry)` as the engine already computed it (to charge
   * `maxJournalBytes`): a recorder may store it instead of serialising the entry a second time.
   */
  journal(runId: string, entry: JournalEntry, text?: string): void;
  /** Write-once JSON artifact; rejects when the name was already written in this run. */
  artifact(
    runId: string,
    name: string,
    value: unknown,
  ): Promise<{ readonly name: string; readonly ref: string }>;
  /** Coalesced snapshot fields (status, phase, counts...); the recorder decides when to persist. */
  update(runId: string, patch: { readonly [key: string]: unknown }): void;
  finish(runId: string, record: RunFinishRecord): Promise<void>;
  /** For resume: the start record and the journal of an earlier run, or undefined. */
  load?(
    runId: string,
  ): Promise<
    { readonly start: RunStartRecord; readonly journal: readonly JournalEntry[] } | undefined
  >;
}

// Record schemas: what a stored record must hold, field by field. A reader of records written to
// disk (which a crash, a full disk or a hand edit can damage) checks them with `checkRecord` before
// using a field, so one bad field makes that record unreadable, naming the field, instead of
// crashing whatever reads it. Plain checks, no schema library: `wf runs` loads this module.

/** The first field of a record that does not fit its schema, and what it should have been. */
export interface RecordIssue {
  /** The field's path in the record: `status`, `cost.tokenUsage.totalTokens`, `artifacts[2].ref`. */
  readonly field: string;
  /** What the field must be: `a string`, `one of completed, failed, ...`, `present`. */
  readonly expected: string;
}

/** Checks one value at `at` (its path); undefined when it fits. */
export type RecordCheck = (value: unknown, at: string) => RecordIssue | undefined;

/** A record's fields: required unless wrapped in `optional`. Fields not named are not checked. */
export type RecordSchema = { readonly [field: string]: RecordCheck | OptionalCheck };

interface OptionalCheck {
  readonly optional: RecordCheck;
}

const issue = (field: string, expected: string): RecordIssue => ({ field, expected });

/** An optional field: absent (undefined) is fine, present must pass `check`. */
export function optional(check: RecordCheck): OptionalCheck {
  return { optional: check };
}

export const anyValue: RecordCheck = () => undefined;

export const text: RecordCheck = (value, at) =>
  typeof value === 'string' ? undefined : issue(at, 'a string');

export const finiteNumber: RecordCheck = (value, at) =>
  typeof value === 'number' && Number.isFinite(value) ? undefined : issue(at, 'a finite number');

/** A count or sequence number: an integer >= 0. */
export const count: RecordCheck = (value, at) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? undefined
    : issue(at, 'an integer >= 0');

export const flag: RecordCheck = (value, at) =>
  typeof value === 'boolean' ? undefined : issue(at, 'true or false');

export function oneOf(values: readonly unknown[]): RecordCheck {
  const expected = `one of ${values.map(String).join(', ')}`;
  return (value, at) => (values.includes(value) ? undefined : issue(at, expected));
}

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A plain object whose named fields pass `schema` (other keys are allowed). */
export function shape(schema: RecordSchema): RecordCheck {
  return (value, at) => (isObject(value) ? checkFields(schema, value, at) : issue(at, 'an object'));
}

/** An array whose every item passes `item`. */
export function listOf(item: RecordCheck): RecordCheck {
  return (value, at) => {
    if (!Array.isArray(value)) return issue(at, 'an array');
    for (let i = 0; i < value.length; i++) {
      const found = item(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  };
}

/** The first of `checks` that fits wins; otherwise the last one's issue. */
export function either(...checks: readonly RecordCheck[]): RecordCheck {
  return (value, at) => {
    let last: RecordIssue | undefined;
    for (const check of checks) {
      last = check(value, at);
      if (!last) return undefined;
    }
    return last;
  };
}

function checkFields(
  schema: RecordSchema,
  value: { readonly [key: string]: unknown },
  at: string,
): RecordIssue | undefined {
  for (const [field, rule] of Object.entries(schema)) {
    const path = at === '' ? field : `${at}.${field}`;
    const fieldValue = Object.hasOwn(value, field) ? value[field] : undefined;
    if (typeof rule === 'function') {
      if (fieldValue === undefined) return issue(path, 'present');
      const found = rule(fieldValue, path);
      if (found) return found;
    } else if (fieldValue !== undefined) {
      const found = rule.optional(fieldValue, path);
      if (found) return found;
    }
  }
  return undefined;
}

/** Checks `value` against `schema`: undefined when every named field fits, else the first misfit. */
export function checkRecord(schema: RecordSchema, value: unknown): RecordIssue | undefined {
  return isObject(value) ? checkFields(schema, value, '') : issue('', 'a JSON object');
}

export const RUN_STATUSES: readonly RunStatus[] = [
  'running',
  'paused',
  'completed',
  'failed',
  'stopped',
  'denied',
  'interrupted',
];
export const TRUSTS: readonly Trust[] = [
  'trusted-package',
  'capability-generated',
  'trusted-local',
];

/** `{ code, message }`: a run's or a call's error. */
export const errorShape: RecordCheck = shape({ code: text, message: text });

export const RUN_COST_SCHEMA: RecordSchema = {
  wallClockDurationMs: finiteNumber,
  agentsStarted: count,
  agentsCompleted: count,
  cacheHits: count,
  tokenUsage: shape({
    inputTokens: finiteNumber,
    outputTokens: finiteNumber,
    totalTokens: finiteNumber,
  }),
  peakConcurrency: count,
};

export const RUN_START_RECORD_SCHEMA: RecordSchema = {
  runId: text,
  workflow: text,
  trust: oneOf(TRUSTS),
  manifest: anyValue,
  source: optional(text),
  args: optional(anyValue),
  seed: finiteNumber,
  startTime: finiteNumber,
  startedAt: finiteNumber,
  resumedFromRunId: optional(text),
  resumedFrom: optional(shape({ runId: text, at: finiteNumber })),
  provider: optional(text),
  simulated: optional(flag),
  sourceRunId: optional(text),
  revisionOf: optional(text),
  requires: optional(shape({})),
};

export const RUN_EVENT_SCHEMA: RecordSchema = {
  seq: count,
  runId: text,
  type: text,
  time: finiteNumber,
  data: shape({}),
};

export const JOURNAL_ENTRY_SCHEMA: RecordSchema = {
  seq: count,
  settleSeq: count,
  method: text,
  input: optional(anyValue),
  outcome: either(
    shape({ ok: oneOf([true]), value: optional(anyValue) }),
    shape({ ok: oneOf([false]), error: errorShape }),
  ),
  settledAt: finiteNumber,
  afterHalt: optional(oneOf([true])),
};

export const RUN_FINISH_RECORD_SCHEMA: RecordSchema = {
  status: oneOf(RUN_STATUSES.filter((s) => s !== 'running' && s !== 'paused')),
  result: optional(anyValue),
  error: optional(errorShape),
  cost: shape(RUN_COST_SCHEMA),
  endedAt: finiteNumber,
};
