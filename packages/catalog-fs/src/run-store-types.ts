// The run store's public shapes: options, run.json (`wf.run` v1), summaries and the RunStore
// interface that openRunStore returns (re-exported from run-store.ts).
import type { RunRecorder } from '@wf/bridge';
import type { OperationError, Result } from './errors.js';
import type {
  JournalEntryRecord,
  RunEventRecord,
  RunStartRecordShape,
  RunStatus,
} from './run-types.js';

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
  /**
   * Run `recover()` at open. Default true. A caller that lists right away can pass false and
   * `listRecent(n, { recover: true })` to recover and list in one pass over the store.
   */
  readonly recoverAtOpen?: boolean;
  /**
   * Open, list and read with synchronous file calls instead of a thread-pool round trip per call
   * (writes are unchanged). For a one-shot command line that waits for each read anyway: `wf runs`
   * and `wf show`. Never in a host whose event loop serves other work meanwhile. Default false.
   */
  readonly blockingReads?: boolean;
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
  /** A resumed run: the run it replays and when the resume started (epoch ms). */
  readonly resumedFrom?: { readonly runId: string; readonly at: number };
  /** The agent provider that ran the children (`simulated`, `dsh:spawn`...). */
  readonly provider?: string;
  /** True when the children were simulated (no model was called). */
  readonly simulated?: boolean;
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

/**
 * The disk recorder: the engine's RunRecorder port (declared in @wf/bridge), widened to keep a
 * capsule and any event type, with `load` always present, plus the queries and maintenance.
 */
export interface RunStore extends RunRecorder {
  /** The resolved directory holding the run directories (the partition, if any). */
  readonly root: string;
  begin(run: RunStartRecordShape & { readonly capsule?: unknown }): Promise<void>;
  /**
   * Begins the run, or continues one this store holds under the same start (another attempt of
   * it: a durable backend re-executing it after its executor was lost): its events are appended
   * after the ones recorded, renumbered; its journal is recorded anew. A different run under the
   * same id is refused (`WF_CATALOG_RUN_EXISTS`).
   */
  beginOrContinue(
    run: RunStartRecordShape & { readonly capsule?: unknown },
  ): Promise<{ readonly continued: boolean }>;
  /** Stops recording a live run without ending it (its executor moved elsewhere). */
  detach(runId: string): Promise<void>;
  event(event: RunEventRecord): void;
  load(
    runId: string,
  ): Promise<
    | { readonly start: RunStartRecordShape; readonly journal: readonly JournalEntryRecord[] }
    | undefined
  >;
  /** Every run, newest first: reads each run's run.json. */
  list(): Promise<readonly RunSummary[]>;
  /**
   * The newest `limit` runs (same order as `list`) and how many are stored. For `limit <= 100`,
   * once the runs index has its header, reads its header, tail and body end and the run.json of
   * the runs returned, and lists no directory (when the index agrees with the store directory's
   * link count; else it takes the full pass, which rewrites the index). `recover: true` runs
   * recovery first in the same pass (over the runs the index has not seen end, or over the full
   * pass's directory listing and index read) and returns the runs it marked.
   */
  listRecent(
    limit: number,
    options?: { readonly recover?: boolean },
  ): Promise<{
    readonly runs: readonly RunSummary[];
    readonly total: number;
    /** With `recover: true`: the runs recovery marked `interrupted`. */
    readonly interrupted?: readonly string[];
  }>;
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
  /**
   * Marks runs whose owner is gone `interrupted`. Opens only the runs the runs index has not seen
   * end when the index vouches for the store (constant in stored runs); otherwise lists the store
   * (the full pass), removing trash and abandoned temp files and rewriting the index.
   */
  recover(): Promise<{ readonly interrupted: readonly string[] }>;
  /** Writes and fsyncs everything buffered (events, journal, snapshots). */
  flush(): Promise<void>;
  /** Flushes and stops lease timers; live runs stay `running` on disk (recover marks them later). */
  close(): Promise<void>;
}
