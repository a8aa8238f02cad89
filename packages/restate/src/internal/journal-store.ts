// The run's durable journal: the WfJournal virtual object keyed by run id holds one state entry
// per delivered call (`e<settleSeq>`) and the count. The executor appends in delivery order, one
// request at a time, and never waits for it before delivering: the stored journal is always a
// prefix of one execution, which is all a continued run needs (invariant 5).
import type { BackendJournal, JournalEntry } from '@wf/engine';
import { RestateBackendError } from '../errors.js';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { JOURNAL_OBJECT } from './names.js';

export async function openRestateJournal(
  ingress: string,
  runId: string,
  signal: AbortSignal,
  fail: (error: { code: string; message: string }) => void,
): Promise<BackendJournal & { flushed(): Promise<void>; broken(): boolean }> {
  const base = `${ingress}/${JOURNAL_OBJECT}/${encodeURIComponent(runId)}`;
  const entries = parseAnswer<JournalEntry[]>(
    `loading the journal of ${runId}`,
    await callPatiently(
      `loading the journal of ${runId}`,
      () => httpJson('POST', `${base}/entries`, null),
      signal,
    ),
  );
  const known = entries.length;
  let chain: Promise<void> = Promise.resolve();
  let broken = false;
  // Entries waiting for the request in flight: they go together in the next one (a fan-out's
  // answers arrive at once; one request each would queue behind each other).
  let pending: JournalEntry[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (batch.length === 0 || signal.aborted || broken) return;
    const first = batch[0] as JournalEntry;
    const last = batch[batch.length - 1] as JournalEntry;
    try {
      const answer = await callPatiently(
        `journaling deliveries #${first.settleSeq}-${last.settleSeq} of ${runId}`,
        () => httpJson('POST', `${base}/append`, batch),
        signal,
      );
      const out = parseAnswer<{ ok: boolean; count: number }>('journal append', answer);
      if (!out.ok) {
        broken = true;
        fail(
          new RestateBackendError(
            'WF_RESTATE_JOURNAL_CONFLICT',
            `the journal of ${runId} refused deliveries #${first.settleSeq}-${last.settleSeq}: it holds ${out.count} entries written by another attempt of this run`,
          ),
        );
      }
    } catch (e) {
      if (signal.aborted) return;
      broken = true;
      fail({
        code: 'WF_RESTATE_UNREACHABLE',
        message: `the journal of ${runId} could not be written: ${String((e as Error)?.message ?? e)}`,
      });
    }
  };
  return {
    entries,
    append(entry) {
      // Entries this attempt replayed are stored already; after the attempt ended (the server
      // lost it, another worker continues), nothing this one produces is the run's any more.
      if (entry.settleSeq <= known || signal.aborted || broken) return;
      pending.push(entry);
      if (pending.length === 1) chain = chain.then(flush);
    },
    flushed: () => chain,
    broken: () => broken,
  };
}
