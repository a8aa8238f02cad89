// The run store's state and on-disk layout: options resolved once into RunStoreState, the
// partition rule, run directories, snapshots and aliases, and the run summaries built from them.
import { createHash } from './crypto.js';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { CatalogFsCode, CatalogFsError } from '../errors.js';
import { fail } from './failure.js';
import { BLOCKING_IO, type Io, NONBLOCKING_IO } from './io.js';
import type { FsyncPolicy, RunSnapshot, RunStoreOptions, RunSummary } from '../run-store-types.js';
import {
  checkRecord,
  count,
  errorShape,
  finiteNumber,
  flag,
  listOf,
  oneOf,
  optional,
  RUN_COST_SCHEMA,
  RUN_EVENT_SCHEMA,
  RUN_STATUSES,
  type RecordIssue,
  type RecordSchema,
  shape,
  TRUSTS,
  text,
} from '@wf/bridge/run-records';
import {
  type RunFinishRecordShape,
  TERMINAL_STATUSES,
  type TerminalRunStatus,
} from '../run-types.js';
import {
  entryPath,
  type ErrorCodes,
  HOSTNAME,
  isPidAlive,
  noteRead,
  openChildDir,
  openRootDir,
  processToken,
  readRegularFile,
  type SafeDir,
  TEMP_PREFIX,
  withDir,
  writeFileCreateOnly,
} from './safe-dir.js';

export const CODES: ErrorCodes = { unsafe: CatalogFsCode.RunUnsafePath, io: CatalogFsCode.RunIo };
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MARKER = '.project.json';
export const TRASH_PREFIX = '.trash-';
export const RESERVED = new Set([
  'format',
  'version',
  'runId',
  'owner',
  'artifacts',
  'eventCount',
  'lastSeq',
  'startedAt',
]);
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;
export const MAX_LOG_BYTES = 2 * 1024 * 1024 * 1024 - 1;
/** The directory of a run's journal entries stored by reference (run-journal-files.ts). */
export const JOURNAL_FILES_DIR = 'journal-entries';

/** Runs owned by this process, across store instances (so a second store never recovers them). */
export const LIVE = new Map<string, LiveRun>();

export interface LiveRun {
  readonly key: string;
  readonly runId: string;
  snapshot: Record<string, unknown>;
  events: FileHandle;
  journal: FileHandle;
  /** Lines waiting for the next flush, each without its newline (joined with one per batch). */
  eventBuf: string[];
  journalBuf: string[];
  /**
   * Journal entries too large for one line, waiting to be written to their side files (journal.ts
   * in this package): always written, durably, before the lines that refer to them.
   */
  journalFiles: { readonly name: string; readonly text: string }[];
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
  /** Set when the run leaves LIVE (finish or the store's close). */
  retired: boolean;
  /** Set once the terminal snapshot (and the result before it) is on disk. */
  terminal: boolean;
  /**
   * Added to each event's seq: a continued run (another attempt of it, `beginOrContinue`) numbers
   * its events from 1 again, after the ones already in events.jsonl.
   */
  seqOffset: number;
  /** What makes two starts the same run (`startIdentity`): a continuation must match it. */
  identity: string;
}

/**
 * What a run is, as far as continuing it goes: the same workflow, source, args, seed and
 * logical start time is the same run (another attempt of it); anything else under that id is not.
 */
export function startIdentity(run: {
  readonly workflow?: unknown;
  readonly trust?: unknown;
  readonly manifest?: unknown;
  readonly source?: unknown;
  readonly args?: unknown;
  readonly seed?: unknown;
  readonly startTime?: unknown;
}): string {
  return JSON.stringify([
    run.workflow ?? null,
    run.trust ?? null,
    run.manifest ?? null,
    run.source ?? null,
    run.args ?? null,
    run.seed ?? null,
    run.startTime ?? null,
  ]);
}

export function checkRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId) || runId.includes('..')) {
    throw new CatalogFsError(
      CatalogFsCode.RunInvalidId,
      `run id ${JSON.stringify(String(runId)).slice(0, 80)} is not a safe identifier (letters, digits, ".", "_", "-"; at most 128)`,
    );
  }
}

export function isTerminal(status: unknown): status is TerminalRunStatus {
  return TERMINAL_STATUSES.includes(status as TerminalRunStatus);
}

/**
 * Parses event lines: skips a torn last line and corrupt, misshapen (RUN_EVENT_SCHEMA) or repeated
 * lines, never throws. `key` is the field that increases line by line (`seq`).
 */
export function parseLines<T>(text: string, key: 'seq', after = 0): T[] {
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
    if (typeof n !== 'number' || n <= last || checkRecord(RUN_EVENT_SCHEMA, value)) continue;
    last = n;
    out.push(value as T);
  }
  return out;
}

/** Everything a store instance knows, resolved once at open; the modules below take it first. */
export interface RunStoreState {
  readonly rootPath: string;
  /** The directory holding the run directories: the root, or its partition for this project. */
  readonly basePath: string;
  readonly partition: string | undefined;
  readonly policy: FsyncPolicy;
  readonly fsyncIntervalMs: number;
  readonly snapshotIntervalMs: number;
  readonly leaseMs: number;
  readonly maxResultChars: number;
  readonly maxLineBytes: number;
  readonly maxArtifactBytes: number;
  readonly allowSymlinkedRoot: boolean;
  /** How the store opens, lists and reads (RunStoreOptions.blockingReads; io.ts). */
  readonly io: Io;
  /** Per run: where the last events() read stopped (after a whole line), for cheap tailing. */
  readonly tails: Map<string, { ino: number; offset: number; lastSeq: number }>;
  /** The run the last event/journal/update went to: saves building and hashing its key per call. */
  lastLive: LiveRun | undefined;
}

/** Resolves the options into the store state and claims the partition (if any) for the project. */
export async function openRunStoreState(options: RunStoreOptions): Promise<RunStoreState> {
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
  const s: RunStoreState = {
    rootPath,
    basePath,
    partition,
    policy,
    fsyncIntervalMs,
    snapshotIntervalMs,
    leaseMs,
    maxResultChars,
    maxLineBytes,
    maxArtifactBytes,
    allowSymlinkedRoot,
    io: options.blockingReads === true ? BLOCKING_IO : NONBLOCKING_IO,
    tails: new Map(),
    lastLive: undefined,
  };

  // Partition marker: created once, create-only; a marker naming another project is refused so
  // two projects never share a partition.
  if (partition) {
    await withDir(await requireBase(s), async (base) => {
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

  return s;
}

export async function openBase(s: RunStoreState, create: boolean): Promise<SafeDir | undefined> {
  const root = await openRootDir(s.rootPath, {
    create,
    allowSymlinkedRoot: s.allowSymlinkedRoot,
    codes: CODES,
    label: 'run store root',
    io: s.io,
  });
  if (!root || !s.partition) return root;
  try {
    return await openChildDir(root, s.partition, { create, codes: CODES });
  } finally {
    await root.close();
  }
}

export async function requireBase(s: RunStoreState): Promise<SafeDir> {
  const base = await openBase(s, true);
  if (!base)
    throw new CatalogFsError(
      CatalogFsCode.RunIo,
      `could not create the run store at ${s.basePath}`,
    );
  return base;
}

export async function openRun(s: RunStoreState, runId: string): Promise<SafeDir | undefined> {
  const base = await openBase(s, false);
  if (!base) return undefined;
  try {
    return await openChildDir(base, runId, { create: false, codes: CODES });
  } finally {
    await base.close();
  }
}

export function keyOf(s: RunStoreState, runId: string): string {
  return `${s.basePath}\0${runId}`;
}

export function liveRun(s: RunStoreState, runId: string): LiveRun | undefined {
  const last = s.lastLive;
  if (last !== undefined && last.runId === runId && !last.retired) return last;
  const run = LIVE.get(keyOf(s, runId));
  s.lastLive = run;
  return run;
}

/** run.json (`wf.run` v1), field by field: the start and finish records' fields, and the store's. */
const RUN_SNAPSHOT_SCHEMA: RecordSchema = {
  format: oneOf(['wf.run']),
  version: oneOf([1]),
  runId: text,
  workflow: text,
  status: oneOf(RUN_STATUSES),
  execution: oneOf(TRUSTS),
  startedAt: finiteNumber,
  updatedAt: optional(finiteNumber),
  endedAt: optional(finiteNumber),
  eventCount: optional(count),
  lastSeq: optional(count),
  phase: optional(text),
  resultSummary: optional(text),
  error: optional(errorShape),
  artifacts: optional(listOf(shape({ name: text, ref: text, bytes: count }))),
  cost: optional(shape(RUN_COST_SCHEMA)),
  sourceRunId: optional(text),
  revisionOf: optional(text),
  resumedFromRunId: optional(text),
  resumedFrom: optional(shape({ runId: text, at: finiteNumber })),
  provider: optional(text),
  simulated: optional(flag),
  interruptedFrom: optional(text),
  owner: optional(shape({ pid: count, token: text, host: text, leaseUntil: finiteNumber })),
};

/** The message naming a record's file and its first bad field. */
export function recordIssueText(file: string, found: RecordIssue): string {
  return found.field === ''
    ? `${file} is not ${found.expected}`
    : `${file}: field ${found.field} must be ${found.expected}`;
}

/**
 * Reads and checks run.json; undefined when there is none. Every field a reader uses is checked
 * against its schema, so a damaged or hand-edited record is refused here, naming the file and
 * the field, and never reaches a caller that would trust its type.
 */
export async function readSnapshotIfAny(dir: SafeDir): Promise<RunSnapshot | undefined> {
  const file = entryPath(dir.path, 'run.json');
  const raw = await readRegularFile(dir, 'run.json', MAX_SNAPSHOT_BYTES, CODES);
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw.data.toString('utf8'));
  } catch (error) {
    throw new CatalogFsError(
      CatalogFsCode.RunCorrupt,
      `${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const found = checkRecord(RUN_SNAPSHOT_SCHEMA, value);
  if (found) throw new CatalogFsError(CatalogFsCode.RunCorrupt, recordIssueText(file, found));
  return value as RunSnapshot;
}

export async function readSnapshot(dir: SafeDir): Promise<RunSnapshot> {
  const snapshot = await readSnapshotIfAny(dir);
  if (!snapshot)
    throw new CatalogFsError(CatalogFsCode.RunCorrupt, `${dir.path}/run.json is missing`);
  return snapshot;
}

/** The files begin() writes: a directory holding only these (and temp files) was a start. */
const BEGIN_FILES: ReadonlySet<string> = new Set([
  'start.json',
  'manifest.json',
  'script.js',
  'capsule.workflow.json',
  'events.jsonl',
  'journal.jsonl',
]);

/**
 * What a directory with a run id's name but no run.json is. `damaged`: a run that recorded
 * something (log lines, a result, artifacts) and lost its run.json, listed as unreadable.
 * `half-made`: a start that never completed (a crash or a full disk inside begin() of an earlier
 * version, which built runs in place): only begin()'s files, logs empty; no run, and recovery
 * removes it. `foreign`: anything else (a directory of the user's own): no run, never touched.
 */
export async function withoutRunJson(dir: SafeDir): Promise<'damaged' | 'half-made' | 'foreign'> {
  let names: string[];
  try {
    names = await dir.io.readdir(dir.self);
  } catch {
    return 'foreign';
  }
  let began = false;
  for (const name of names) {
    if (name.startsWith(TEMP_PREFIX)) {
      began = true;
      continue;
    }
    if (!BEGIN_FILES.has(name)) {
      if (name === 'result.json' || name === 'artifacts') return 'damaged';
      return 'foreign';
    }
    if (name === 'start.json') began = true;
    if (name === 'events.jsonl' || name === 'journal.jsonl') {
      const st = await dir.io.lstatIfAny(dir.at(name)).catch(() => undefined);
      if (st?.isFile() && st.size > 0) return 'damaged';
    }
  }
  return began ? 'half-made' : 'foreign';
}

/**
 * What a directory named like a run is: `run` when it has run.json or recorded something and lost
 * it, else what `withoutRunJson` says.
 */
export async function runDirKind(
  base: SafeDir,
  runId: string,
): Promise<'run' | 'half-made' | 'foreign'> {
  const has = await base.io
    .lstatIfAny(entryPath(base.at(runId), 'run.json'))
    .catch(() => undefined);
  if (has) return 'run';
  const dir = await openChildDir(base, runId, { create: false, codes: CODES }).catch(
    () => undefined,
  );
  const kind = (await withDir(dir, withoutRunJson)) ?? 'foreign';
  return kind === 'damaged' ? 'run' : kind;
}

export async function readAlias(dir: SafeDir): Promise<string | undefined> {
  try {
    const raw = await readRegularFile(dir, 'alias.json', 64 * 1024, CODES);
    const value = raw
      ? (JSON.parse(raw.data.toString('utf8')) as { displayName?: unknown })
      : undefined;
    return typeof value?.displayName === 'string' ? value.displayName : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the owner of a non-terminal run is gone (so the record is stale). */
export function ownerGone(
  s: RunStoreState,
  snapshot: RunSnapshot,
  runId: string,
  now: number,
): boolean {
  if (liveRun(s, runId)) return false;
  const owner = snapshot.owner;
  if (!owner || typeof owner.pid !== 'number') return true;
  if (owner.host === HOSTNAME && owner.pid === process.pid && owner.token === processToken()) {
    // Ours, but no store in this process holds it live: its store was closed or dropped.
    return true;
  }
  if (owner.host === HOSTNAME && !isPidAlive(owner.pid)) return true;
  return typeof owner.leaseUntil !== 'number' || owner.leaseUntil < now;
}

export async function summarize(
  s: RunStoreState,
  base: SafeDir,
  runId: string,
): Promise<RunSummary | undefined> {
  const live = liveRun(s, runId);
  const dir = await openChildDir(base, runId, { create: false, codes: CODES }).catch(
    (error: unknown) => {
      if (CatalogFsError.is(error)) return error;
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
      const snapshot = await readSnapshotIfAny(dir);
      // A start that never completed, or a directory of the user's own, is no run: left out.
      if (!snapshot && (await withoutRunJson(dir)) !== 'damaged') return undefined;
      if (!snapshot)
        throw new CatalogFsError(CatalogFsCode.RunCorrupt, `${dir.path}/run.json is missing`);
      const active = !isTerminal(snapshot.status) && !ownerGone(s, snapshot, runId, Date.now());
      return { runId, ...alias, active, snapshot };
    } catch (error) {
      return { runId, ...alias, active: false, error: fail(error).error };
    }
  } finally {
    await dir.close();
  }
}

export async function runIds(base: SafeDir): Promise<string[]> {
  const names = await base.io.readdir(base.self);
  await noteRead('dir-listed', base.path);
  return runIdsOf(names);
}

/** The run directories among a listing of the base directory, in name order. */
export function runIdsOf(names: readonly string[]): string[] {
  return names.filter((n) => RUN_ID_PATTERN.test(n) && !n.includes('..')).sort();
}
