// The run store: the disk implementation of the engine's RunRecorder port, plus listing, tailing,
// aliases, deletion, retention and crash recovery (invariant 9). Events and the journal are
// append-only JSON lines written without re-reading; run.json is a coalesced atomic snapshot.
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import {
  CatalogFsCode,
  CatalogFsError,
  isCatalogFsError,
  type OperationError,
  type Result,
} from './errors.js';
import {
  type JournalEntryRecord,
  type RunEventRecord,
  type RunFinishRecordShape,
  type RunStartRecordShape,
  type RunStatus,
  TERMINAL_STATUSES,
  type TerminalRunStatus,
} from './run-types.js';
import {
  type ErrorCodes,
  errno,
  HOSTNAME,
  ioError,
  isAbandonedTemp,
  isPidAlive,
  openChildDir,
  openRootDir,
  PROCESS_TOKEN,
  readRegularFile,
  readRegularFileFrom,
  type SafeDir,
  TEMP_PREFIX,
  withDir,
  writeFileAtomic,
  writeFileCreateOnly,
} from './internal/safe-dir.js';

const { O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

export type FsyncPolicy = 'batch' | 'always' | 'never';

export interface RunStoreOptions {
  /** The project directory (the session cwd). */
  readonly project: string;
  /**
   * The run directory. Default `<project>/.dsh/workflow-runs`. A relative path is resolved against
   * the project; an absolute one is shared, so it is partitioned by a hash of the project path.
   */
  readonly root?: string;
  /** When event and journal lines are fsynced. Default `batch` (see README "fsync policy"). */
  readonly fsync?: FsyncPolicy;
  /** `batch`: the longest a written line waits for its fsync. Default 1000 ms. */
  readonly fsyncIntervalMs?: number;
  /** The longest run.json lags behind `update()`/events while a run is live. Default 500 ms. */
  readonly snapshotIntervalMs?: number;
  /** Owner lease: renewed every third of this while live. Default 30 s. */
  readonly leaseMs?: number;
  /** Characters of the result kept in run.json's `resultSummary`. Default 2000. */
  readonly maxResultChars?: number;
  /** Largest event or journal line; a bigger event keeps its envelope with `data.truncated`. */
  readonly maxLineBytes?: number;
  /** Largest artifact. Default 16 MiB. */
  readonly maxArtifactBytes?: number;
  /** Accept a root reached through symlinks. Default false. */
  readonly allowSymlinkedRoot?: boolean;
  /** Run `recover()` at open. Default true. */
  readonly recoverAtOpen?: boolean;
}

export interface RunOwner {
  readonly pid: number;
  readonly token: string;
  readonly host: string;
  readonly leaseUntil: number;
}

/** run.json, format `wf.run` version 1. Extra fields come from `update()`. */
export interface RunSnapshot {
  readonly format: 'wf.run';
  readonly version: 1;
  readonly runId: string;
  readonly workflow: string;
  readonly status: RunStatus;
  readonly execution: string;
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly endedAt?: number;
  readonly eventCount: number;
  readonly lastSeq: number;
  readonly phase?: string;
  readonly resultSummary?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly artifacts: readonly {
    readonly name: string;
    readonly ref: string;
    readonly bytes: number;
  }[];
  readonly cost?: unknown;
  readonly sourceRunId?: string;
  readonly revisionOf?: string;
  readonly resumedFromRunId?: string;
  readonly owner?: RunOwner;
  readonly [key: string]: unknown;
}

export interface RunSummary {
  readonly runId: string;
  readonly displayName?: string;
  /** Live: owned by this process or by another whose lease is fresh. Never deletable. */
  readonly active: boolean;
  /** The snapshot, or undefined when run.json cannot be read (`error` says why). */
  readonly snapshot?: RunSnapshot;
  readonly error?: OperationError;
}

export interface RunStore {
  /** The resolved directory holding the run directories (the partition, if any). */
  readonly root: string;
  begin(run: RunStartRecordShape & { readonly capsule?: unknown }): Promise<void>;
  event(event: RunEventRecord): void;
  journal(runId: string, entry: JournalEntryRecord): void;
  artifact(
    runId: string,
    name: string,
    value: unknown,
  ): Promise<{ readonly name: string; readonly ref: string }>;
  update(runId: string, patch: { readonly [key: string]: unknown }): void;
  finish(runId: string, record: RunFinishRecordShape): Promise<void>;
  load(
    runId: string,
  ): Promise<
    | { readonly start: RunStartRecordShape; readonly journal: readonly JournalEntryRecord[] }
    | undefined
  >;
  list(): Promise<readonly RunSummary[]>;
  show(runId: string): Promise<Result<{ run: RunSummary }>>;
  events(
    runId: string,
    options?: { readonly after?: number; readonly limit?: number },
  ): Promise<readonly RunEventRecord[]>;
  /** Exact run id first, then a display alias. */
  resolve(target: string): Promise<Result<{ runId: string }>>;
  rename(runId: string, displayName: string): Promise<Result<{ displayName: string }>>;
  delete(
    runId: string,
    options?: { readonly force?: boolean },
  ): Promise<Result<{ deleted: string }>>;
  prune(options?: {
    readonly keep?: number;
    readonly olderThan?: number;
    readonly dryRun?: boolean;
  }): Promise<{ readonly pruned: readonly string[]; readonly dryRun: boolean }>;
  recover(): Promise<{ readonly interrupted: readonly string[] }>;
  /** Writes and fsyncs everything buffered (events, journal, snapshots). */
  flush(): Promise<void>;
  /** Flushes and stops lease timers; live runs stay `running` on disk (recover marks them later). */
  close(): Promise<void>;
}

const CODES: ErrorCodes = { unsafe: CatalogFsCode.RunUnsafePath, io: CatalogFsCode.RunIo };
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MARKER = '.project.json';
const TRASH_PREFIX = '.trash-';
const RESERVED = new Set([
  'format',
  'version',
  'runId',
  'owner',
  'artifacts',
  'eventCount',
  'lastSeq',
  'startedAt',
]);
const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;
const MAX_LOG_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/** Runs owned by this process, across store instances (so a second store never recovers them). */
const LIVE = new Map<string, LiveRun>();

interface LiveRun {
  readonly key: string;
  readonly runId: string;
  snapshot: Record<string, unknown>;
  events: fsp.FileHandle;
  journal: fsp.FileHandle;
  eventBuf: string[];
  journalBuf: string[];
  /** The unwritten tail of a batch whose write failed: retried first, so no line is split. */
  eventRest: Buffer | undefined;
  journalRest: Buffer | undefined;
  chain: Promise<void>;
  flushScheduled: boolean;
  lastFsync: number;
  unsynced: boolean;
  fsyncTimer: NodeJS.Timeout | undefined;
  snapshotTimer: NodeJS.Timeout | undefined;
  leaseTimer: NodeJS.Timeout | undefined;
  snapshotChain: Promise<void>;
  artifacts: Set<string>;
  writeError: unknown;
  /** A finish() that could not be written (disk full): retried on every lease tick. */
  pendingFinish: RunFinishRecordShape | undefined;
}

function checkRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId) || runId.includes('..')) {
    throw new CatalogFsError(
      CatalogFsCode.RunInvalidId,
      `run id ${JSON.stringify(String(runId)).slice(0, 80)} is not a safe identifier (letters, digits, ".", "_", "-"; at most 128)`,
    );
  }
}

function fail(error: unknown): { ok: false; error: OperationError } {
  if (isCatalogFsError(error))
    return { ok: false, error: { code: error.code, message: error.message } };
  throw error;
}

function isTerminal(status: unknown): status is TerminalRunStatus {
  return TERMINAL_STATUSES.includes(status as TerminalRunStatus);
}

/**
 * Parses JSON lines: skips a torn last line and corrupt or repeated lines, never throws. `key` is
 * the field that increases line by line (`seq` for events; `settleSeq` for the journal, whose
 * `seq` is issue order and not monotonic in the file).
 */
function parseLines<T>(text: string, key: 'seq' | 'settleSeq', after = 0): T[] {
  const out: T[] = [];
  let last = after;
  const end = text.lastIndexOf('\n');
  // Anything after the last newline is a torn write from a crash: ignored, never fatal.
  const whole = end < 0 ? '' : text.slice(0, end);
  for (const line of whole.split('\n')) {
    if (line === '') continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    // A batch retried after a failed write may repeat lines: keep the key strictly increasing.
    const n = value?.[key];
    if (typeof n !== 'number' || n <= last) continue;
    last = n;
    out.push(value as T);
  }
  return out;
}

function jsonLine(value: unknown, maxBytes: number, shrink: () => unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined || Buffer.byteLength(text) > maxBytes) text = JSON.stringify(shrink());
  return `${text}\n`;
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

/**
 * Appends the retried remainder and the new lines in one write loop. On failure returns the
 * unwritten tail, so a retry continues exactly where the kernel stopped (no split, no repeat).
 */
async function appendOut(
  handle: fsp.FileHandle,
  rest: Buffer | undefined,
  lines: readonly string[],
): Promise<{ wrote: boolean; rest?: Buffer; error?: unknown }> {
  const fresh = lines.length > 0 ? Buffer.from(lines.join('')) : undefined;
  const buffer = rest && fresh ? Buffer.concat([rest, fresh]) : (rest ?? fresh);
  if (!buffer || buffer.length === 0) return { wrote: false };
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

/** Opens (creating) the run store. Recovers stale runs unless `recoverAtOpen: false`. */
export async function openRunStore(options: RunStoreOptions): Promise<RunStore> {
  if (typeof options?.project !== 'string' || options.project === '') {
    throw new TypeError('openRunStore: `project` must be the project directory');
  }
  const project = resolve(options.project);
  const defaultRoot = join(project, '.dsh', 'workflow-runs');
  const configured = options.root;
  const partitioned =
    configured !== undefined && isAbsolute(configured) && resolve(configured) !== defaultRoot;
  const rootPath = configured === undefined ? defaultRoot : resolve(project, configured);
  const policy: FsyncPolicy = options.fsync ?? 'batch';
  const fsyncIntervalMs = options.fsyncIntervalMs ?? 1000;
  const snapshotIntervalMs = options.snapshotIntervalMs ?? 500;
  const leaseMs = options.leaseMs ?? 30_000;
  const maxResultChars = options.maxResultChars ?? 2000;
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  const maxArtifactBytes = options.maxArtifactBytes ?? 16 * 1024 * 1024;
  const allowSymlinkedRoot = options.allowSymlinkedRoot === true;

  let partition: string | undefined;
  let canonicalProject = project;
  if (partitioned) {
    canonicalProject = await fsp.realpath(project).catch(() => project);
    partition = createHash('sha256').update(canonicalProject).digest('hex').slice(0, 32);
  }
  const basePath = partition ? join(rootPath, partition) : rootPath;

  const openBase = async (create: boolean): Promise<SafeDir | undefined> => {
    const root = await openRootDir(rootPath, {
      create,
      allowSymlinkedRoot,
      codes: CODES,
      label: 'run store root',
    });
    if (!root || !partition) return root;
    try {
      return await openChildDir(root, partition, { create, codes: CODES });
    } finally {
      await root.close();
    }
  };

  const requireBase = async (): Promise<SafeDir> => {
    const base = await openBase(true);
    if (!base)
      throw new CatalogFsError(
        CatalogFsCode.RunIo,
        `could not create the run store at ${basePath}`,
      );
    return base;
  };

  const openRun = async (runId: string): Promise<SafeDir | undefined> => {
    const base = await openBase(false);
    if (!base) return undefined;
    try {
      return await openChildDir(base, runId, { create: false, codes: CODES });
    } finally {
      await base.close();
    }
  };

  // Partition marker: created once, create-only; a marker naming another project is refused so
  // two projects never share a partition.
  if (partition) {
    await withDir(await requireBase(), async (base) => {
      const marker = `${JSON.stringify({ canonicalProjectDirectory: canonicalProject }, null, 2)}\n`;
      await writeFileCreateOnly(base, MARKER, marker, 0o644, CODES);
      const raw = await readRegularFile(base, MARKER, 64 * 1024, CODES);
      let owner: unknown;
      try {
        owner = raw
          ? (JSON.parse(raw.data.toString('utf8')) as { canonicalProjectDirectory?: unknown })
              .canonicalProjectDirectory
          : undefined;
      } catch {
        owner = undefined;
      }
      if (owner !== canonicalProject) {
        throw new CatalogFsError(
          CatalogFsCode.PartitionMismatch,
          `run store partition ${base.path} belongs to ${JSON.stringify(owner)}, not ${canonicalProject}`,
        );
      }
    });
  }

  /** Per run: where the last events() read stopped (after a whole line), for cheap tailing. */
  const tails = new Map<string, { ino: number; offset: number; lastSeq: number }>();

  const keyOf = (runId: string) => `${basePath}\0${runId}`;

  const persistSnapshot = (run: LiveRun): Promise<void> => {
    run.snapshotChain = run.snapshotChain.then(async () => {
      if (run.snapshotTimer) {
        clearTimeout(run.snapshotTimer);
        run.snapshotTimer = undefined;
      }
      const text = `${JSON.stringify({ ...run.snapshot, updatedAt: Date.now() }, null, 2)}\n`;
      try {
        await withDir(await openRun(run.runId), (dir) =>
          writeFileAtomic(dir, 'run.json', text, 0o600, CODES),
        );
      } catch (error) {
        run.writeError = error;
      }
    });
    return run.snapshotChain;
  };

  const markDirty = (run: LiveRun): void => {
    if (run.snapshotTimer) return;
    run.snapshotTimer = setTimeout(() => {
      run.snapshotTimer = undefined;
      void persistSnapshot(run);
    }, snapshotIntervalMs);
    run.snapshotTimer.unref();
  };

  const sync = async (run: LiveRun): Promise<void> => {
    if (!run.unsynced) return;
    run.unsynced = false;
    run.lastFsync = Date.now();
    await Promise.all([run.events.datasync(), run.journal.datasync()]);
  };

  /** Writes buffered lines (one write per file per batch) and applies the fsync policy. */
  const flushRun = (run: LiveRun, forceSync: boolean): Promise<void> => {
    run.chain = run.chain.then(async () => {
      run.flushScheduled = false;
      const events = run.eventBuf;
      const journal = run.journalBuf;
      run.eventBuf = [];
      run.journalBuf = [];
      const ev = await appendOut(run.events, run.eventRest, events);
      run.eventRest = ev.rest;
      const jr = await appendOut(run.journal, run.journalRest, journal);
      run.journalRest = jr.rest;
      if (ev.wrote || jr.wrote) run.unsynced = true;
      const failed = ev.error ?? jr.error;
      if (failed !== undefined) {
        // Disk full...: the unwritten bytes are retried on the next flush (finish() forces one).
        run.writeError = failed;
        return;
      }
      try {
        if (policy === 'never' && !forceSync) return;
        if (forceSync || policy === 'always' || Date.now() - run.lastFsync >= fsyncIntervalMs) {
          await sync(run);
        } else if (run.unsynced && !run.fsyncTimer) {
          run.fsyncTimer = setTimeout(() => {
            run.fsyncTimer = undefined;
            void flushRun(run, true);
          }, fsyncIntervalMs);
          run.fsyncTimer.unref();
        }
        run.writeError = undefined;
      } catch (error) {
        run.writeError = error;
      }
    });
    return run.chain;
  };

  const scheduleFlush = (run: LiveRun): void => {
    if (run.flushScheduled) return;
    run.flushScheduled = true;
    setImmediate(() => void flushRun(run, false));
  };

  const liveRun = (runId: string): LiveRun | undefined => LIVE.get(keyOf(runId));

  const readSnapshot = async (dir: SafeDir): Promise<RunSnapshot> => {
    const raw = await readRegularFile(dir, 'run.json', MAX_SNAPSHOT_BYTES, CODES);
    if (!raw) throw new CatalogFsError(CatalogFsCode.RunCorrupt, `${dir.path}/run.json is missing`);
    try {
      const value = JSON.parse(raw.data.toString('utf8')) as RunSnapshot;
      if (value?.format !== 'wf.run' || typeof value.status !== 'string')
        throw new Error('not a wf.run snapshot');
      return value;
    } catch (error) {
      throw new CatalogFsError(
        CatalogFsCode.RunCorrupt,
        `${dir.path}/run.json cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  const readAlias = async (dir: SafeDir): Promise<string | undefined> => {
    try {
      const raw = await readRegularFile(dir, 'alias.json', 64 * 1024, CODES);
      const value = raw
        ? (JSON.parse(raw.data.toString('utf8')) as { displayName?: unknown })
        : undefined;
      return typeof value?.displayName === 'string' ? value.displayName : undefined;
    } catch {
      return undefined;
    }
  };

  /** Whether the owner of a non-terminal run is gone (so the record is stale). */
  const ownerGone = (snapshot: RunSnapshot, runId: string, now: number): boolean => {
    if (liveRun(runId)) return false;
    const owner = snapshot.owner;
    if (!owner || typeof owner.pid !== 'number') return true;
    if (owner.host === HOSTNAME && owner.pid === process.pid && owner.token === PROCESS_TOKEN) {
      // Ours, but no store in this process holds it live: its store was closed or dropped.
      return true;
    }
    if (owner.host === HOSTNAME && !isPidAlive(owner.pid)) return true;
    return typeof owner.leaseUntil !== 'number' || owner.leaseUntil < now;
  };

  const summarize = async (base: SafeDir, runId: string): Promise<RunSummary | undefined> => {
    const live = liveRun(runId);
    const dir = await openChildDir(base, runId, { create: false, codes: CODES }).catch(
      (error: unknown) => {
        if (isCatalogFsError(error)) return error;
        throw error;
      },
    );
    if (dir === undefined) return undefined;
    if (dir instanceof CatalogFsError)
      return { runId, active: false, error: { code: dir.code, message: dir.message } };
    try {
      const displayName = await readAlias(dir);
      const alias = displayName === undefined ? {} : { displayName };
      if (live)
        return { runId, ...alias, active: true, snapshot: { ...live.snapshot } as RunSnapshot };
      try {
        const snapshot = await readSnapshot(dir);
        const active = !isTerminal(snapshot.status) && !ownerGone(snapshot, runId, Date.now());
        return { runId, ...alias, active, snapshot };
      } catch (error) {
        return { runId, ...alias, active: false, error: fail(error).error };
      }
    } finally {
      await dir.close();
    }
  };

  const runIds = async (base: SafeDir): Promise<string[]> => {
    const names = await fsp.readdir(base.self);
    return names.filter((n) => RUN_ID_PATTERN.test(n) && !n.includes('..')).sort();
  };

  const readLog = async (runId: string, file: string): Promise<string | undefined> => {
    return withDir(await openRun(runId), async (dir) => {
      const raw = await readRegularFile(dir, file, MAX_LOG_BYTES, CODES);
      return raw?.data.toString('utf8');
    });
  };

  const store: RunStore = {
    root: basePath,

    async begin(run) {
      checkRunId(run?.runId);
      const key = keyOf(run.runId);
      if (LIVE.has(key))
        throw new CatalogFsError(CatalogFsCode.RunExists, `run ${run.runId} is already live`);
      const base = await requireBase();
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
        if (!dir)
          throw new CatalogFsError(CatalogFsCode.RunIo, `run directory ${run.runId} vanished`);
        try {
          const { capsule, ...start } = run;
          // Snapshots for resume and audit: exactly what ran.
          await writeFileAtomic(
            dir,
            'start.json',
            `${JSON.stringify(start, null, 2)}\n`,
            0o600,
            CODES,
          );
          await writeFileAtomic(
            dir,
            'manifest.json',
            `${JSON.stringify(run.manifest ?? null, null, 2)}\n`,
            0o600,
            CODES,
          );
          if (typeof run.source === 'string')
            await writeFileAtomic(dir, 'script.js', run.source, 0o600, CODES);
          if (capsule !== undefined) {
            await writeFileAtomic(
              dir,
              'capsule.workflow.json',
              `${JSON.stringify(capsule, null, 2)}\n`,
              0o600,
              CODES,
            );
          }
          const open = (name: string) =>
            fsp
              .open(dir.at(name), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
              .catch((error: unknown) => {
                throw ioError(CODES, `creating ${name} for ${run.runId}`, error);
              });
          const events = await open('events.jsonl');
          const journal = await open('journal.jsonl').catch(async (error: unknown) => {
            await events.close();
            throw error;
          });
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
            ...(run.resumedFromRunId === undefined
              ? {}
              : { resumedFromRunId: run.resumedFromRunId }),
            owner: {
              pid: process.pid,
              token: PROCESS_TOKEN,
              host: HOSTNAME,
              leaseUntil: now + leaseMs,
            },
          };
          await writeFileAtomic(
            dir,
            'run.json',
            `${JSON.stringify(snapshot, null, 2)}\n`,
            0o600,
            CODES,
          );
          const live: LiveRun = {
            key,
            runId: run.runId,
            snapshot,
            events,
            journal,
            eventBuf: [],
            journalBuf: [],
            eventRest: undefined,
            journalRest: undefined,
            chain: Promise.resolve(),
            flushScheduled: false,
            lastFsync: now,
            unsynced: false,
            fsyncTimer: undefined,
            snapshotTimer: undefined,
            leaseTimer: undefined,
            snapshotChain: Promise.resolve(),
            artifacts: new Set(),
            writeError: undefined,
            pendingFinish: undefined,
          };
          // Lease: renewed while live, so a record whose owner stopped renewing is stale.
          live.leaseTimer = setInterval(
            () => {
              // Loses nothing: once space returns, the buffered lines and a failed finish land.
              if (live.pendingFinish) {
                void store.finish(live.runId, live.pendingFinish).catch(() => undefined);
                return;
              }
              if (live.writeError !== undefined) void flushRun(live, true);
              live.snapshot.owner = {
                pid: process.pid,
                token: PROCESS_TOKEN,
                host: HOSTNAME,
                leaseUntil: Date.now() + leaseMs,
              };
              void persistSnapshot(live);
            },
            Math.max(10, Math.floor(leaseMs / 3)),
          );
          live.leaseTimer.unref();
          LIVE.set(key, live);
        } finally {
          await dir.close();
        }
      } finally {
        await base.close();
      }
    },

    event(event) {
      const run = liveRun(event?.runId);
      if (!run) return;
      run.eventBuf.push(
        jsonLine(event, maxLineBytes, () => ({
          seq: event.seq,
          runId: event.runId,
          type: event.type,
          time: event.time,
          data: { truncated: true, reason: 'the event was not JSON or exceeded maxLineBytes' },
        })),
      );
      run.snapshot.eventCount = (run.snapshot.eventCount as number) + 1;
      if (typeof event.seq === 'number') run.snapshot.lastSeq = event.seq;
      if (event.type === 'phase-started' && typeof event.data?.phase === 'string')
        run.snapshot.phase = event.data.phase;
      scheduleFlush(run);
      markDirty(run);
    },

    journal(runId, entry) {
      const run = liveRun(runId);
      if (!run) return;
      run.journalBuf.push(
        jsonLine(entry, maxLineBytes, () => ({
          ...entry,
          input: { truncated: true },
          outcome: {
            ok: false,
            error: { code: 'WF_CATALOG_RUN_IO', message: 'journal entry exceeded maxLineBytes' },
          },
        })),
      );
      scheduleFlush(run);
    },

    async artifact(runId, name, value) {
      checkRunId(runId);
      const run = liveRun(runId);
      if (!run)
        throw new CatalogFsError(
          CatalogFsCode.RunNotFound,
          `run ${runId} is not live in this store`,
        );
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
        throw new CatalogFsError(
          CatalogFsCode.RunIo,
          `artifact "${name}" is not JSON-serializable`,
        );
      if (Buffer.byteLength(text) > maxArtifactBytes) {
        throw new CatalogFsError(
          CatalogFsCode.RunIo,
          `artifact "${name}" is over the limit of ${maxArtifactBytes} bytes`,
        );
      }
      // The hash of the exact name keeps two names that sanitize alike apart.
      const file = `${sanitizeArtifactName(name)}-${createHash('sha256').update(name).digest('hex').slice(0, 16)}.json`;
      run.artifacts.add(name);
      try {
        const created = await withDir(await openRun(runId), async (dir) =>
          withDir(
            await openChildDir(dir, 'artifacts', { create: true, codes: CODES }),
            (artifacts) => writeFileCreateOnly(artifacts, file, `${text}\n`, 0o600, CODES),
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
        if (!(isCatalogFsError(error) && error.code === CatalogFsCode.ArtifactExists))
          run.artifacts.delete(name);
        throw error;
      }
      const ref = `artifacts/${file}`;
      run.snapshot.artifacts = [
        ...(run.snapshot.artifacts as unknown[]),
        { name, ref, bytes: Buffer.byteLength(text) + 1 },
      ];
      markDirty(run);
      return { name, ref };
    },

    update(runId, patch) {
      const run = liveRun(runId);
      if (!run || typeof patch !== 'object' || patch === null) return;
      for (const [key, value] of Object.entries(patch)) {
        if (
          RESERVED.has(key) ||
          key === '__proto__' ||
          key === 'constructor' ||
          key === 'prototype'
        )
          continue;
        // A live run's status is one of the two live values; terminal ones come from finish().
        if (key === 'status' && value !== 'running' && value !== 'paused') continue;
        run.snapshot[key] = value;
      }
      markDirty(run);
    },

    async finish(runId, record) {
      checkRunId(runId);
      const run = liveRun(runId);
      if (!run)
        throw new CatalogFsError(
          CatalogFsCode.RunNotFound,
          `run ${runId} is not live in this store`,
        );
      if (!isTerminal(record?.status)) {
        throw new CatalogFsError(
          CatalogFsCode.RunIo,
          `finish needs a terminal status, got ${String(record?.status)}`,
        );
      }
      await flushRun(run, true);
      if (run.writeError !== undefined) {
        // Disk full...: the run stays live with its lines buffered; the lease tick retries.
        run.pendingFinish = record;
        throw ioError(CODES, `writing the events of run ${runId}`, run.writeError);
      }
      const endedAt = record.endedAt;
      const summary = capText(record.result, maxResultChars);
      Object.assign(run.snapshot, {
        status: record.status,
        endedAt,
        cost: record.cost,
        ...(summary === undefined ? {} : { resultSummary: summary }),
        ...(record.error === undefined ? {} : { error: record.error }),
        owner: { ...(run.snapshot.owner as RunOwner), leaseUntil: endedAt },
      });
      let resultText: string | undefined;
      try {
        resultText =
          record.result === undefined ? undefined : JSON.stringify({ result: record.result });
      } catch {
        resultText = undefined;
      }
      try {
        if (resultText !== undefined) {
          const text = resultText;
          await withDir(await openRun(runId), (dir) =>
            writeFileAtomic(dir, 'result.json', `${text}\n`, 0o600, CODES),
          );
        }
        run.writeError = undefined;
        await persistSnapshot(run);
        if (run.writeError !== undefined) throw run.writeError;
      } catch (error) {
        // Still live: the lease tick (or a second finish()) writes the terminal snapshot.
        run.pendingFinish = record;
        throw isCatalogFsError(error) ? error : ioError(CODES, `finishing run ${runId}`, error);
      }
      run.pendingFinish = undefined;
      clearInterval(run.leaseTimer);
      clearTimeout(run.fsyncTimer);
      clearTimeout(run.snapshotTimer);
      LIVE.delete(run.key);
      await run.events.close().catch(() => undefined);
      await run.journal.close().catch(() => undefined);
    },

    async load(runId) {
      checkRunId(runId);
      const run = liveRun(runId);
      if (run) await flushRun(run, false);
      const startText = await withDir(await openRun(runId), async (dir) => {
        const raw = await readRegularFile(dir, 'start.json', MAX_SNAPSHOT_BYTES, CODES);
        return raw?.data.toString('utf8');
      });
      if (startText === undefined) return undefined;
      let start: RunStartRecordShape;
      try {
        start = JSON.parse(startText) as RunStartRecordShape;
      } catch (error) {
        throw new CatalogFsError(
          CatalogFsCode.RunCorrupt,
          `start.json of run ${runId} cannot be read`,
          { cause: error },
        );
      }
      const journal = parseLines<JournalEntryRecord>(
        (await readLog(runId, 'journal.jsonl')) ?? '',
        'settleSeq',
      );
      return { start, journal };
    },

    async list() {
      const base = await openBase(false);
      if (!base) return [];
      try {
        const out: RunSummary[] = [];
        for (const runId of await runIds(base)) {
          const summary = await summarize(base, runId);
          if (summary) out.push(summary);
        }
        const started = (s: RunSummary) =>
          typeof s.snapshot?.startedAt === 'number' ? s.snapshot.startedAt : 0;
        return out.sort((a, b) => started(b) - started(a));
      } finally {
        await base.close();
      }
    },

    async show(runId) {
      try {
        checkRunId(runId);
        const summary = await withDir(await openBase(false), (base) => summarize(base, runId));
        if (!summary) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
        if (summary.error && !summary.snapshot) return { ok: false, error: summary.error };
        return { ok: true, run: summary };
      } catch (error) {
        return fail(error);
      }
    },

    async events(runId, eventOptions = {}) {
      checkRunId(runId);
      const run = liveRun(runId);
      if (run) await flushRun(run, false);
      const after = eventOptions.after ?? 0;
      // Tailing: a caller passing the last seq it saw reads only the bytes appended since.
      const cached = tails.get(runId);
      const read = async (offset: number) =>
        withDir(await openRun(runId), (dir) =>
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
        tails.delete(runId);
        throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
      }
      const end = chunk.data.lastIndexOf(0x0a);
      const whole = end < 0 ? '' : chunk.data.subarray(0, end + 1).toString('utf8');
      const parsed = parseLines<RunEventRecord>(whole, 'seq', last);
      tails.set(runId, {
        ino: chunk.ino,
        offset: base + end + 1,
        lastSeq: parsed.at(-1)?.seq ?? last,
      });
      const all = parsed.filter((e) => e.seq > after);
      return eventOptions.limit === undefined ? all : all.slice(0, eventOptions.limit);
    },

    async resolve(target) {
      try {
        if (typeof target !== 'string' || target === '')
          throw new CatalogFsError(CatalogFsCode.RunNotFound, 'no run target given');
        if (RUN_ID_PATTERN.test(target) && !target.includes('..')) {
          const exists = await withDir(await openRun(target), async () => true);
          if (exists) return { ok: true, runId: target };
        }
        const matches = (await store.list())
          .filter((s) => s.displayName === target)
          .map((s) => s.runId);
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
    },

    async rename(runId, displayName) {
      try {
        checkRunId(runId);
        if (
          typeof displayName !== 'string' ||
          displayName.trim() === '' ||
          displayName.length > 128 ||
          /[\u0000-\u001f\u007f]/.test(displayName)
        ) {
          throw new CatalogFsError(
            CatalogFsCode.RunInvalidId,
            'a display name must be 1 to 128 printable characters',
          );
        }
        // The alias lives beside run.json, so renaming never rewrites a live owner's snapshot.
        const done = await withDir(await openRun(runId), async (dir) => {
          await writeFileAtomic(
            dir,
            'alias.json',
            `${JSON.stringify({ displayName })}\n`,
            0o600,
            CODES,
          );
          return true;
        });
        if (done === undefined)
          throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
        return { ok: true, displayName };
      } catch (error) {
        return fail(error);
      }
    },

    async delete(runId, deleteOptions = {}) {
      try {
        checkRunId(runId);
        const base = await openBase(false);
        if (!base) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
        try {
          const summary = await summarize(base, runId);
          if (!summary) throw new CatalogFsError(CatalogFsCode.RunNotFound, `no run ${runId}`);
          if (summary.error?.code === CatalogFsCode.RunUnsafePath) {
            throw new CatalogFsError(summary.error.code, summary.error.message);
          }
          // invariant 9: an active run can never be deleted, not even with force.
          if (summary.active) {
            throw new CatalogFsError(
              CatalogFsCode.RunActive,
              `run ${runId} is active (its owner is alive); stop it first`,
            );
          }
          const status = summary.snapshot?.status;
          if (!isTerminal(status) && deleteOptions.force !== true) {
            throw new CatalogFsError(
              CatalogFsCode.RunNotTerminal,
              `run ${runId} is ${status ?? 'unreadable'} but its owner is gone; run recover() or delete with force: true`,
            );
          }
          // Atomic disappearance first (rename into a trash name), then the slow removal.
          const trash = `${TRASH_PREFIX}${runId}-${randomBytes(4).toString('hex')}`;
          try {
            await fsp.rename(base.at(runId), base.at(trash));
          } catch (error) {
            throw ioError(CODES, `deleting run ${runId}`, error);
          }
          await base.sync();
          await fsp.rm(base.at(trash), { recursive: true, force: true }).catch(() => undefined);
          tails.delete(runId);
          return { ok: true, deleted: runId };
        } finally {
          await base.close();
        }
      } catch (error) {
        return fail(error);
      }
    },

    async prune(pruneOptions = {}) {
      const keep = pruneOptions.keep ?? 100;
      const dryRun = pruneOptions.dryRun === true;
      const cutoff =
        pruneOptions.olderThan === undefined ? undefined : Date.now() - pruneOptions.olderThan;
      const ended = (s: RunSummary) => {
        const snap = s.snapshot;
        return typeof snap?.endedAt === 'number'
          ? snap.endedAt
          : typeof snap?.startedAt === 'number'
            ? snap.startedAt
            : 0;
      };
      // Retention touches terminal runs only.
      const terminal = (await store.list())
        .filter((s) => !s.active && isTerminal(s.snapshot?.status))
        .sort((a, b) => ended(b) - ended(a));
      const candidates = terminal
        .slice(Math.max(0, keep))
        .filter((s) => cutoff === undefined || ended(s) < cutoff);
      const pruned: string[] = [];
      for (const s of candidates) {
        if (dryRun) {
          pruned.push(s.runId);
          continue;
        }
        const result = await store.delete(s.runId);
        if (result.ok) pruned.push(s.runId);
      }
      return { pruned, dryRun };
    },

    async recover() {
      const base = await openBase(false);
      if (!base) return { interrupted: [] };
      const interrupted: string[] = [];
      try {
        const names = await fsp.readdir(base.self);
        const now = Date.now();
        for (const name of names) {
          if (name.startsWith(TRASH_PREFIX)) {
            await fsp.rm(base.at(name), { recursive: true, force: true }).catch(() => undefined);
          } else if (name.startsWith(TEMP_PREFIX)) {
            const st = await fsp.lstat(base.at(name)).catch(() => undefined);
            if (st && isAbandonedTemp(name, st.mtimeMs, now)) {
              await fsp.unlink(base.at(name)).catch(() => undefined);
            }
          }
        }
        for (const runId of await runIds(base)) {
          if (liveRun(runId)) continue;
          await withDir(
            await openChildDir(base, runId, { create: false, codes: CODES }).catch(() => undefined),
            async (dir) => {
              for (const file of await fsp.readdir(dir.self)) {
                if (!file.startsWith(TEMP_PREFIX)) continue;
                const st = await fsp.lstat(dir.at(file)).catch(() => undefined);
                if (st && isAbandonedTemp(file, st.mtimeMs, now))
                  await fsp.unlink(dir.at(file)).catch(() => undefined);
              }
              let snapshot: RunSnapshot;
              try {
                snapshot = await readSnapshot(dir);
              } catch {
                return;
              }
              if (isTerminal(snapshot.status) || !ownerGone(snapshot, runId, now)) return;
              const owner = snapshot.owner;
              const marked = {
                ...snapshot,
                status: 'interrupted',
                endedAt: now,
                updatedAt: now,
                interruptedFrom: snapshot.status,
                error: {
                  code: CatalogFsCode.RunInterrupted,
                  message: `the process that owned this run${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''} is gone; recorded as interrupted`,
                },
              };
              await writeFileAtomic(
                dir,
                'run.json',
                `${JSON.stringify(marked, null, 2)}\n`,
                0o600,
                CODES,
              );
              interrupted.push(runId);
            },
          );
        }
        return { interrupted };
      } finally {
        await base.close();
      }
    },

    async flush() {
      const mine = [...LIVE.values()].filter((r) => r.key.startsWith(`${basePath}\0`));
      for (const run of mine) {
        await flushRun(run, true);
        await persistSnapshot(run);
      }
    },

    async close() {
      await store.flush();
      for (const run of [...LIVE.values()].filter((r) => r.key.startsWith(`${basePath}\0`))) {
        clearInterval(run.leaseTimer);
        clearTimeout(run.fsyncTimer);
        clearTimeout(run.snapshotTimer);
        LIVE.delete(run.key);
        await run.events.close().catch(() => undefined);
        await run.journal.close().catch(() => undefined);
      }
    },
  };

  if (options.recoverAtOpen !== false) await store.recover();
  return store;
}
