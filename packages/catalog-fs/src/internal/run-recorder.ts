// The run recorder: the write side of the run store (the engine's RunRecorder port). Lines are
// buffered per live run and appended in batches under the fsync policy; run.json is coalesced.
import { createHash } from './crypto.js';
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { CatalogFsCode, CatalogFsError } from '../errors.js';
import type { RunOwner } from '../run-store-types.js';
import { appendIndex } from './run-index.js';
import type {
  JournalEntryRecord,
  RunEventRecord,
  RunFinishRecordShape,
  RunStartRecordShape,
} from '../run-types.js';
import {
  CODES,
  checkRunId,
  isTerminal,
  keyOf,
  LIVE,
  type LiveRun,
  liveRun,
  openBase,
  openRun,
  RESERVED,
  requireBase,
  type RunStoreState,
  startIdentity,
} from './run-layout.js';
import {
  errno,
  HOSTNAME,
  ioError,
  newTempName,
  openChildDir,
  processToken,
  type SafeDir,
  step,
  withDir,
  writeFileAtomic,
  writeFileCreateOnly,
  writeNewFile,
} from './safe-dir.js';
import { referenceLine, writeJournalFiles } from './run-journal-files.js';

const { O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** A per-run record file's text: indented JSON and a final newline. */
const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Stops a live run's timers, forgets it and closes its logs (finish, or the store's close). */
export async function retireRun(run: LiveRun): Promise<void> {
  clearInterval(run.leaseTimer);
  clearTimeout(run.fsyncTimer);
  clearTimeout(run.snapshotTimer);
  run.retired = true;
  LIVE.delete(run.key);
  await run.events.close().catch(() => undefined);
  await run.journal.close().catch(() => undefined);
}

/** One line of events.jsonl, without its newline; an event over `maxBytes` is shrunk. */
function jsonLine(value: unknown, maxBytes: number, shrink: () => unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined || overLine(text, maxBytes)) text = JSON.stringify(shrink());
  return text as string;
}

/** A UTF-16 unit is at most 3 UTF-8 bytes: short lines skip the byte count. */
const overLine = (text: string, maxBytes: number) =>
  text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes;

/** The entry's one-line JSON text: the engine's own when given, else serialised here. */
function journalText(entry: JournalEntryRecord, given: unknown): string | undefined {
  if (typeof given === 'string' && given !== '' && !given.includes('\n')) return given;
  try {
    return JSON.stringify(entry);
  } catch {
    return undefined;
  }
}

function sanitizeArtifactName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 64);
  return cleaned === '' ? 'artifact' : cleaned;
}

function capText(value: unknown, max: number): string | undefined {
  if (value === undefined) return undefined;
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max
    ? `${text.slice(0, max)}... (${text.length - max} more characters)`
    : text;
}

type Appended = { wrote: boolean; rest?: Buffer; error?: unknown };

function batchOf(rest: Buffer | undefined, lines: string[]): Buffer | undefined {
  // One string for the batch: "a\nb\n" (the buffer is not used again, the '' is the last newline).
  if (lines.length > 0) lines.push('');
  const fresh = lines.length > 0 ? Buffer.from(lines.join('\n')) : undefined;
  const buffer = rest && fresh ? Buffer.concat([rest, fresh]) : (rest ?? fresh);
  return buffer && buffer.length > 0 ? buffer : undefined;
}

/**
 * Appends the retried remainder and the new lines in one write loop. On failure returns the
 * unwritten tail, so a retry continues exactly where the kernel stopped (no split, no repeat).
 * Through the thread pool, not writeSync: synchronous appends cost less CPU but more wall time on
 * a loaded machine (the event loop waits for each write(2) instead of overlapping it), and a
 * stalled disk would hold the event loop.
 */
async function appendOut(handle: FileHandle, buffer: Buffer | undefined): Promise<Appended> {
  if (!buffer) return { wrote: false };
  let offset = 0;
  try {
    while (offset < buffer.length) {
      const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
    return { wrote: true };
  } catch (error) {
    return { wrote: offset > 0, rest: buffer.subarray(offset), error };
  }
}

export function persistSnapshot(s: RunStoreState, run: LiveRun): Promise<void> {
  run.snapshotChain = run.snapshotChain.then(async () => {
    if (run.snapshotTimer) {
      clearTimeout(run.snapshotTimer);
      run.snapshotTimer = undefined;
    }
    // Once the terminal snapshot is on disk, a coalesced write still queued has nothing to add.
    if (run.terminal) return;
    const text = `${JSON.stringify({ ...run.snapshot, updatedAt: Date.now() }, null, 2)}\n`;
    try {
      await withDir(await openRun(s, run.runId), (dir) =>
        writeFileAtomic(dir, 'run.json', text, 0o600, CODES),
      );
    } catch (error) {
      run.writeError = error;
    }
  });
  return run.snapshotChain;
}

/**
 * Writes a run's end, in the order that makes `completed` mean durable (invariant 12): the
 * result, then run.json with the terminal status, each fsynced before the next. The live
 * snapshot becomes the terminal one only once that is on disk, so no other write (a coalesced
 * snapshot, the store's close) can record a terminal status whose result is not there. When
 * run.json cannot be written, the result file written for it is removed again: a result.json
 * never stands beside a run that did not record its end.
 */
function writeTerminal(
  s: RunStoreState,
  run: LiveRun,
  terminal: Record<string, unknown>,
  resultText: string | undefined,
): Promise<void> {
  const written = run.snapshotChain.then(async () => {
    const dir = await openRun(s, run.runId);
    if (!dir)
      throw new CatalogFsError(CatalogFsCode.RunNotFound, `run ${run.runId} directory is gone`);
    await withDir(dir, async (d) => {
      if (resultText !== undefined)
        await writeFileAtomic(d, 'result.json', `${resultText}\n`, 0o600, CODES);
      try {
        const text = `${JSON.stringify({ ...terminal, updatedAt: Date.now() }, null, 2)}\n`;
        await writeFileAtomic(d, 'run.json', text, 0o600, CODES);
      } catch (error) {
        if (resultText !== undefined) await fsp.unlink(d.at('result.json')).catch(() => undefined);
        throw error;
      }
    });
    run.snapshot = terminal;
    run.terminal = true;
  });
  run.snapshotChain = written.catch(() => undefined);
  return written;
}

export function markDirty(s: RunStoreState, run: LiveRun): void {
  if (run.snapshotTimer) return;
  run.snapshotTimer = setTimeout(() => {
    run.snapshotTimer = undefined;
    void persistSnapshot(s, run);
  }, s.snapshotIntervalMs);
  run.snapshotTimer.unref();
}

async function sync(run: LiveRun): Promise<void> {
  if (!run.unsynced) return;
  run.unsynced = false;
  run.lastFsync = Date.now();
  await Promise.all([run.events.datasync(), run.journal.datasync()]);
}

/** Writes buffered lines (one write per file per batch) and applies the fsync policy. */
export function flushRun(s: RunStoreState, run: LiveRun, forceSync: boolean): Promise<void> {
  run.chain = run.chain.then(async () => {
    run.flushScheduled = false;
    const events = run.eventBuf;
    const journal = run.journalBuf;
    run.eventBuf = [];
    run.journalBuf = [];
    const ev = await appendOut(run.events, batchOf(run.eventRest, events));
    run.eventRest = ev.rest;
    // A line that refers to a side file is written only once that file is durable.
    const files = await writeJournalFiles(s, run).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (files !== undefined) run.journalBuf = journal.concat(run.journalBuf);
    const jr: Appended =
      files === undefined
        ? await appendOut(run.journal, batchOf(run.journalRest, journal))
        : { wrote: false, ...(run.journalRest ? { rest: run.journalRest } : {}) };
    run.journalRest = jr.rest;
    if (ev.wrote || jr.wrote) run.unsynced = true;
    const failed = ev.error ?? files ?? jr.error;
    if (failed !== undefined) {
      // Disk full...: the unwritten bytes are retried on the next flush (finish() forces one).
      run.writeError = failed;
      return;
    }
    try {
      if (s.policy === 'never' && !forceSync) return;
      if (forceSync || s.policy === 'always' || Date.now() - run.lastFsync >= s.fsyncIntervalMs) {
        await sync(run);
      } else if (run.unsynced && !run.fsyncTimer) {
        run.fsyncTimer = setTimeout(() => {
          run.fsyncTimer = undefined;
          void flushRun(s, run, true);
        }, s.fsyncIntervalMs);
        run.fsyncTimer.unref();
      }
      run.writeError = undefined;
    } catch (error) {
      run.writeError = error;
    }
  });
  return run.chain;
}

export function scheduleFlush(s: RunStoreState, run: LiveRun): void {
  if (run.flushScheduled) return;
  run.flushScheduled = true;
  setImmediate(() => void flushRun(s, run, false));
}

/**
 * Makes a run live in this process: its buffers, and the lease that marks the record as owned
 * (renewed while live, so a record whose owner stopped renewing is stale).
 */
export function goLive(
  s: RunStoreState,
  key: string,
  runId: string,
  snapshot: Record<string, unknown>,
  events: FileHandle,
  journal: FileHandle,
  identity: string,
  seqOffset: number,
): LiveRun {
  const live: LiveRun = {
    key,
    runId,
    snapshot,
    events,
    journal,
    eventBuf: [],
    journalBuf: [],
    journalFiles: [],
    eventRest: undefined,
    journalRest: undefined,
    chain: Promise.resolve(),
    flushScheduled: false,
    retired: false,
    lastFsync: Date.now(),
    unsynced: false,
    fsyncTimer: undefined,
    snapshotTimer: undefined,
    leaseTimer: undefined,
    snapshotChain: Promise.resolve(),
    artifacts: new Set(),
    writeError: undefined,
    pendingFinish: undefined,
    terminal: false,
    seqOffset,
    identity,
  };
  live.leaseTimer = setInterval(
    () => {
      // Loses nothing: once space returns, the buffered lines and a failed finish land.
      if (live.pendingFinish) {
        void finishRun(s, live.runId, live.pendingFinish).catch(() => undefined);
        return;
      }
      if (live.writeError !== undefined) void flushRun(s, live, true);
      live.snapshot.owner = ownerNow(s);
      void persistSnapshot(s, live);
    },
    Math.max(10, Math.floor(s.leaseMs / 3)),
  );
  live.leaseTimer.unref();
  LIVE.set(key, live);
  return live;
}

/** This process as a run's owner, its lease running from now. */
export function ownerNow(s: RunStoreState): RunOwner {
  return {
    pid: process.pid,
    token: processToken(),
    host: HOSTNAME,
    leaseUntil: Date.now() + s.leaseMs,
  };
}

/** run.json as begin() writes it: the start record's summary, `running`, owned by this process. */
function initialSnapshot(
  s: RunStoreState,
  run: RunStartRecordShape,
  now: number,
): Record<string, unknown> {
  return {
    format: 'wf.run',
    version: 1,
    runId: run.runId,
    workflow: run.workflow,
    status: 'running',
    execution: run.trust,
    startedAt: run.startedAt,
    updatedAt: now,
    eventCount: 0,
    lastSeq: 0,
    artifacts: [],
    ...(run.sourceRunId === undefined ? {} : { sourceRunId: run.sourceRunId }),
    ...(run.revisionOf === undefined ? {} : { revisionOf: run.revisionOf }),
    ...(run.resumedFromRunId === undefined ? {} : { resumedFromRunId: run.resumedFromRunId }),
    ...(run.resumedFrom === undefined ? {} : { resumedFrom: run.resumedFrom }),
    ...(run.provider === undefined ? {} : { provider: run.provider }),
    ...(run.simulated === undefined ? {} : { simulated: run.simulated }),
    owner: ownerNow(s),
  };
}

/**
 * Writes a run's start into `dir` (its private temp directory): the snapshots for resume and
 * audit (exactly what ran), run.json, and the two logs, created empty; all fsynced side by side,
 * then the directory. Returns the open logs; on failure closes what it opened and rethrows.
 */
async function writeStart(
  dir: SafeDir,
  run: RunStartRecordShape & { readonly capsule?: unknown },
  snapshot: Record<string, unknown>,
): Promise<[FileHandle, FileHandle]> {
  const { capsule, ...start } = run;
  const files: [string, string][] = [
    ['start.json', jsonText(start)],
    ['manifest.json', jsonText(run.manifest ?? null)],
    ['run.json', jsonText(snapshot)],
  ];
  if (typeof run.source === 'string') files.push(['script.js', run.source]);
  if (capsule !== undefined) files.push(['capsule.workflow.json', jsonText(capsule)]);
  const open = (name: string) =>
    fsp
      .open(dir.at(name), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
      .catch((error: unknown) => {
        throw ioError(CODES, `creating ${name} for ${run.runId}`, error);
      });
  // Every step settles before a failure is reported, so nothing is still being created in the
  // directory when the caller removes it.
  const steps = await Promise.allSettled([
    open('events.jsonl'),
    open('journal.jsonl'),
    ...files.map(([name, text]) => writeNewFile(dir, name, text, 0o600, CODES)),
  ]);
  const failed = steps.find((step) => step.status === 'rejected');
  const [events, journal] = steps
    .slice(0, 2)
    .flatMap((o) => (o.status === 'fulfilled' && o.value ? [o.value as FileHandle] : []));
  if (failed || !events || !journal) {
    await Promise.all([events, journal].map((log) => log?.close().catch(() => undefined)));
    throw (failed as PromiseRejectedResult | undefined)?.reason ?? new Error('a log did not open');
  }
  await dir.sync();
  return [events, journal];
}

/**
 * Records a run's start. The run directory is built under a temp name (a dotfile, never listed)
 * and published whole by one rename, so a crash or a full disk part-way leaves no run directory:
 * a run directory always holds a complete start. The temp directory of a writer that died is
 * removed by recovery's full pass, and a failed begin() removes its own.
 */
export async function beginRun(
  s: RunStoreState,
  run: RunStartRecordShape & { readonly capsule?: unknown },
): Promise<void> {
  checkRunId(run?.runId);
  const key = keyOf(s, run.runId);
  if (LIVE.has(key))
    throw new CatalogFsError(CatalogFsCode.RunExists, `run ${run.runId} is already live`);
  const exists = () =>
    new CatalogFsError(CatalogFsCode.RunExists, `run ${run.runId} already exists in ${base.path}`);
  const base = await requireBase(s);
  try {
    if (await base.io.lstatIfAny(base.at(run.runId))) throw exists();
    const temp = newTempName();
    try {
      await fsp.mkdir(base.at(temp), { mode: 0o700 });
    } catch (error) {
      throw ioError(CODES, `creating the run directory for ${run.runId}`, error);
    }
    const now = Date.now();
    const snapshot = initialSnapshot(s, run, now);
    let logs: [FileHandle, FileHandle] | undefined;
    try {
      const dir = await openChildDir(base, temp, { create: false, codes: CODES });
      if (!dir)
        throw new CatalogFsError(CatalogFsCode.RunIo, `run directory ${run.runId} vanished`);
      try {
        logs = await writeStart(dir, run, snapshot);
      } finally {
        await dir.close();
      }
      await step('run-begin-publish');
      try {
        await fsp.rename(base.at(temp), base.at(run.runId));
      } catch (error) {
        const code = errno(error);
        if (code === 'EEXIST' || code === 'ENOTEMPTY') throw exists();
        throw ioError(CODES, `publishing the run directory of ${run.runId}`, error);
      }
      await base.sync();
    } catch (error) {
      await Promise.all((logs ?? []).map((log) => log.close().catch(() => undefined)));
      await fsp.rm(base.at(temp), { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    await appendIndex(base, [{ runId: run.runId, startedAt: run.startedAt }]);
    const [events, journal] = logs;
    goLive(s, key, run.runId, snapshot, events, journal, startIdentity(run), 0);
  } finally {
    await base.close();
  }
}

export function recordEvent(s: RunStoreState, given: RunEventRecord): void {
  const run = liveRun(s, given?.runId);
  if (!run) return;
  // A continued run's events follow the ones its earlier attempts recorded.
  const event =
    run.seqOffset > 0 && typeof given.seq === 'number'
      ? { ...given, seq: given.seq + run.seqOffset }
      : given;
  run.eventBuf.push(
    jsonLine(event, s.maxLineBytes, () => ({
      seq: event.seq,
      runId: event.runId,
      type: event.type,
      time: event.time,
      data: { truncated: true, reason: 'the event was not JSON or exceeded s.maxLineBytes' },
    })),
  );
  run.snapshot.eventCount = (run.snapshot.eventCount as number) + 1;
  if (typeof event.seq === 'number') run.snapshot.lastSeq = event.seq;
  if (event.type === 'phase-started' && typeof event.data?.phase === 'string')
    run.snapshot.phase = event.data.phase;
  scheduleFlush(s, run);
  markDirty(s, run);
}

export function recordJournal(
  s: RunStoreState,
  runId: string,
  entry: JournalEntryRecord,
  text?: string,
): void {
  const run = liveRun(s, runId);
  if (!run) return;
  // Stored whole whatever its size (resume replays it): a line over the limit refers to a side file.
  let line: string | undefined = journalText(entry, text);
  if (line === undefined)
    line = JSON.stringify({
      ...entry,
      input: { truncated: true },
      outcome: {
        ok: false,
        error: { code: 'WF_CATALOG_RUN_IO', message: 'the journal entry is not JSON' },
      },
    });
  else if (overLine(line, s.maxLineBytes)) line = referenceLine(run, entry, line);
  run.journalBuf.push(line);
  scheduleFlush(s, run);
}

export async function writeArtifact(
  s: RunStoreState,
  runId: string,
  name: string,
  value: unknown,
): Promise<{ readonly name: string; readonly ref: string }> {
  checkRunId(runId);
  const run = liveRun(s, runId);
  if (!run)
    throw new CatalogFsError(CatalogFsCode.RunNotFound, `run ${runId} is not live in this store`);
  if (typeof name !== 'string' || name === '' || name.length > 256) {
    throw new CatalogFsError(
      CatalogFsCode.RunInvalidId,
      'an artifact name must be a string of 1 to 256 characters',
    );
  }
  if (run.artifacts.has(name)) {
    throw new CatalogFsError(
      CatalogFsCode.ArtifactExists,
      `artifact "${name}" was already written in run ${runId}`,
    );
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = undefined;
  }
  if (text === undefined)
    throw new CatalogFsError(CatalogFsCode.RunIo, `artifact "${name}" is not JSON-serializable`);
  if (Buffer.byteLength(text) > s.maxArtifactBytes) {
    throw new CatalogFsError(
      CatalogFsCode.RunIo,
      `artifact "${name}" is over the limit of ${s.maxArtifactBytes} bytes`,
    );
  }
  // The hash of the exact name keeps two names that sanitize alike apart.
  const file = `${sanitizeArtifactName(name)}-${createHash('sha256').update(name).digest('hex').slice(0, 16)}.json`;
  run.artifacts.add(name);
  try {
    const created = await withDir(await openRun(s, runId), async (dir) =>
      withDir(await openChildDir(dir, 'artifacts', { create: true, codes: CODES }), (artifacts) =>
        writeFileCreateOnly(artifacts, file, `${text}\n`, 0o600, CODES),
      ),
    );
    if (created === false) {
      throw new CatalogFsError(
        CatalogFsCode.ArtifactExists,
        `artifact "${name}" already exists in run ${runId}`,
      );
    }
    if (created === undefined)
      throw new CatalogFsError(CatalogFsCode.RunNotFound, `run ${runId} directory is gone`);
  } catch (error) {
    if (!(CatalogFsError.is(error) && error.code === CatalogFsCode.ArtifactExists))
      run.artifacts.delete(name);
    throw error;
  }
  const ref = `artifacts/${file}`;
  run.snapshot.artifacts = [
    ...(run.snapshot.artifacts as unknown[]),
    { name, ref, bytes: Buffer.byteLength(text) + 1 },
  ];
  markDirty(s, run);
  return { name, ref };
}

export function updateRun(
  s: RunStoreState,
  runId: string,
  patch: { readonly [key: string]: unknown },
): void {
  const run = liveRun(s, runId);
  if (!run || typeof patch !== 'object' || patch === null) return;
  for (const [key, value] of Object.entries(patch)) {
    if (RESERVED.has(key) || key === '__proto__' || key === 'constructor' || key === 'prototype')
      continue;
    // A live run's status is one of the two live values; terminal ones come from finish().
    if (key === 'status' && value !== 'running' && value !== 'paused') continue;
    run.snapshot[key] = value;
  }
  markDirty(s, run);
}

export async function finishRun(
  s: RunStoreState,
  runId: string,
  record: RunFinishRecordShape,
): Promise<void> {
  checkRunId(runId);
  const run = liveRun(s, runId);
  if (!run)
    throw new CatalogFsError(CatalogFsCode.RunNotFound, `run ${runId} is not live in this store`);
  if (!isTerminal(record?.status)) {
    throw new CatalogFsError(
      CatalogFsCode.RunIo,
      `finish needs a terminal status, got ${String(record?.status)}`,
    );
  }
  await flushRun(s, run, true);
  if (run.writeError !== undefined) {
    // Disk full...: the run stays live with its lines buffered; the lease tick retries.
    run.pendingFinish = record;
    throw ioError(CODES, `writing the events of run ${runId}`, run.writeError);
  }
  const endedAt = record.endedAt;
  // The result is serialised once for both result.json and the summary (10,000 results: ~4 MB).
  let resultJson: string | undefined;
  try {
    resultJson = record.result === undefined ? undefined : JSON.stringify(record.result);
  } catch {
    resultJson = undefined;
  }
  const summary = capText(
    typeof record.result === 'string' ? record.result : (resultJson ?? record.result),
    s.maxResultChars,
  );
  const terminal: Record<string, unknown> = {
    ...run.snapshot,
    status: record.status,
    endedAt,
    cost: record.cost,
    ...(summary === undefined ? {} : { resultSummary: summary }),
    ...(record.error === undefined ? {} : { error: record.error }),
    owner: { ...(run.snapshot.owner as RunOwner), leaseUntil: endedAt },
  };
  try {
    await writeTerminal(
      s,
      run,
      terminal,
      resultJson === undefined ? undefined : `{"result":${resultJson}}`,
    );
  } catch (error) {
    // Still live and still `running` on disk: the lease tick (or a second finish()) retries.
    run.pendingFinish = record;
    throw CatalogFsError.is(error) ? error : ioError(CODES, `finishing run ${runId}`, error);
  }
  run.pendingFinish = undefined;
  await retireRun(run);
  await withDir(await openBase(s, false), (base) => appendIndex(base, [{ runId, ended: true }]));
}
