// Journal entries of any size the engine accepts are stored whole: an entry whose line would be
// over the store's `maxLineBytes` goes to its own file under `journal-entries/` (named by its
// delivery number), written and fsynced before the journal.jsonl line that refers to it, and the
// line holds only the entry's position and a reference `{ file, sha256, bytes }`. Reading a run
// for resume puts each referenced entry back, checked against its hash.
import { createHash } from './crypto.js';
import { CatalogFsCode, CatalogFsError } from '../errors.js';
import type { JournalEntryRecord } from '../run-types.js';
import {
  CODES,
  JOURNAL_FILES_DIR,
  type LiveRun,
  MAX_LOG_BYTES,
  openRun,
  type RunStoreState,
} from './run-layout.js';
import { openChildDir, readRegularFile, withDir, writeFileAtomic } from './safe-dir.js';

/** The key of a journal line that stands for an entry stored in its own file. */
export const JOURNAL_REF = 'journalRef';

interface JournalRef {
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The line for an entry whose text is over the line limit: its position and method stay on the
 * line (ordering, listings), the text goes to a side file queued on the live run.
 */
export function referenceLine(run: LiveRun, entry: JournalEntryRecord, text: string): string {
  const settleSeq = Number(entry.settleSeq);
  const file = `e${Number.isInteger(settleSeq) && settleSeq > 0 ? settleSeq : 0}-${sha256(text).slice(0, 16)}.json`;
  run.journalFiles.push({ name: file, text });
  const ref: JournalRef = { file, sha256: sha256(text), bytes: Buffer.byteLength(text) };
  return JSON.stringify({
    seq: entry.seq,
    settleSeq: entry.settleSeq,
    method: entry.method,
    settledAt: entry.settledAt,
    [JOURNAL_REF]: ref,
  });
}

/**
 * Writes the queued side files (each atomically and fsynced, then the run directory once so a
 * new `journal-entries/` survives a crash). Throws on failure, leaving the queue as it was: the
 * caller keeps the lines that refer to them back until a retry succeeds.
 */
export async function writeJournalFiles(s: RunStoreState, run: LiveRun): Promise<void> {
  if (run.journalFiles.length === 0) return;
  // A copy: entries recorded while these are written queue behind them for the next flush.
  const files = [...run.journalFiles];
  const written = await withDir(await openRun(s, run.runId), async (dir) => {
    const sub = await openChildDir(dir, JOURNAL_FILES_DIR, { create: true, codes: CODES });
    await withDir(sub, async (entries) => {
      for (const f of files) await writeFileAtomic(entries, f.name, f.text, 0o600, CODES);
    });
    await dir.sync();
    return true;
  });
  if (!written)
    throw new CatalogFsError(CatalogFsCode.RunIo, `run directory ${run.runId} vanished`);
  run.journalFiles = run.journalFiles.slice(files.length);
}

/**
 * The journal as the engine wrote it: each line that refers to a side file replaced by the entry
 * in that file. A missing, oversized, altered or mismatched file makes the run unreadable
 * (WF_CATALOG_RUN_CORRUPT naming it), never a journal with a hole.
 */
export async function resolveJournalFiles(
  s: RunStoreState,
  runId: string,
  lines: readonly JournalEntryRecord[],
): Promise<JournalEntryRecord[]> {
  if (!lines.some((l) => JOURNAL_REF in l)) return [...lines];
  const resolved = await withDir(await openRun(s, runId), async (dir) => {
    const entries = await openChildDir(dir, JOURNAL_FILES_DIR, { create: false, codes: CODES });
    const corrupt = (line: JournalEntryRecord, why: string) =>
      new CatalogFsError(
        CatalogFsCode.RunCorrupt,
        `journal entry ${String(line.settleSeq)} of run ${runId} is stored in ${JOURNAL_FILES_DIR}/, but ${why}`,
      );
    try {
      const out: JournalEntryRecord[] = [];
      for (const line of lines) {
        const ref = (line as unknown as Record<string, unknown>)[JOURNAL_REF] as
          | Partial<JournalRef>
          | undefined;
        if (ref === undefined) {
          out.push(line);
          continue;
        }
        if (typeof ref?.file !== 'string' || !/^e\d+-[0-9a-f]{16}\.json$/.test(ref.file))
          throw corrupt(line, 'its reference names no entry file');
        const raw = entries
          ? await readRegularFile(entries, ref.file, MAX_LOG_BYTES, CODES)
          : undefined;
        if (!raw) throw corrupt(line, `${ref.file} is missing`);
        const text = raw.data.toString('utf8');
        if (sha256(text) !== ref.sha256) throw corrupt(line, `${ref.file} does not match its hash`);
        let entry: JournalEntryRecord;
        try {
          entry = JSON.parse(text) as JournalEntryRecord;
        } catch {
          throw corrupt(line, `${ref.file} is not JSON`);
        }
        if (entry?.settleSeq !== line.settleSeq || entry.seq !== line.seq)
          throw corrupt(line, `${ref.file} holds another entry`);
        out.push(entry);
      }
      return out;
    } finally {
      await entries?.close();
    }
  });
  if (!resolved)
    throw new CatalogFsError(CatalogFsCode.RunNotFound, `run directory ${runId} vanished`);
  return resolved;
}
