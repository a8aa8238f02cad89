// The run's durable journal: the WfJournal virtual object keyed by run id holds one state entry
// per delivered call (`e<settleSeq>`) and the count. The executor appends in delivery order, one
// request at a time, and never waits for it before delivering: the stored journal is always a
// prefix of one execution, which is all a continued run needs (invariant 5).
import type { BackendJournal, JournalEntry } from '@wf/engine';
import { RestateBackendError } from '../errors.js';
import { type BlobPolicy, fromRef, toRef } from './blobs.js';
import { callPatiently, httpJson, parseAnswer, sleep } from './http.js';
import { JOURNAL_OBJECT } from './names.js';

const APPEND_LINGER_MS = 20;

export async function openRestateJournal(
  ingress: string,
  runId: string,
  signal: AbortSignal,
  fail: (error: { code: string; message: string }) => void,
  blobs: BlobPolicy,
  lingerMs = APPEND_LINGER_MS,
): Promise<BackendJournal & { flushed(): Promise<void>; broken(): boolean }> {
  const base = `${ingress}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}`;
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
  // Entries waiting for the request in flight: they go together in the next one (a fan-out's
  // answers arrive at once; one request each would queue behind each other). A request also
  // waits APPEND_LINGER_MS for the rest of its delivery burst: children finish a few ms apart,
  // and nothing waits on an append but the run's end, so lingering saves appends for free.
  let pending: JournalEntry[] = [];
  const linger = () => sleep(lingerMs, signal);
  const flush = async () => {
    const taken = pending;
    pending = [];
    if (taken.length === 0 || signal.aborted || broken) return;
    try {
      for (const batch of await requests(taken, blobs, runId, signal)) {
        if (!(await send(batch))) return;
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
  const send = async (batch: JournalEntry[]): Promise<boolean> => {
    const first = batch[0] as JournalEntry;
    const last = batch[batch.length - 1] as JournalEntry;
    const answer = await callPatiently(
      `journaling deliveries #${first.settleSeq}-${last.settleSeq} of ${runId}`,
      () => httpJson('POST', `${base}/append`, batch),
      signal,
    );
    const out = parseAnswer<{ ok: boolean; count: number }>('journal append', answer);
    if (out.ok) return true;
    broken = true;
    fail(
      new RestateBackendError(
        'WF_RESTATE_JOURNAL_CONFLICT',
        `the journal of ${runId} refused deliveries #${first.settleSeq}-${last.settleSeq}: it holds ${out.count} entries written by another attempt of this run`,
      ),
    );
    return false;
  };
  return {
    entries,
    append(entry) {
      // Entries this attempt replayed are stored already; after the attempt ended (the server
      // lost it, another worker continues), nothing this one produces is the run's any more.
      if (entry.settleSeq <= known || signal.aborted || broken) return;
      pending.push(entry);
      if (pending.length === 1) chain = chain.then(linger).then(flush);
    },
    flushed: () => chain,
    broken: () => broken,
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
      input: await toRef(blobs, entry.input, `the input of ${what}`, signal),
      outcome: (await toRef(
        blobs,
        entry.outcome,
        `the answer of ${what}`,
        signal,
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
