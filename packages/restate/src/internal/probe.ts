// Fail fast: before a command waits on Restate it asks the server who it is, so a wrong URL, a
// server that is down or unreachable, something that is not Restate, or a Restate without the @wf
// services each ends in a named error within seconds instead of a silent two-minute wait.
import { RestateBackendError } from '../errors.js';
import { checkUrl, type HttpAnswer, httpJson, sleep } from './http.js';
import { RUN_SERVICE } from './names.js';

/** How long a probe keeps trying a refused connection (a server just starting) and one request's bound. */
export const PROBE_PATIENCE_MS = 3_000;

async function ask(url: string, patienceMs: number): Promise<HttpAnswer> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await httpJson('GET', url, undefined, {}, undefined, patienceMs);
    } catch (e) {
      const code = (e as { code?: unknown })?.code;
      if (code === 'ECONNREFUSED' && Date.now() + 200 < deadline) {
        await sleep(200);
        continue;
      }
      throw new RestateBackendError(
        'WF_RESTATE_UNREACHABLE',
        `nothing answers at ${url}: ${code === 'ECONNREFUSED' ? 'connection refused (is restate-server running, on this port?)' : String((e as Error)?.message ?? e)}`,
        { cause: e },
      );
    }
  }
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Checks that `ingress` is a Restate ingress and, with `needWorker`, that a worker has registered
 * the @wf services there. Resolves with the services the ingress serves.
 */
export async function probeIngress(
  ingress: string,
  options: { needWorker?: boolean; patienceMs?: number } = {},
): Promise<string[]> {
  ingress = checkUrl('ingress', ingress);
  const patience = options.patienceMs ?? PROBE_PATIENCE_MS;
  const answer = await ask(`${ingress}/restate/health`, patience);
  const body = json(answer.text) as { services?: unknown } | undefined;
  const services = Array.isArray(body?.services)
    ? body.services.map((s) => String((s as { name?: unknown })?.name ?? s))
    : undefined;
  if (answer.status !== 200 || services === undefined) {
    const admin = answer.status === 404 && (await looksLikeAdmin(ingress, patience));
    throw new RestateBackendError(
      'WF_RESTATE_NOT_RESTATE',
      `${ingress} is not a Restate ingress: /restate/health answered HTTP ${answer.status}${admin ? '; it is the admin API (the ingress is the other port, 8080 by default)' : ''}`,
    );
  }
  if (options.needWorker && !services.includes(RUN_SERVICE)) {
    throw new RestateBackendError(
      'WF_RESTATE_NO_WORKER',
      `no worker serves the @wf services at ${ingress}: the Restate server knows ${services.length === 0 ? 'no service' : services.join(', ')}; start one with \`wf worker --restate ${ingress}\``,
    );
  }
  return services;
}

async function looksLikeAdmin(url: string, patienceMs: number): Promise<boolean> {
  try {
    const a = await httpJson('GET', `${url}/version`, undefined, {}, undefined, patienceMs);
    return a.status === 200 && typeof (json(a.text) as { version?: unknown })?.version === 'string';
  } catch {
    return false;
  }
}

/** Checks that `admin` is a Restate admin API; resolves with the server's version. */
export async function probeAdmin(admin: string, patienceMs = PROBE_PATIENCE_MS): Promise<string> {
  admin = checkUrl('admin', admin);
  const answer = await ask(`${admin}/version`, patienceMs);
  const version = (json(answer.text) as { version?: unknown } | undefined)?.version;
  if (answer.status !== 200 || typeof version !== 'string') {
    throw new RestateBackendError(
      'WF_RESTATE_NOT_RESTATE',
      `${admin} is not a Restate admin API: /version answered HTTP ${answer.status}${answer.status === 400 ? '; it looks like the ingress (the admin API is the other port, 9070 by default)' : ''}`,
    );
  }
  return version;
}
