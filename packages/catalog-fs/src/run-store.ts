// The run store: the disk implementation of the engine's RunRecorder port, plus listing, tailing,
// aliases, deletion, retention and crash recovery (invariant 9). Events and the journal are
// append-only JSON lines written without re-reading; run.json is a coalesced atomic snapshot.
// This file assembles the store from its state (internal/run-layout.ts) and the recorder,
// queries and maintenance modules.
import { openRunStoreState } from './internal/run-layout.js';
import {
  closeStore,
  deleteRun,
  flushStore,
  pruneRuns,
  renameRun,
} from './internal/run-maintenance.js';
import { recoverRuns } from './internal/run-recovery.js';
import {
  listRecentRuns,
  listRuns,
  loadRun,
  readEvents,
  resolveRun,
  showRun,
} from './internal/run-queries.js';
import {
  beginRun,
  finishRun,
  recordEvent,
  recordJournal,
  updateRun,
  writeArtifact,
} from './internal/run-recorder.js';
import { beginOrContinueRun, detachRun } from './internal/run-continue.js';
import type { RunStore, RunStoreOptions } from './run-store-types.js';

/** Opens (creating) the run store. Recovers stale runs unless `recoverAtOpen: false`. */
export async function openRunStore(options: RunStoreOptions): Promise<RunStore> {
  if (typeof options?.project !== 'string' || options.project === '') {
    throw new TypeError('openRunStore: `project` must be the project directory');
  }
  const s = await openRunStoreState(options);
  const store: RunStore = {
    root: s.basePath,
    begin: (run) => beginRun(s, run),
    beginOrContinue: (run) => beginOrContinueRun(s, run),
    detach: (runId) => detachRun(s, runId),
    event: (event) => recordEvent(s, event),
    journal: (runId, entry, text) => recordJournal(s, runId, entry, text),
    artifact: (runId, name, value) => writeArtifact(s, runId, name, value),
    update: (runId, patch) => updateRun(s, runId, patch),
    finish: (runId, record) => finishRun(s, runId, record),
    load: (runId) => loadRun(s, runId),
    list: () => listRuns(s),
    listRecent: (limit, listOptions) => listRecentRuns(s, limit, listOptions),
    show: (runId) => showRun(s, runId),
    events: (runId, eventOptions) => readEvents(s, runId, eventOptions),
    resolve: (target) => resolveRun(s, target),
    rename: (runId, displayName) => renameRun(s, runId, displayName),
    delete: (runId, deleteOptions) => deleteRun(s, runId, deleteOptions),
    prune: (pruneOptions) => pruneRuns(s, pruneOptions),
    recover: () => recoverRuns(s),
    flush: () => flushStore(s),
    close: () => closeStore(s),
  };
  if (options.recoverAtOpen !== false) await store.recover();
  return store;
}
