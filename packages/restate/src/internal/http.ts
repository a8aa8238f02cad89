// JSON over HTTP/1.1 to the Restate ingress and admin APIs. node:http has no response timeout by
// default, which the attach calls need (a child may run for many minutes).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RestateBackendError } from '../errors.js';

export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
}

export function httpJson(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
  /** Gives up (ETIMEDOUT) when the socket is idle this long: probes only, never long polls. */
  timeoutMs?: number,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = send(
      u,
      {
        method,
        headers: {
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': payload.length }
            : {}),
          accept: 'application/json',
          ...headers,
        },
        ...(signal ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (timeoutMs !== undefined)
      req.setTimeout(timeoutMs, () =>
        req.destroy(
          Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }),
        ),
      );
    req.end(payload);
  });
}

/** A JSON answer from a 2xx response, or a WF_RESTATE_REQUEST_FAILED naming the call. */
export function parseAnswer<T>(what: string, answer: HttpAnswer): T {
  if (answer.status < 200 || answer.status >= 300) {
    throw new RestateBackendError(
      'WF_RESTATE_REQUEST_FAILED',
      `${what}: Restate answered HTTP ${answer.status}: ${answer.text.slice(0, 300)}`,
    );
  }
  try {
    return (answer.text === '' ? null : JSON.parse(answer.text)) as T;
  } catch {
    throw new RestateBackendError(
      'WF_RESTATE_REQUEST_FAILED',
      `${what}: Restate answered HTTP ${answer.status} with non-JSON: ${answer.text.slice(0, 120)}`,
    );
  }
}

/** Transport failures (connection refused or reset, server restarting) are worth retrying. */
export function transient(error: unknown, answer?: HttpAnswer): boolean {
  if (answer) return answer.status >= 500 || answer.status === 429;
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'UND_ERR_SOCKET'].includes(
      code,
    )
  );
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Calls until a non-transient answer: while the server restarts (seconds) calls retry with
 * backoff up to `patienceMs`; an aborted signal ends the loop with its reason.
 */
export async function callPatiently(
  what: string,
  call: () => Promise<HttpAnswer>,
  signal?: AbortSignal,
  patienceMs = 120_000,
): Promise<HttpAnswer> {
  const deadline = Date.now() + patienceMs;
  let wait = 50;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    let answer: HttpAnswer | undefined;
    let error: unknown;
    try {
      answer = await call();
    } catch (e) {
      error = e;
    }
    if (answer && !transient(undefined, answer)) return answer;
    if (!answer && !transient(error)) throw error;
    if (signal?.aborted) throw signal.reason;
    if (Date.now() > deadline) {
      throw new RestateBackendError(
        'WF_RESTATE_UNREACHABLE',
        `${what}: Restate did not answer within ${patienceMs} ms (${answer ? `HTTP ${answer.status}` : String((error as Error)?.message ?? error)})`,
        { cause: error },
      );
    }
    await sleep(wait, signal);
    wait = Math.min(wait * 2, 1_000);
  }
}

/** An http(s) URL without trailing slashes, or WF_RESTATE_INVALID_OPTIONS naming `what`. */
export function checkUrl(what: string, value: unknown): string {
  let u: URL | undefined;
  try {
    u = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `the Restate ${what} URL must be an http(s) URL, got ${JSON.stringify(value)}`,
    );
  }
  return u.toString().replace(/\/+$/, '');
}
