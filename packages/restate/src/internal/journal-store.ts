// The run's durable journal: the WfJournal virtual object keyed by run id holds one state entry
// per delivered call (`e<settleSeq>`) and the count. The executor appends in delivery order, one
// request at a time, and never waits for it before delivering: the stored journal is always a
// prefix of one execution, which is all a continued run needs (invariant 5).
import type {
  BackendJournal,
  JournalEntry,
  RunEvent,
  RunFinishRecord,
  RunStartRecord,
} from '@wf/engine';
import { RestateBackendError } from '../errors.js';
import { type BlobPolicy, fromRef, toRef } from './blobs.js';
import { callPatiently, httpJson, parseAnswer, sleep } from './http.js';
import type { JournalAppend } from './journal-object.js';
import { JOURNAL_OBJECT } from './names.js';

const APPEND_LINGER_MS = 20;

export async function openRestateJournal(
  ingress: string,
  runId: string,
  signal: AbortSignal,
  fail: (error: { code: string; message: string }) => void,
  blobs: BlobPolicy,
  lingerMs = APPEND_LINGER_MS,
): Promise<RestateJournal> {
  const base = `${ingress}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}`;
  // This attempt's number, and where the run's stored events end: its own follow them.
  const opened = parseAnswer<{ attempt: number; lastSeq: number }>(
    `opening the record of ${runId}`,
    await callPatiently(
      `opening the record of ${runId}`,
      () => httpJson('POST', `${base}/open`, null),
      signal,
    ),
  );
  // Page by page (each answer below the message limit), large inputs and answers by reference.
  const entries: JournalEntry[] = [];
  for (;;) {
    const what = `loading the journal of ${runId}`;
    const page = parseAnswer<{ entries: JournalEntry[]; more: boolean }>(
      what,
      await callPatiently(
        what,
        () => httpJson('POST', `${base}/page`, { from: entries.length + 1 }),
        signal,
      ),
    );
    for (const e of page.entries) {
      entries.push({
        ...e,
        input: await fromRef(
          blobs,
          e.input,
          `the input of delivery #${e.settleSeq} of ${runId}`,
          signal,
        ),
        outcome: await fromRef(
          blobs,
          e.outcome,
          `the answer of delivery #${e.settleSeq} of ${runId}`,
          signal,
        ),
      });
    }
    if (!page.more || page.entries.length === 0) break;
  }
  const known = entries.length;
  let chain: Promise<void> = Promise.resolve();
  let broken = false;
  // The durable record's part of the next request.
  let events: RunEvent[] = [];
  let start: RunStartRecord | undefined;
  let finish: RunFinishRecord | undefined;
  // Entries waiting for the request in flight: they go together in the next one (a fan-out's
  // answers arrive at once; one request each would queue behind each other). A request also
  // waits APPEND_LINGER_MS for the rest of its delivery burst: children finish a few ms apart,
  // and nothing waits on an append but the run's end, so lingering saves appends for free.
  let pending: JournalEntry[] = [];
  const linger = () => sleep(lingerMs, signal);
  const flush = async () => {
    const taken = pending;
    pending = [];
    const record = { events, start, finish };
    events = [];
    start = undefined;
    finish = undefined;
    const hasRecord = record.events.length > 0 || record.start || record.finish;
    if ((taken.length === 0 && !hasRecord) || signal.aborted || broken) return;
    try {
      const batches = await requests(taken, blobs, runId, signal);
      if (batches.length === 0) batches.push([]);
      for (const [i, batch] of batches.entries()) {
        const last = i === batches.length - 1;
        const extra = last ? await storedRecord(record, blobs, runId, signal) : {};
        if (!(await send(batch, extra))) return;
      }
    } catch (e) {
      if (signal.aborted) return;
      broken = true;
      fail(
        RestateBackendError.is(e)
          ? { code: e.code, message: e.message }
          : {
              code: 'WF_RESTATE_UNREACHABLE',
              message: `the journal of ${runId} could not be written: ${String((e as Error)?.message ?? e)}`,
            },
      );
    }
  };
  /** One append request; false once the journal refused it (the run is failed then). */
  const send = async (
    batch: JournalEntry[],
    extra: Omit<JournalAppend, 'entries' | 'attempt'>,
  ): Promise<boolean> => {
    const first = batch[0];
    const last = batch[batch.length - 1];
    const what = first
      ? `journaling deliveries #${first.settleSeq}-${last?.settleSeq} of ${runId}`
      : `recording events of ${runId}`;
    const body: JournalAppend = { entries: batch, attempt: opened.attempt, ...extra };
    const answer = await callPatiently(
      what,
      () => httpJson('POST', `${base}/append`, body),
      signal,
    );
    const out = parseAnswer<{ ok: boolean; count: number }>('journal append', answer);
    if (out.ok) return true;
    broken = true;
    fail(
      new RestateBackendError(
        'WF_RESTATE_JOURNAL_CONFLICT',
        `the journal of ${runId} refused deliveries #${first?.settleSeq}-${last?.settleSeq}: it holds ${out.count} entries written by another attempt of this run`,
      ),
    );
    return false;
  };
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    chain = chain.then(linger).then(() => {
      scheduled = false;
      return flush();
    });
  };
  // The record's events: this attempt's numbered on from the stored ones; a continued attempt
  // leaves out what its replay re-emits of the recorded part (marked `replayed`).
  const continued = opened.lastSeq > 0;
  const recorder: DurableRecord = {
    begin: (run) => {
      start = run;
      schedule();
    },
    event: (e) => {
      if (signal.aborted || broken) return;
      if (continued && (e.data as { replayed?: unknown } | undefined)?.replayed === true) return;
      events.push(capEvent({ ...e, seq: e.seq + opened.lastSeq }));
      schedule();
    },
    finish: (record) => {
      finish = record;
      schedule();
    },
  };
  return {
    entries,
    append(entry) {
      // Entries this attempt replayed are stored already; after the attempt ended (the server
      // lost it, another worker continues), nothing this one produces is the run's any more.
      if (entry.settleSeq <= known || signal.aborted || broken) return;
      pending.push(entry);
      schedule();
    },
    recorder,
    flushed: () => chain,
    broken: () => broken,
  };
}

/** What the run's durable record is told by this attempt (the engine's recorder calls). */
export interface DurableRecord {
  begin(run: RunStartRecord): void;
  event(event: RunEvent): void;
  finish(record: RunFinishRecord): void;
}

export type RestateJournal = BackendJournal & {
  readonly recorder: DurableRecord;
  flushed(): Promise<void>;
  broken(): boolean;
};

/** An event's JSON above this is stored without its data (as the disk store does long lines). */
const MAX_EVENT_BYTES = 256 * 1024;

function capEvent(e: RunEvent): RunEvent {
  const text = JSON.stringify(e);
  if (text.length * 3 <= MAX_EVENT_BYTES || Buffer.byteLength(text) <= MAX_EVENT_BYTES) return e;
  return { ...e, data: { truncated: true, bytes: Buffer.byteLength(text) } };
}

/** The record's part of an append, its finish's result stored by reference when large. */
async function storedRecord(
  record: {
    events: RunEvent[];
    start: RunStartRecord | undefined;
    finish: RunFinishRecord | undefined;
  },
  blobs: BlobPolicy,
  runId: string,
  signal: AbortSignal,
): Promise<Omit<JournalAppend, 'entries' | 'attempt'>> {
  const finish =
    record.finish?.result === undefined
      ? record.finish
      : {
          ...record.finish,
          result: await toRef(blobs, record.finish.result, `the result of ${runId}`, signal, runId),
        };
  return {
    ...(record.events.length > 0 ? { events: record.events } : {}),
    ...(record.start ? { start: record.start } : {}),
    ...(finish ? { finish } : {}),
  };
}

/** Bytes of JSON per append request: well below Restate's message limit. */
const REQUEST_BYTES = 8 * 1024 * 1024;

/** Entries as stored (large inputs and answers by reference), in requests of bounded size. */
async function requests(
  entries: JournalEntry[],
  blobs: BlobPolicy,
  runId: string,
  signal: AbortSignal,
): Promise<JournalEntry[][]> {
  const out: JournalEntry[][] = [];
  let current: JournalEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const what = `delivery #${entry.settleSeq} of ${runId}`;
    const stored: JournalEntry = {
      ...entry,
      input: await toRef(blobs, entry.input, `the input of ${what}`, signal, runId),
      outcome: (await toRef(
        blobs,
        entry.outcome,
        `the answer of ${what}`,
        signal,
        runId,
      )) as JournalEntry['outcome'],
    };
    const size = Buffer.byteLength(JSON.stringify(stored));
    if (current.length > 0 && bytes + size > REQUEST_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(stored);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
