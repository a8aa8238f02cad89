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
  openChildDir,
  processToken,
  type SafeDir,
  withDir,
  writeFileAtomic,
  writeFileCreateOnly,
  writeFilesAtomic,
} from './safe-dir.js';

const { O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** A per-run record file's text: indented JSON and a final newline. */
const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Pretty JSON written atomically, private to the owner: every per-run record file. */
function writeJsonFile(dir: SafeDir, name: string, value: unknown): Promise<void> {
  return writeFileAtomic(dir, name, jsonText(value), 0o600, CODES);
}

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

/**
 * One line of events.jsonl / journal.jsonl, without its newline. `given` is the caller's own serialisation of `value`
 * (the engine's journal text), used when it is one line; anything else is serialised here.
 */
function jsonLine(
  value: unknown,
  maxBytes: number,
  shrink: () => unknown,
  given?: unknown,
): string {
  let text: string | undefined;
  if (typeof given === 'string' && given !== '' && !given.includes('\n')) text = given;
  else {
    try {
      text = JSON.stringify(value);
    } catch {
      text = undefined;
    }
  }
  // A UTF-16 unit is at most 3 UTF-8 bytes: short lines skip the byte count.
  if (text === undefined || (text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes))
    text = JSON.stringify(shrink());
  return text as string;
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
    const jr = await appendOut(run.journal, batchOf(run.journalRest, journal));
    run.journalRest = jr.rest;
    if (ev.wrote || jr.wrote) run.unsynced = true;
    const failed = ev.error ?? jr.error;
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

export async function beginRun(
  s: RunStoreState,
  run: RunStartRecordShape & { readonly capsule?: unknown },
): Promise<void> {
  checkRunId(run?.runId);
  const key = keyOf(s, run.runId);
  if (LIVE.has(key))
    throw new CatalogFsError(CatalogFsCode.RunExists, `run ${run.runId} is already live`);
  const base = await requireBase(s);
  try {
    try {
      await fsp.mkdir(base.at(run.runId), { mode: 0o700 });
    } catch (error) {
      if (errno(error) === 'EEXIST') {
        throw new CatalogFsError(
          CatalogFsCode.RunExists,
          `run ${run.runId} already exists in ${base.path}`,
        );
      }
      throw ioError(CODES, `creating the run directory for ${run.runId}`, error);
    }
    const dir = await openChildDir(base, run.runId, { create: false, codes: CODES });
    if (!dir) throw new CatalogFsError(CatalogFsCode.RunIo, `run directory ${run.runId} vanished`);
    try {
      const { capsule, ...start } = run;
      // Snapshots for resume and audit: exactly what ran. Written side by side and all durable
      // before run.json, written last, records the run (a directory without it is no run); the
      // two logs are created meanwhile, empty.
      const snapshots: [string, string][] = [
        ['start.json', jsonText(start)],
        ['manifest.json', jsonText(run.manifest ?? null)],
      ];
      if (typeof run.source === 'string') snapshots.push(['script.js', run.source]);
      if (capsule !== undefined) snapshots.push(['capsule.workflow.json', jsonText(capsule)]);
      const open = (name: string) =>
        fsp
          .open(dir.at(name), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
          .catch((error: unknown) => {
            throw ioError(CODES, `creating ${name} for ${run.runId}`, error);
          });
      const [written, eventsOpened, journalOpened] = await Promise.allSettled([
        writeFilesAtomic(dir, snapshots, 0o600, CODES),
        open('events.jsonl'),
        open('journal.jsonl'),
      ]);
      const logs = [eventsOpened, journalOpened].flatMap((o) =>
        o.status === 'fulfilled' ? [o.value] : [],
      );
      const closeLogs = () => Promise.all(logs.map((log) => log.close().catch(() => undefined)));
      for (const step of [written, eventsOpened, journalOpened]) {
        if (step.status === 'rejected') {
          await closeLogs();
          throw step.reason;
        }
      }
      const [events, journal] = logs as [FileHandle, FileHandle];
      const now = Date.now();
      const snapshot: Record<string, unknown> = {
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
      try {
        await writeJsonFile(dir, 'run.json', snapshot);
        await appendIndex(base, [{ runId: run.runId, startedAt: run.startedAt }]);
      } catch (error) {
        await closeLogs();
        throw error;
      }
      goLive(s, key, run.runId, snapshot, events, journal, startIdentity(run), 0);
    } finally {
      await dir.close();
    }
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
  run.journalBuf.push(
    jsonLine(
      entry,
      s.maxLineBytes,
      () => ({
        ...entry,
        input: { truncated: true },
        outcome: {
          ok: false,
          error: { code: 'WF_CATALOG_RUN_IO', message: 'journal entry exceeded maxLineBytes' },
        },
      }),
      text,
    ),
  );
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
  Object.assign(run.snapshot, {
    status: record.status,
    endedAt,
    cost: record.cost,
    ...(summary === undefined ? {} : { resultSummary: summary }),
    ...(record.error === undefined ? {} : { error: record.error }),
    owner: { ...(run.snapshot.owner as RunOwner), leaseUntil: endedAt },
  });
  const resultText = resultJson === undefined ? undefined : `{"result":${resultJson}}`;
  try {
    if (resultText !== undefined) {
      const text = resultText;
      await withDir(await openRun(s, runId), (dir) =>
        writeFileAtomic(dir, 'result.json', `${text}\n`, 0o600, CODES),
      );
    }
    run.writeError = undefined;
    await persistSnapshot(s, run);
    if (run.writeError !== undefined) throw run.writeError;
  } catch (error) {
    // Still live: the lease tick (or a second finish()) writes the terminal snapshot.
    run.pendingFinish = record;
    throw CatalogFsError.is(error) ? error : ioError(CODES, `finishing run ${runId}`, error);
  }
  run.pendingFinish = undefined;
  await retireRun(run);
  await withDir(await openBase(s, false), (base) => appendIndex(base, [{ runId, ended: true }]));
}
