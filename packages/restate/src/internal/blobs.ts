// Large answers by reference: Restate refuses messages above its limit (32 MiB by default), so an
// answer, journal entry or run result whose JSON is above a threshold is stored in `WfBlob`
// virtual objects, one per chunk well below the limit, keyed `<SHA-256 of the JSON text>.<chunk>`
// (in the server's state: it survives the loss of any worker), and only the reference travels.
// One object per chunk because Restate hands an object's state to each of its invocations: a
// whole blob under one key would exceed the limit again. Readers check the size against their
// bound before fetching and the hash after.
import './sdk-setup.js';
import { createHash } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { RestateBackendError } from '../errors.js';
import { callPatiently, httpJson, parseAnswer } from './http.js';
import { BLOB_OBJECT } from './names.js';

/** Characters per chunk: at most ~12 MiB of UTF-8 per request even for 3-byte characters. */
export const BLOB_CHUNK_CHARS = 4 * 1024 * 1024;

/** What travels instead of a large value. */
export interface BlobRef {
  readonly $wfBlob: {
    readonly sha256: string;
    /** UTF-8 bytes of the JSON text. */
    readonly bytes: number;
    readonly chunks: number;
  };
}

export interface BlobPolicy {
  readonly ingress: string;
  /** Values whose JSON is above this many UTF-8 bytes go by reference. */
  readonly thresholdBytes: number;
  /** A reference to more than this many bytes is refused before anything is fetched. */
  readonly maxBytes: number;
}

export function isBlobRef(value: unknown): value is BlobRef {
  const b = (value as { $wfBlob?: unknown } | null)?.$wfBlob as BlobRef['$wfBlob'] | undefined;
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof b === 'object' &&
    b !== null &&
    typeof b.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(b.sha256) &&
    Number.isSafeInteger(b.bytes) &&
    Number.isSafeInteger(b.chunks) &&
    b.chunks >= 1
  );
}

const blobError = (message: string) =>
  new RestateBackendError('WF_RESTATE_ANSWER_REFERENCE', message);

/** `value`, or a reference to it once its JSON is above the threshold (stored first). */
export async function toRef<T>(
  policy: BlobPolicy,
  value: T,
  what: string,
  signal: AbortSignal | undefined,
  /** The run storing it: a blob is kept while a run that stored it is (deleteRun releases it). */
  owner: string,
): Promise<T | BlobRef> {
  if (value === undefined) return value;
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  if (bytes <= policy.thresholdBytes) return value;
  if (bytes > policy.maxBytes) {
    throw blobError(`${what}: ${bytes} bytes of JSON, more than the limit of ${policy.maxBytes}`);
  }
  const sha256 = createHash('sha256').update(text).digest('hex');
  const chunks = Math.ceil(text.length / BLOB_CHUNK_CHARS);
  const base = `${policy.ingress}/${BLOB_OBJECT}/${sha256}`;
  // Content-addressed: a retried or concurrent store of the same value writes the same chunks.
  for (let index = 0; index < chunks; index += 1) {
    const data = text.slice(index * BLOB_CHUNK_CHARS, (index + 1) * BLOB_CHUNK_CHARS);
    parseAnswer(
      `storing ${what}`,
      await callPatiently(
        `storing chunk ${index + 1}/${chunks} of ${what}`,
        () => httpJson('POST', `${base}.${index}/put`, { data, owner }, {}, signal),
        signal,
      ),
    );
  }
  return { $wfBlob: { sha256, bytes, chunks } };
}

/** The value a reference names, checked against `maxBytes` and its hash; anything else as is. */
export async function fromRef<T>(
  policy: Pick<BlobPolicy, 'ingress' | 'maxBytes'>,
  value: T | BlobRef,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  if (!isBlobRef(value)) return value as T;
  const { sha256, bytes, chunks } = value.$wfBlob;
  if (bytes > policy.maxBytes) {
    throw blobError(
      `${what}: the stored answer has ${bytes} bytes, more than the limit of ${policy.maxBytes}`,
    );
  }
  const base = `${policy.ingress}/${BLOB_OBJECT}/${sha256}`;
  const parts: string[] = [];
  let got = 0;
  for (let index = 0; index < chunks; index += 1) {
    const part = parseAnswer<unknown>(
      `loading ${what}`,
      await callPatiently(
        `loading chunk ${index + 1}/${chunks} of ${what}`,
        () => httpJson('POST', `${base}.${index}/get`, null, {}, signal),
        signal,
      ),
    );
    if (typeof part !== 'string') {
      throw blobError(`${what}: chunk ${index + 1}/${chunks} of blob ${sha256} is missing`);
    }
    got += Buffer.byteLength(part);
    if (got > bytes) throw blobError(`${what}: blob ${sha256} is larger than its reference says`);
    parts.push(part);
  }
  const text = parts.join('');
  if (createHash('sha256').update(text).digest('hex') !== sha256) {
    throw blobError(`${what}: blob ${sha256} does not match its hash`);
  }
  return JSON.parse(text) as T;
}

/**
 * The WfBlob object: key `<sha256>.<index>` holds that chunk of the JSON text and the runs that
 * stored it (`owners`, reference counting): a chunk is cleared when the last of them releases it
 * (deleteRun). Per chunk, so a put racing a release on the same key is ordered by the object:
 * either the put comes after (the data is there again, owned) or before (still owned).
 */
export const blobObject = restate.object({
  name: BLOB_OBJECT,
  handlers: {
    put: async (ctx: restate.ObjectContext, input: { data: string; owner: string } | string) => {
      const { data, owner } = typeof input === 'string' ? { data: input, owner: '' } : input;
      if (typeof data !== 'string') throw new restate.TerminalError('a chunk is a string');
      ctx.set('data', data);
      if (typeof owner === 'string' && owner !== '') {
        const owners = (await ctx.get<string[]>('owners')) ?? [];
        if (!owners.includes(owner)) ctx.set('owners', [...owners, owner]);
      }
    },
    /** The run `owner` no longer needs the chunk: cleared once no run does. */
    release: async (ctx: restate.ObjectContext, input: { owner: string }) => {
      const owners = ((await ctx.get<string[]>('owners')) ?? []).filter((o) => o !== input?.owner);
      if (owners.length === 0) ctx.clearAll();
      else ctx.set('owners', owners);
      return { owners: owners.length };
    },
    get: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext) => (await ctx.get<string>('data')) ?? null,
    ),
  },
});
