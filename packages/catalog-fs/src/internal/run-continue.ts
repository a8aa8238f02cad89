// Continuing a run the store already holds: a durable backend re-executes a run after its
// executor was lost (a worker restarted in place by its supervisor, or another worker sharing the
// directory), and the store goes on recording the same run instead of refusing a second begin.
// The earlier attempts' events stay; the new attempt's follow them (renumbered); the journal is
// recorded again from the start by the new attempt (its replay re-journals every entry).
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { CatalogFsCode, CatalogFsError } from '../errors.js';
import type { RunStartRecordShape } from '../run-types.js';
import {
  CODES,
  checkRunId,
  keyOf,
  LIVE,
  type LiveRun,
  MAX_SNAPSHOT_BYTES,
  readSnapshot,
  requireBase,
  type RunStoreState,
  startIdentity,
} from './run-layout.js';
import {
  beginRun,
  flushRun,
  goLive,
  markDirty,
  ownerNow,
  persistSnapshot,
  retireRun,
} from './run-recorder.js';
import { errno, ioError, openChildDir, readRegularFile, type SafeDir } from './safe-dir.js';

const { O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_TRUNC, O_NOFOLLOW } = constants;

function different(runId: string, where: string): CatalogFsError {
  return new CatalogFsError(
    CatalogFsCode.RunExists,
    `run ${runId} already exists in ${where} with another start (workflow, source, args, seed or start time): it is not this run`,
  );
}

/**
 * Begins recording a run, or continues recording it when this store already holds a run of that
 * id with the same start (`startIdentity`): live in this process (an attempt that ended without
 * finishing) or on disk (recorded by an earlier process, whatever its status). Refuses a
 * different run under the same id (`WF_CATALOG_RUN_EXISTS`).
 */
export async function beginOrContinueRun(
  s: RunStoreState,
  run: RunStartRecordShape & { readonly capsule?: unknown },
): Promise<{ readonly continued: boolean }> {
  checkRunId(run?.runId);
  const identity = startIdentity(run);
  const live = LIVE.get(keyOf(s, run.runId));
  if (live) {
    if (live.identity !== identity) throw different(run.runId, 'this process');
    continueLive(s, live);
    return { continued: true };
  }
  try {
    await beginRun(s, run);
    return { continued: false };
  } catch (error) {
    if (!(CatalogFsError.is(error) && error.code === CatalogFsCode.RunExists)) throw error;
  }
  await reopen(s, run.runId, identity);
  return { continued: true };
}

/** Another attempt in this process: its events follow the ones recorded so far. */
function continueLive(s: RunStoreState, live: LiveRun): void {
  live.seqOffset = Number(live.snapshot.lastSeq) || 0;
  live.snapshot.status = 'running';
  markDirty(s, live);
}

async function reopen(s: RunStoreState, runId: string, identity: string): Promise<void> {
  const base = await requireBase(s);
  let dir: SafeDir | undefined;
  try {
    dir = await openChildDir(base, runId, { create: false, codes: CODES });
    if (!dir) throw new CatalogFsError(CatalogFsCode.RunNotFound, `run ${runId} vanished`);
    const start = await readRegularFile(dir, 'start.json', MAX_SNAPSHOT_BYTES, CODES);
    let recorded: unknown;
    try {
      recorded = start ? JSON.parse(start.data.toString('utf8')) : undefined;
    } catch {
      recorded = undefined;
    }
    if (!recorded || startIdentity(recorded as RunStartRecordShape) !== identity)
      throw different(runId, base.path);
    const snapshot = (await readSnapshot(dir)) as Record<string, unknown>;
    const [events, journal] = await openLogs(dir, runId);
    for (const key of ['endedAt', 'error', 'resultSummary', 'cost']) delete snapshot[key];
    snapshot.status = 'running';
    snapshot.owner = ownerNow(s);
    // run.json is coalesced: the log itself says how far the numbering went.
    const offset = Math.max(Number(snapshot.lastSeq) || 0, await lastSeqOf(events));
    snapshot.lastSeq = offset;
    // Raced by another store of this process between the check and here: keep that one.
    if (LIVE.has(keyOf(s, runId))) {
      await Promise.all([events.close(), journal.close()]);
      continueLive(s, LIVE.get(keyOf(s, runId)) as LiveRun);
      return;
    }
    const live = goLive(s, keyOf(s, runId), runId, snapshot, events, journal, identity, offset);
    await persistSnapshot(s, live);
  } finally {
    await dir?.close();
    await base.close();
  }
}

/** events.jsonl to append to; journal.jsonl emptied (the new attempt records it all again). */
async function openLogs(dir: SafeDir, runId: string): Promise<[FileHandle, FileHandle]> {
  const open = (name: string, flags: number) =>
    fsp
      .open(dir.at(name), (flags & O_RDWR ? 0 : O_WRONLY) | O_CREAT | O_NOFOLLOW | flags, 0o600)
      .catch((error) => {
        throw errno(error) === 'ELOOP'
          ? new CatalogFsError(
              CatalogFsCode.RunUnsafePath,
              `${dir.path}/${name} is a symbolic link`,
            )
          : ioError(CODES, `reopening ${name} of ${runId}`, error);
      });
  const events = await open('events.jsonl', O_APPEND | O_RDWR);
  try {
    return [events, await open('journal.jsonl', O_APPEND | O_TRUNC)];
  } catch (error) {
    await events.close();
    throw error;
  }
}

/** Bytes of the log's end read for its last seq: far more than one line. */
const TAIL_BYTES = 256 * 1024;

/**
 * The highest seq of the events log (its last whole line's: seqs only grow), 0 when none. A torn
 * last line (its writer killed mid-write) is closed with a newline first, so the next line is
 * whole and readers skip the torn one, as they do any torn line.
 */
async function lastSeqOf(events: FileHandle): Promise<number> {
  const { size } = await events.stat();
  if (size === 0) return 0;
  const length = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(length);
  const { bytesRead } = await events.read(tail, 0, length, size - length);
  const text = tail.subarray(0, bytesRead).toString('utf8');
  if (!text.endsWith('\n')) await events.write('\n');
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    try {
      const seq = (JSON.parse(lines[i] as string) as { seq?: unknown })?.seq;
      if (typeof seq === 'number' && Number.isSafeInteger(seq)) return seq;
    } catch {
      // torn or cut at the tail's start: the one before
    }
  }
  return 0;
}

/**
 * Stops recording a live run without ending it: its executor moved elsewhere (the attempt ended)
 * and another process may continue it. Buffered lines are written, the lease stops renewing.
 */
export async function detachRun(s: RunStoreState, runId: string): Promise<void> {
  const live = LIVE.get(keyOf(s, runId));
  if (!live) return;
  await flushRun(s, live, true);
  await persistSnapshot(s, live);
  await retireRun(live);
}
