// The journal: every host call of a run is recorded with its issue order (seq), its delivery
// order (settleSeq), input, outcome and the logical time it was delivered at. On resume the same
// wrapper answers journaled calls from the journal, releasing them strictly in their recorded
// delivery order, and holds live answers until the journal is drained (invariant 5: same
// deliveries in the same order give the same guest behaviour). A spawned child's result is also
// journaled when the child settles (a `child-result` record, in the same delivery sequence), so a
// resume answers the guest's later wf.wait from it instead of launching the child again. A
// wf.wait answer identical to the record it follows stores a reference to it, not the result again.
//
// A call's identity in the journal is its position and content: the issue number `seq` (1 for the
// guest's first host call), the method name and the input's JSON text (key order included). A
// resumed guest's call #n is answered from the journal only when its method and input text are
// exactly those journaled at #n; the first call that differs ends the replay
// (WF_ENGINE_REPLAY_DIVERGED, naming the call, where its input differs, and why).
import { createHash } from 'node:crypto';
import { EngineError } from '../errors.js';
import type { JournalEntry } from '../ports.js';
import type { HostCallContext } from '../types.js';
import { jsonText } from './json.js';

export type Capability = (input: unknown, ctx: HostCallContext) => Promise<unknown>;

/**
 * The method of a `child-result` record: a spawned child's TaskResult, journaled when the child
 * settles, not when the guest waits for it. Not a host call name (no guest can issue it): its
 * `seq` is 0, its `input` is `{ taskId, name }`, its outcome `{ ok: true, value: { value:
 * TaskResult } }`, shaped as a wf.wait answer. It takes the next settleSeq like a delivery, so a
 * store that keeps deliveries in sequence (Restate) keeps it too; it sets no guest clock.
 */
export const CHILD_RESULT = 'child-result';

export function isChildResult(entry: JournalEntry): boolean {
  return entry.method === CHILD_RESULT;
}

/**
 * A child's TaskResult is journaled once. A `wait` answer whose TaskResult is, as stored (after
 * the `finalText` compaction), the same JSON text as the child-result record this journal already
 * holds for that taskId stores `{ childResultOf: taskId }` in its place (`outcome.value.value`);
 * reading the journal puts the record's result back. The reference can be confused neither with
 * a TaskResult (it has none of `taskId`, `kind`, `text`, and only this one key) nor with guest
 * data: it is written and read only as the value of a `wait` answer, a position the engine fills
 * with a TaskResult and no guest value ever reaches. A record always precedes the answers that
 * refer to it (drive() records a child before resolving its waiters, the journal delivers in that
 * order, a held live answer is released after the record held before it, and a replayed journal
 * is re-recorded in its own order). A reference with no record before it fails the resume with
 * WF_ENGINE_REPLAY_DIVERGED, never hands the guest anything else.
 */
export const CHILD_RESULT_REF = 'childResultOf';

/** The taskId a stored `wait` answer refers to, or undefined when it holds a TaskResult. */
export function childResultRef(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const id = (value as Record<string, unknown>)[CHILD_RESULT_REF];
  return typeof id === 'string' && Object.keys(value).length === 1 ? id : undefined;
}

/** The digest a record is compared by: bounded memory per child, whatever its answer's size. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

export interface JournalOptions {
  /** `replayed`: the entry is a journaled answer of the resumed run, delivered again. */
  readonly record: (entry: JournalEntry, replayed: boolean) => void;
  /** Journaled entries of the run being resumed (empty for a fresh run). */
  readonly replay?: readonly JournalEntry[];
  /** Host state that the recorded call changed when it was issued (task ids, admissions). */
  readonly onIssue?: (entry: JournalEntry) => void;
  /** Host state rebuilt from each replayed entry when it is delivered. */
  readonly onReplay?: (entry: JournalEntry) => void;
  /** Called once when every journaled entry has been delivered. */
  readonly onDrained?: () => void;
  /** Replay cannot continue (divergence or stall); the run fails with this error. */
  readonly onDiverged: (error: EngineError) => void;
  /**
   * Why a resumed guest can make other calls than the journaled ones (the source or args changed,
   * or neither did): appended to every divergence message.
   */
  readonly divergenceCause?: () => string;
  readonly stallMs: number;
}

interface Waiting {
  readonly entry: JournalEntry;
  readonly ctx: HostCallContext;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class Journal {
  private seq = 0;
  private settleSeq = 0;
  private readonly bySeq = new Map<number, JournalEntry>();
  private readonly order: JournalEntry[];
  private next = 0;
  private readonly waiting = new Map<number, Waiting>();
  private held: (() => void)[] = [];
  private drained: boolean;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private diverged = false;
  private pumpScheduled = false;
  private readonly options: JournalOptions;
  /**
   * Per child-result record written by this journal: the digest of its stored TaskResult text
   * and its status. At most one record per admitted child, so maxAgents bounds it.
   */
  private readonly children = new Map<string, { digest: string; status: unknown }>();

  constructor(options: JournalOptions) {
    this.options = options;
    let replay: JournalEntry[];
    let unreadable: EngineError | undefined;
    try {
      replay = readJournal(options.replay ?? []);
    } catch (e) {
      if (!(e instanceof EngineError)) throw e;
      replay = [];
      unreadable = e;
    }
    // Child results answer no guest call: they are never looked up by issue order.
    for (const e of replay) if (!isChildResult(e)) this.bySeq.set(e.seq, e);
    this.order = replay;
    this.drained = this.order.length === 0;
    if (unreadable) this.diverge(unreadable);
    // Child results ahead of every journaled call wait for no call: released at once.
    else if (this.order[0] && isChildResult(this.order[0])) this.schedulePump();
  }

  /** The status of the child-result record a stored `wait` answer refers to (afterHalt checks). */
  referencedStatus(taskId: string): unknown {
    return this.children.get(taskId)?.status;
  }

  get replaying(): boolean {
    return !this.drained;
  }

  /** Why replay can diverge, for a divergence message (JournalOptions.divergenceCause). */
  cause(): string {
    return this.options.divergenceCause?.() ?? DEFAULT_CAUSE;
  }

  /** Entries not yet delivered (for a divergence message when the run ends early). */
  remaining(): number {
    return this.order.length - this.next;
  }

  wrap(method: string, live: Capability): Capability {
    return (input, ctx) => {
      this.seq += 1;
      const seq = this.seq;
      const entry = this.bySeq.get(seq);
      if (entry && !this.diverged) {
        if (entry.method !== method || jsonText(entry.input) !== jsonText(input)) {
          const where =
            entry.method !== method
              ? `it calls wf.${method} where the journal has wf.${entry.method}`
              : `its input differs ${firstDifference(entry.input, input)}`;
          const error = new EngineError(
            'WF_ENGINE_REPLAY_DIVERGED',
            `resume diverged at call #${seq}: ${where} (journal: wf.${entry.method}(${preview(entry.input)}); now: wf.${method}(${preview(input)})); ${this.cause()}`,
          );
          this.diverge(error);
          return Promise.reject(error);
        }
        try {
          this.options.onIssue?.(entry);
        } catch {
          // best effort, as onReplay
        }
        return new Promise((resolve, reject) => {
          this.waiting.set(seq, { entry, ctx, resolve, reject });
          this.schedulePump();
        });
      }
      return live(input, ctx).then(
        (value) => this.settleLive(seq, method, input, ctx, { ok: true, value }),
        (error) => this.settleLive(seq, method, input, ctx, { ok: false, error }),
      );
    };
  }

  /**
   * A spawned child settled live: its result is journaled now, whether or not the guest ever
   * waits for it. During replay it is held, as live answers are, until the journal is drained.
   */
  recordChild(taskId: string, name: string, result: unknown): void {
    const write = (): void => {
      this.settleSeq += 1;
      this.options.record(
        this.store({
          seq: 0,
          settleSeq: this.settleSeq,
          method: CHILD_RESULT,
          input: { taskId, name },
          outcome: { ok: true, value: { value: result } },
          settledAt: Date.now(),
        }),
        false,
      );
    };
    if (this.drained) write();
    else this.held.push(write);
  }

  private settleLive(
    seq: number,
    method: string,
    input: unknown,
    ctx: HostCallContext,
    outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
  ): Promise<unknown> {
    const deliver = (): unknown => {
      this.settleSeq += 1;
      const settledAt = Date.now();
      ctx.setNow(settledAt);
      const recorded: JournalEntry['outcome'] = outcome.ok
        ? { ok: true, value: outcome.value }
        : { ok: false, error: errorRecord(outcome.error) };
      this.options.record(
        this.store({
          seq,
          settleSeq: this.settleSeq,
          method,
          input,
          outcome: recorded,
          settledAt,
        }),
        false,
      );
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    };
    if (this.drained) {
      try {
        return Promise.resolve(deliver());
      } catch (e) {
        return Promise.reject(e);
      }
    }
    // A live answer during replay waits until every journaled answer has been delivered: in the
    // recorded run, each of those settled before this call did.
    return new Promise((resolve, reject) => {
      this.held.push(() => {
        try {
          resolve(deliver());
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  /**
   * The entry as it is journaled: compacted (compactEntry), and a `wait` answer whose TaskResult
   * is the child-result record already journaled for it is stored as a reference to it
   * (CHILD_RESULT_REF). Live and replayed entries alike, so a resumed run's journal has them too.
   */
  private store(entry: JournalEntry): JournalEntry {
    const stored = compactEntry(entry);
    if (!stored.outcome.ok) return stored;
    const envelope = stored.outcome.value as { value?: unknown } | null;
    const result = envelope?.value;
    if (typeof result !== 'object' || result === null || Array.isArray(result)) return stored;
    const r = result as Record<string, unknown>;
    if (!isTaskResult(r)) return stored;
    const taskId = r.taskId as string;
    if (isChildResult(stored)) {
      this.children.set(taskId, { digest: digest(jsonText(r)), status: r.status });
      return stored;
    }
    if (stored.method !== 'wait') return stored;
    const record = this.children.get(taskId);
    if (!record || record.digest !== digest(jsonText(r))) return stored;
    return {
      ...stored,
      outcome: { ok: true, value: { ...envelope, value: { [CHILD_RESULT_REF]: taskId } } },
    };
  }

  /**
   * Answers are released in a later macrotask, never inside the call: by then every waiting
   * call's promise has its reactions attached, so resolving them in recorded order is the order
   * the sandbox observes (a promise resolved before its caller attached would jump the queue).
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    while (this.next < this.order.length) {
      const entry = this.order[this.next] as JournalEntry;
      if (isChildResult(entry)) {
        // No call waits for it: it is re-recorded and applied in its place in the sequence.
        this.next += 1;
        this.settleSeq = entry.settleSeq;
        this.options.record(this.store(entry), true);
        try {
          this.options.onReplay?.(entry);
        } catch {
          // best effort, as for calls
        }
        continue;
      }
      const w = this.waiting.get(entry.seq);
      if (!w) break;
      this.waiting.delete(entry.seq);
      this.next += 1;
      this.settleSeq = entry.settleSeq;
      w.ctx.setNow(entry.settledAt);
      this.options.record(this.store(entry), true);
      try {
        this.options.onReplay?.(entry);
      } catch {
        // Rebuilding state is best effort; the guest still gets the recorded answer.
      }
      if (entry.outcome.ok) w.resolve(entry.outcome.value);
      else w.reject(rebuildError(entry.outcome.error));
    }
    if (this.next >= this.order.length) {
      if (!this.drained) {
        this.drained = true;
        this.options.onDrained?.();
        const held = this.held;
        this.held = [];
        for (const release of held) release();
      }
      return;
    }
    const awaited = this.order[this.next] as JournalEntry;
    this.stallTimer = setTimeout(() => {
      this.diverge(
        new EngineError(
          'WF_ENGINE_REPLAY_DIVERGED',
          `resume stalled: the journal's call #${awaited.seq} (wf.${awaited.method}(${preview(awaited.input)})) was never issued by the workflow within ${this.options.stallMs} ms; ${this.cause()}`,
        ),
      );
    }, this.options.stallMs);
    this.stallTimer.unref?.();
  }

  /** Replay is over for good: fail the run, release everything that waits. */
  private diverge(error: EngineError): void {
    if (this.diverged) return;
    this.diverged = true;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.options.onDiverged(error);
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
    this.drained = true;
    const held = this.held;
    this.held = [];
    for (const release of held) release();
  }

  close(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}

// A task result carries its answer twice (`finalText` and `text`, the same string: bridge
// TaskResult). The journal stores it once and puts `finalText` back when it reads an entry, so a
// replayed guest sees exactly the object the live run saw (same keys, same order: invariant 5).
// A result whose two fields differ is stored with both and read unchanged.
const RESULT_DEPTH = 4;

function isTaskResult(v: Record<string, unknown>): boolean {
  return typeof v.taskId === 'string' && typeof v.kind === 'string' && typeof v.text === 'string';
}

function mapResults(
  value: unknown,
  depth: number,
  f: (r: Record<string, unknown>) => Record<string, unknown>,
): unknown {
  if (depth > RESULT_DEPTH || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const m = mapResults(v, depth + 1, f);
      if (m !== v) changed = true;
      return m;
    });
    return changed ? out : value;
  }
  const record = value as Record<string, unknown>;
  if (isTaskResult(record)) return f(record);
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(record)) {
    const m = mapResults(v, depth + 1, f);
    if (m !== v) {
      out ??= { ...record };
      out[k] = m;
    }
  }
  return out ?? value;
}

function dropFinalText(r: Record<string, unknown>): Record<string, unknown> {
  if (!('finalText' in r) || r.finalText !== r.text) return r;
  const { finalText: _same, ...rest } = r;
  return rest;
}

function restoreFinalText(r: Record<string, unknown>): Record<string, unknown> {
  if ('finalText' in r) return r; // stored with both (they differ): nothing to restore
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === 'text') out.finalText = v;
    out[k] = v;
  }
  return out;
}

/** The entry as the journal stores it: each task result's answer once. */
export function compactEntry(entry: JournalEntry): JournalEntry {
  if (!entry.outcome.ok) return entry;
  const value = mapResults(entry.outcome.value, 0, dropFinalText);
  return value === entry.outcome.value ? entry : { ...entry, outcome: { ok: true, value } };
}

/**
 * A journal as the live run delivered it, in delivery order: each entry expanded (expandEntry)
 * and each `wait` answer that refers to a child-result record given that record's result. Throws
 * WF_ENGINE_REPLAY_DIVERGED when a reference has no record before it. Journals without records
 * or references read as before.
 */
export function readJournal(entries: readonly JournalEntry[]): JournalEntry[] {
  const sorted = [...entries].sort((a, b) => a.settleSeq - b.settleSeq);
  const records = new Map<string, unknown>();
  return sorted.map((entry) => {
    if (!entry.outcome.ok) return expandEntry(entry);
    const envelope = entry.outcome.value as { value?: unknown } | null;
    if (isChildResult(entry)) {
      const r = envelope?.value as { taskId?: unknown } | null | undefined;
      if (r && typeof r.taskId === 'string') records.set(r.taskId, r);
      return expandEntry(entry);
    }
    const ref = entry.method === 'wait' ? childResultRef(envelope?.value) : undefined;
    if (ref === undefined) return expandEntry(entry);
    const record = records.get(ref);
    if (record === undefined) {
      throw new EngineError(
        'WF_ENGINE_REPLAY_DIVERGED',
        `resume cannot read the journal: the wf.wait answer of call #${entry.seq} refers to the child-result record of ${ref}, which the journal does not hold before it; the journal is incomplete or was edited`,
      );
    }
    return expandEntry({
      ...entry,
      outcome: { ok: true, value: { ...envelope, value: record } },
    });
  });
}

/** The entry as the live run delivered it, from either journal format. */
export function expandEntry(entry: JournalEntry): JournalEntry {
  if (!entry.outcome.ok) return entry;
  const value = mapResults(entry.outcome.value, 0, restoreFinalText);
  return value === entry.outcome.value ? entry : { ...entry, outcome: { ok: true, value } };
}

const DEFAULT_CAUSE = 'the workflow no longer makes the calls the run recorded';

/**
 * Where two inputs first differ, as `at <path>: journal <a>, now <b>` (depth-first, keys in the
 * journaled order, then keys only the new input has). Bounded by the input caps of a call.
 */
export function firstDifference(recorded: unknown, now: unknown, path = '$'): string {
  const show = (v: unknown) => (v === undefined ? 'nothing' : preview(v, 60));
  const bothObjects =
    typeof recorded === 'object' &&
    recorded !== null &&
    typeof now === 'object' &&
    now !== null &&
    Array.isArray(recorded) === Array.isArray(now);
  if (bothObjects) {
    const a = recorded as Record<string, unknown>;
    const b = now as Record<string, unknown>;
    const step = (k: string) => (Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
    const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !(k in a))];
    for (const k of keys) {
      if (jsonText(a[k]) !== jsonText(b[k])) return firstDifference(a[k], b[k], step(k));
    }
    const order = (o: object) => jsonText(Object.keys(o));
    if (order(a) !== order(b))
      return `at ${path}: its keys are in another order (journal ${order(a)}, now ${order(b)})`;
  }
  return `at ${path}: journal ${show(recorded)}, now ${show(now)}`;
}

function preview(value: unknown, max = 120): string {
  const text = jsonText(value);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function errorRecord(e: unknown): { code: string; message: string; data?: unknown } {
  const x = (typeof e === 'object' && e !== null ? e : {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  const code = typeof x.code === 'string' ? x.code : 'WF_ENGINE_HOST_ERROR';
  const message = typeof x.message === 'string' ? x.message : String(e);
  let data: unknown;
  if (x.data !== undefined) {
    try {
      data = JSON.parse(JSON.stringify(x.data));
    } catch {
      data = undefined;
    }
  }
  return data === undefined ? { code, message } : { code, message, data };
}

function rebuildError(error: { code: string; message: string; data?: unknown }): Error {
  const e = new Error(error.message) as Error & { code: string; data?: unknown };
  e.code = error.code;
  // `data.runControl` survives, so a replayed run-control error fails the resumed run too.
  if (error.data !== undefined) e.data = error.data;
  return e;
}
