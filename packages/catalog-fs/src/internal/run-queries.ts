// The run store's read side: loading a run for resume, listing, showing, tailing events and
// resolving a run id or display alias. Reads never take a lock; they parse defensively.
import {
  checkRecord,
  JOURNAL_ENTRY_SCHEMA,
  type RecordSchema,
  RUN_START_RECORD_SCHEMA,
} from '@wf/bridge/run-records';
import { CatalogFsCode, CatalogFsError } from '../errors.js';
import { fail } from './failure.js';
import type { Result } from './../errors.js';
import type { RunSummary } from '../run-store-types.js';
import type { JournalEntryRecord, RunEventRecord, RunStartRecordShape } from '../run-types.js';
import {
  CODES,
  checkRunId,
  isTerminal,
  liveRun,
  MAX_LOG_BYTES,
  MAX_SNAPSHOT_BYTES,
  openBase,
  openRun,
  parseLines,
  readAlias,
  RUN_ID_PATTERN,
  recordIssueText,
  type RunStoreState,
  runIds,
  summarize,
} from './run-layout.js';
import { mapBounded } from './map-bounded.js';
import { appendIndex, type IndexLine, scanStore } from './run-index.js';
import { recentFromIndex } from './run-index-recent.js';
import { JOURNAL_REF, resolveJournalFiles } from './run-journal-files.js';
import { type Recovered, recoverScanned, scanOfOpen } from './run-recovery.js';
import { flushRun } from './run-recorder.js';
import {
  entryPath,
  openChildDir,
  readRegularFile,
  readRegularFileFrom,
  type SafeDir,
  withDir,
} from './safe-dir.js';

export async function loadRun(
  s: RunStoreState,
  runId: string,
): Promise<
  | { readonly start: RunStartRecordShape; readonly journal: readonly JournalEntryRecord[] }
  | undefined
> {
  checkRunId(runId);
  const run = liveRun(s, runId);
  if (run) await flushRun(s, run, false);
  return withDir(await openRun(s, runId), async (dir) => {
    const raw = await readRegularFile(dir, 'start.json', MAX_SNAPSHOT_BYTES, CODES);
    if (!raw) return undefined;
    const start = parseRecord(
      raw.data.toString('utf8'),
      entryPath(dir.path, 'start.json'),
      RUN_START_RECORD_SCHEMA,
    ) as RunStartRecordShape;
    const log = await readRegularFile(dir, 'journal.jsonl', MAX_LOG_BYTES, CODES);
    const file = entryPath(dir.path, 'journal.jsonl');
    const lines = parseJournal(log?.data.toString('utf8') ?? '', file);
    const journal = await resolveJournalFiles(s, runId, lines);
    checkResolved(lines, journal, file);
    return { start, journal };
  });
}

/** One record file's JSON, checked against its schema; a misfit names the file and the field. */
function parseRecord(text: string, file: string, schema: RecordSchema): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CatalogFsError(
      CatalogFsCode.RunCorrupt,
      `${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const found = checkRecord(schema, value);
  if (found) throw new CatalogFsError(CatalogFsCode.RunCorrupt, recordIssueText(file, found));
  return value;
}

/**
 * The journal for resume, strictly: a resume replays it as the truth, so a whole line that is not
 * a journal entry refuses the resume, naming the file, the line and the field, instead of being
 * skipped (a skipped answer would run again live, or diverge). A torn last line (a crash
 * mid-write) is no entry yet and is ignored; a line repeated by a retried batch is kept once.
 * A line that refers to an entry stored in its own file carries only its position here; the
 * entry itself is checked once it is read back (`checkResolved`).
 */
function parseJournal(text: string, file: string): JournalEntryRecord[] {
  const out: JournalEntryRecord[] = [];
  const end = text.lastIndexOf('\n');
  const lines = end < 0 ? [] : text.slice(0, end).split('\n');
  let last = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') continue;
    const where = `${file} line ${i + 1}`;
    const entry = (
      isReferenceLine(line)
        ? parseRecord(line, where, JOURNAL_REF_LINE_SCHEMA)
        : parseRecord(line, where, JOURNAL_ENTRY_SCHEMA)
    ) as JournalEntryRecord;
    if (entry.settleSeq <= last) continue;
    last = entry.settleSeq;
    out.push(entry);
  }
  return out;
}

/** A journal line standing for an entry in its own file (`run-journal-files.ts`). */
function isReferenceLine(line: string): boolean {
  return line.includes(`"${JOURNAL_REF}":`);
}

/** Its position and method; the reference itself is checked where it is followed. */
const JOURNAL_REF_LINE_SCHEMA: RecordSchema = {
  seq: JOURNAL_ENTRY_SCHEMA.seq as RecordSchema[string],
  settleSeq: JOURNAL_ENTRY_SCHEMA.settleSeq as RecordSchema[string],
  method: JOURNAL_ENTRY_SCHEMA.method as RecordSchema[string],
  settledAt: JOURNAL_ENTRY_SCHEMA.settledAt as RecordSchema[string],
};

/** Entries read back from their own files meet the same schema as a journal line. */
function checkResolved(
  lines: readonly JournalEntryRecord[],
  entries: readonly JournalEntryRecord[],
  file: string,
): void {
  for (const [i, entry] of entries.entries()) {
    const ref = (lines[i] as unknown as Record<string, unknown>)[JOURNAL_REF] as
      | { readonly file?: unknown }
      | undefined;
    if (ref === undefined) continue;
    const found = checkRecord(JOURNAL_ENTRY_SCHEMA, entry);
    if (found)
      throw new CatalogFsError(
        CatalogFsCode.RunCorrupt,
        recordIssueText(`${file} entry ${String(ref.file)}`, found),
      );
  }
}

export async function listRuns(s: RunStoreState): Promise<readonly RunSummary[]> {
  const base = await openBase(s, false);
  if (!base) return [];
  try {
    const out: RunSummary[] = [];
    for (const runId of await runIds(base)) {
      const summary = await summarize(s, base, runId);
      if (summary) out.push(summary);
    }
    const started = (s: RunSummary) =>
      typeof s.snapshot?.startedAt === 'number' ? s.snapshot.startedAt : 0;
    return out.sort((a, b) => started(b) - started(a));
  } finally {
    await base.close();
  }
}

/**
 * The newest `limit` runs (by start time, as listRuns) and how many there are. Reads the runs index
 * and the run.json of the runs it returns, not of every stored run; runs the index does not know
 * are read once and added to it. With `recover`, crash recovery runs first over the same directory
 * listing and index read (one pass instead of two: `wf runs` opens its store without recovery).
 */
export async function listRecentRuns(
  s: RunStoreState,
  limit: number,
  options: { readonly recover?: boolean } = {},
): Promise<{
  readonly runs: readonly RunSummary[];
  readonly total: number;
  readonly interrupted?: readonly string[];
  readonly deferred?: Recovered['deferred'];
}> {
  const base = await openBase(s, false);
  if (!base)
    return { runs: [], total: 0, ...(options.recover ? { interrupted: [], deferred: [] } : {}) };
  try {
    const keep = limit > 0 ? Math.floor(limit) : 0;
    // A page: from the index alone when it vouches for the store (run-index-recent.ts).
    const fast = keep <= PICK_MAX ? await recentFromIndex(base, keep) : undefined;
    if (fast) {
      // Recovery opens the runs the index has not seen end, as over a full scan; trash and
      // abandoned temp files wait for a full pass (trash makes the link count disagree).
      const recovered = options.recover
        ? await recoverScanned(s, base, scanOfOpen(fast))
        : undefined;
      const runs = await readSummaries(s, base, fast.newest, new Map());
      return { runs, total: fast.total, ...(recovered ?? {}) };
    }
    const scan = await scanStore(base);
    const recovered = options.recover ? await recoverScanned(s, base, scan) : undefined;
    const { index } = scan;
    const read = new Map<string, RunSummary>();
    const repair: IndexLine[] = [];
    // A few newest runs are picked in one sweep (most runs lose one comparison); --all sorts.
    const pick = keep <= PICK_MAX;
    const order: { runId: string; startedAt: number }[] = [];
    let total = 0;
    for (const runId of scan.runIds) {
      let startedAt = index.get(runId)?.startedAt;
      if (startedAt === undefined) {
        const summary = await summarize(s, base, runId);
        if (!summary) continue;
        read.set(runId, summary);
        const snap = summary.snapshot;
        startedAt = typeof snap?.startedAt === 'number' ? snap.startedAt : 0;
        if (snap)
          repair.push({ runId, startedAt, ...(isTerminal(snap.status) ? { ended: true } : {}) });
      }
      total++;
      if (pick) keepNewest(order, keep, { runId, startedAt });
      else order.push({ runId, startedAt });
    }
    await appendIndex(base, repair);
    // Stable sort over ids in name order: the same order listRuns gives.
    if (!pick) order.sort((a, b) => b.startedAt - a.startedAt);
    const runs = await readSummaries(s, base, order.slice(0, keep), read);
    return { runs, total, ...(recovered ?? {}) };
  } finally {
    await base.close();
  }
}

/**
 * The summaries of `page` (those already read come from `read`), in its order; runs removed since
 * they were listed are left out. Read side by side: one at a time, each run's four or five file
 * operations would wait on the thread pool in turn.
 */
async function readSummaries(
  s: RunStoreState,
  base: SafeDir,
  page: readonly { readonly runId: string }[],
  read: ReadonlyMap<string, RunSummary>,
): Promise<RunSummary[]> {
  const summaries = await mapBounded(
    page,
    SUMMARY_READS,
    async ({ runId }) => read.get(runId) ?? (await summarize(s, base, runId)),
  );
  return summaries.filter((x): x is RunSummary => x !== undefined);
}

/** Runs whose files listRecent reads at once (each holds two descriptors while it reads). */
const SUMMARY_READS = 8;

/** Up to this many runs, listRecent picks the newest in one sweep instead of sorting them all. */
const PICK_MAX = 100;

/**
 * Keeps the `keep` newest runs in `top`, newest first and ties in the order offered (name order):
 * the first `keep` of a stable sort by start time, without sorting every stored run.
 */
function keepNewest(
  top: { runId: string; startedAt: number }[],
  keep: number,
  run: { runId: string; startedAt: number },
): void {
  const last = top[top.length - 1];
  if (keep === 0 || (top.length >= keep && last !== undefined && run.startedAt <= last.startedAt))
    return;
  let at = top.length;
  while (at > 0 && (top[at - 1]?.startedAt ?? 0) < run.startedAt) at--;
  top.splice(at, 0, run);
  if (top.length > keep) top.pop();
}

export async function showRun(
  s: RunStoreState,
  runId: string,
): Promise<Result<{ run: RunSummary }>> {
  try {
    checkRunId(runId);
    const found = await withDir(await openBase(s, false), async (base) => ({
      summary: await summarize(s, base, runId),
      exists: (await base.io.lstatIfAny(base.at(runId)).catch(() => undefined)) !== undefined,
    }));
    const summary = found?.summary;
    if (!summary) {
      throw new CatalogFsError(
        CatalogFsCode.RunNotFound,
        found?.exists
          ? `no run ${runId}: its directory holds a start that never completed (a crash or a full disk while it began; nothing was recorded), which recovery removes`
          : `no run ${runId}`,
      );
    }
    if (summary.error && !summary.snapshot) return { ok: false, error: summary.error };
    return { ok: true, run: summary };
  } catch (error) {
    return fail(error);
  }
}

export async function readEvents(
  s: RunStoreState,
  runId: string,
  eventOptions: { readonly after?: number; readonly limit?: number } = {},
): Promise<readonly RunEventRecord[]> {
  checkRunId(runId);
  const run = liveRun(s, runId);
  if (run) await flushRun(s, run, false);
  const after = eventOptions.after ?? 0;
  // Tailing: a caller passing the last seq it saw reads only the bytes appended since.
  const cached = s.tails.get(runId);
  const read = async (offset: number) =>
    withDir(await openRun(s, runId), (dir) =>
      readRegularFileFrom(dir, 'events.jsonl', offset, MAX_LOG_BYTES, CODES),
    );
  let base = cached && after >= cached.lastSeq ? cached.offset : 0;
  let last = base > 0 && cached ? cached.lastSeq : 0;
  let chunk = await read(base);
  if (chunk && base > 0 && (chunk.ino !== cached?.ino || chunk.size < base)) {
    // Replaced or truncated by hand: start over.
    base = 0;
    last = 0;
    chunk = await read(0);
  }
  if (!chunk) {
    s.tails.delete(runId);
    const dir = await openRun(s, runId);
    if (!dir) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
    await dir.close();
    throw new CatalogFsError(
      CatalogFsCode.RunCorrupt,
      `${entryPath(dir.path, 'events.jsonl')} is missing: the run's event log was removed or never written`,
    );
  }
  const end = chunk.data.lastIndexOf(0x0a);
  const whole = end < 0 ? '' : chunk.data.subarray(0, end + 1).toString('utf8');
  const parsed = parseLines<RunEventRecord>(whole, 'seq', last);
  s.tails.set(runId, {
    ino: chunk.ino,
    offset: base + end + 1,
    lastSeq: parsed.at(-1)?.seq ?? last,
  });
  const all = parsed.filter((e) => e.seq > after);
  return eventOptions.limit === undefined ? all : all.slice(0, eventOptions.limit);
}

/** Existence checks of alias.json in flight at once (the nonblocking store's thread pool). */
const ALIAS_CHECKS = 16;

/**
 * The runs whose display name is `target`. Most runs have none (alias.json is written only by
 * rename()), so each run costs one lstat of that file, not a read of its run.json: a mistyped id
 * over 20,000 stored runs no longer reads them all. The few runs that have one are read through
 * the same no-follow opens as every other read (the lstat only decides which to read).
 */
async function aliasedAs(s: RunStoreState, target: string): Promise<string[]> {
  const base = await openBase(s, false);
  if (!base) return [];
  try {
    const ids = await runIds(base);
    const named = await mapBounded(ids, ALIAS_CHECKS, async (runId) => {
      const st = await base.io
        .lstatIfAny(entryPath(base.at(runId), 'alias.json'))
        .catch(() => undefined);
      if (!st?.isFile()) return false;
      const dir = await openChildDir(base, runId, { create: false, codes: CODES }).catch(
        () => undefined,
      );
      return (await withDir(dir, (d) => readAlias(d))) === target;
    });
    return ids.filter((_, i) => named[i]);
  } finally {
    await base.close();
  }
}

export async function resolveRun(
  s: RunStoreState,
  target: string,
): Promise<Result<{ runId: string }>> {
  try {
    if (typeof target !== 'string' || target === '')
      throw new CatalogFsError(CatalogFsCode.RunNotFound, 'no run target given');
    if (RUN_ID_PATTERN.test(target) && !target.includes('..')) {
      const exists = await withDir(await openRun(s, target), async () => true);
      if (exists) return { ok: true, runId: target };
    }
    const matches = await aliasedAs(s, target);
    if (matches.length === 1) return { ok: true, runId: matches[0]! };
    throw new CatalogFsError(
      CatalogFsCode.RunNotFound,
      matches.length > 1
        ? `"${target}" names ${matches.length} runs: ${matches.join(', ')}`
        : `no run or alias "${target}"`,
    );
  } catch (error) {
    return fail(error);
  }
}
