// Service names and keys as Restate sees them: one place, so the worker, the backend and the
// client agree. Changing a name orphans every run in flight under the old one.
export const RUN_SERVICE = 'WfRun';
export const AGENT_OBJECT = 'WfAgent';
export const JOURNAL_OBJECT = 'WfJournal';
export const SEMAPHORE_OBJECT = 'WfSemaphore';
/** Large answers by reference, keyed by the SHA-256 of their JSON text (blobs.ts). */
export const BLOB_OBJECT = 'WfBlob';
/** The one deployment-wide semaphore key. */
export const DEPLOYMENT_KEY = 'deployment';

/** A child's object key: `<runId>/<taskId>` (issue 15). */
export const agentKey = (runId: string, taskId: string): string => `${runId}/${taskId}`;

/**
 * A nested run's id and WfRun key: `<parentRunId>.wf<callId>-<request hash>`, a valid run id (the
 * run store mirror records it), shortened with a hash of the parent id when it would be too long.
 */
export function nestedRunId(parentRunId: string, callId: number, hash: string): string {
  const tail = `.wf${callId}-${hash}`;
  const id = `${parentRunId}${tail}`;
  if (id.length <= 128) return id;
  return `${parentRunId.slice(0, 128 - tail.length - 9)}-${requestHash(parentRunId)}${tail}`;
}

/** FNV-1a 32-bit of a JSON text: tells two different requests under one task id apart. */
export function requestHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const isRunId = (value: unknown): value is string =>
  typeof value === 'string' && RUN_ID.test(value);
