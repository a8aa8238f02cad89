// Service names and keys as Restate sees them: one place, so the worker, the backend and the
// client agree. Changing a name orphans every run in flight under the old one.
export const RUN_SERVICE = 'WfRun';
export const AGENT_OBJECT = 'WfAgent';
export const JOURNAL_OBJECT = 'WfJournal';
export const SEMAPHORE_OBJECT = 'WfSemaphore';
/** A run tree's agents and tokens, keyed by its root run id (allowance.ts). */
export const ALLOWANCE_OBJECT = 'WfAllowance';
/** Large answers by reference, keyed by the SHA-256 of their JSON text (blobs.ts). */
export const BLOB_OBJECT = 'WfBlob';
/** The deployment-wide semaphore's key (its first shard's, when it is sharded). */
export const DEPLOYMENT_KEY = 'deployment';

/**
 * The semaphore as `shards` WfSemaphore keys (`deployment`, `deployment.1`, ...) whose capacities
 * add up to the deployment's: one key is one serial queue on the server, so with one key every
 * acquire and release of the deployment waits its turn there. Returns each shard's capacity.
 */
export function shardCapacities(capacity: number, shards: number): number[] {
  return Array.from(
    { length: shards },
    (_, i) => Math.floor(capacity / shards) + (i < capacity % shards ? 1 : 0),
  );
}

export const shardKey = (shard: number): string =>
  shard === 0 ? DEPLOYMENT_KEY : `${DEPLOYMENT_KEY}.${shard}`;

/**
 * The shard a child's slot lives in, from its key `<runId>/<taskId>` alone (a retried acquire and
 * the release find the same one). The task number goes round-robin from an offset per run, so a
 * run's concurrent children spread evenly: at most ceil(n / shards) of them share a shard.
 */
export function shardOf(holder: string, shards: number): number {
  if (shards <= 1) return 0;
  const slash = holder.lastIndexOf('/');
  const n = /(\d+)$/.exec(holder.slice(slash + 1))?.[1];
  if (slash < 0 || n === undefined) return Number.parseInt(requestHash(holder), 16) % shards;
  const offset = Number.parseInt(requestHash(holder.slice(0, slash)), 16);
  return (offset + (Number(n) % shards)) % shards;
}

/** A child's object key: `<runId>/<taskId>`. */
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
