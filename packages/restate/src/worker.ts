// A Restate worker: serves the @wf services over HTTP/1.1 (request-response, so any TCP load
// balancer can spread N workers behind one address) and registers that address with the server.
import './internal/sdk-setup.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import type {
  AgentProvider,
  EngineLimits,
  ResolvedWorkflow,
  RunRecorder,
  SandboxLike,
} from '@wf/engine';
import { RestateBackendError } from './errors.js';
import { callPatiently, checkUrl, httpJson, parseAnswer } from './internal/http.js';

export { checkUrl };
import { RUN_SERVICE } from './internal/names.js';
import { PROBE_PATIENCE_MS, probeAdmin, probeIngress } from './internal/probe.js';
import { type AgentSettings, createServices } from './internal/services.js';

export interface RestateWorkerOptions {
  /** Ingress URL of the Restate server (`http://127.0.0.1:8080`). */
  readonly ingress: string;
  /** Admin URL; when set with `register`, the worker registers `advertise` (or itself) there. */
  readonly admin?: string;
  /** Runs this worker's children (simulated agents, a DSH provider). */
  readonly agents: AgentProvider;
  /**
   * Builds the provider for a run whose submission carries `agentSettings` (the same for every
   * child of that run, on any worker); without it every run uses `agents`.
   */
  readonly agentsFor?: (settings: AgentSettings) => AgentProvider;
  /** Root directory for `wf.readFile` in the runs this worker executes; without it readFile is refused. */
  readonly workspace?: string;
  /** Directories `wf.readFile` never reads (a run store, catalogs), as the engine's `readFile.deny`. */
  readonly readFileDeny?: readonly string[];
  /** The QuickJS sandbox runs execute in (one per worker, shared by its runs). */
  readonly sandbox: SandboxLike;
  /** The run store mirror (events, journal copy, artifacts) the CLI and report read. */
  readonly recorder?: RunRecorder;
  readonly limits?: Partial<EngineLimits>;
  /**
   * Resolves `wf.workflow(name)` for runs this worker executes; the nested run (its own WfRun
   * invocation) carries the resolved source, so the worker that runs it needs no catalog.
   * Without it nested workflows are refused, as with the embedded engine.
   */
  readonly resolveWorkflow?: (name: string) => Promise<ResolvedWorkflow | undefined>;
  /** Children running at once across every worker of the deployment. Default 16. */
  readonly deploymentConcurrency?: number;
  /**
   * WfSemaphore keys the cap is split over (1 to 64, at most `deploymentConcurrency`). Default 1:
   * one key, an exact work-conserving cap, and at most one acquire or release at a time on the
   * server, which caps the throughput of instant children (bench/RESULTS.md). With N keys acquires and releases run N at a time and the cap still holds (the keys' capacities add up to it), but a child
   * waits for a slot in its own key even while another key has one free (a run's children spread
   * round-robin). Every worker of a deployment must use the same cap and the same shards.
   */
  readonly semaphoreShards?: number;
  /** Port to listen on (127.0.0.1); default a free one. */
  readonly port?: number;
  readonly host?: string;
  /** Register with the admin API after listening. Default true when `admin` is set. */
  readonly register?: boolean;
  /** The address the server should call (a load balancer in front of N workers). */
  readonly advertise?: string;
  /**
   * Restate request identity public keys (`publickeyv1_...`): when set, the worker accepts only
   * requests signed by the server. Without them anyone who can reach the worker can call it.
   */
  readonly identityKeys?: readonly string[];
  /** Longest a run or a child may go without progress Restate sees. Default 6 h. */
  readonly inactivityTimeoutMs?: number;
  /**
   * An answer, journal entry or run result whose JSON is above this many bytes is stored in the
   * `WfBlob` object (chunked, keyed by its SHA-256) and travels by reference. Default 1 MiB;
   * Restate's own message limit is 32 MiB. Readers refuse references above `limits.maxJournalBytes`.
   */
  readonly answerByReferenceBytes?: number;
}

export interface RestateWorker {
  readonly url: string;
  readonly port: number;
  /** What the worker found worth saying at registration (an unreachable older deployment). */
  readonly warnings: readonly string[];
  close(): Promise<void>;
}

/** Default `answerByReferenceBytes`. */
export const DEFAULT_ANSWER_BY_REFERENCE_BYTES = 1024 * 1024;
/** The largest answer a reader fetches: the engine's default journal bound (maxJournalBytes). */
export const DEFAULT_MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export async function startRestateWorker(options: RestateWorkerOptions): Promise<RestateWorker> {
  const ingress = checkUrl('ingress', options.ingress);
  const admin = options.admin === undefined ? undefined : checkUrl('admin', options.admin);
  const capacity = options.deploymentConcurrency ?? 16;
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `deploymentConcurrency must be a positive integer, got ${String(capacity)}`,
    );
  }
  const shards = options.semaphoreShards ?? 1;
  if (!Number.isInteger(shards) || shards < 1 || shards > 64 || shards > capacity) {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `semaphoreShards must be an integer from 1 to 64 and at most deploymentConcurrency (${capacity}), got ${String(shards)}`,
    );
  }
  const threshold = options.answerByReferenceBytes ?? DEFAULT_ANSWER_BY_REFERENCE_BYTES;
  if (!Number.isInteger(threshold) || threshold < 1) {
    throw new RestateBackendError(
      'WF_RESTATE_INVALID_OPTIONS',
      `answerByReferenceBytes must be a positive integer, got ${String(threshold)}`,
    );
  }
  // A wrong URL, a server that is down or not Restate: a named error now, not a silent wait.
  await probeIngress(ingress);
  const registering = admin !== undefined && options.register !== false;
  if (registering) await probeAdmin(admin);
  const services = createServices({
    ingress,
    agents: options.agents,
    ...(options.agentsFor ? { agentsFor: options.agentsFor } : {}),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(options.readFileDeny ? { readFileDeny: options.readFileDeny } : {}),
    sandbox: options.sandbox,
    ...(options.recorder ? { recorder: options.recorder } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.resolveWorkflow ? { resolveWorkflow: options.resolveWorkflow } : {}),
    deploymentConcurrency: capacity,
    semaphoreShards: shards,
    inactivityTimeoutMs: options.inactivityTimeoutMs ?? 6 * 3_600_000,
    largeAnswers: {
      thresholdBytes: threshold,
      maxBytes: options.limits?.maxJournalBytes ?? DEFAULT_MAX_ANSWER_BYTES,
    },
  });
  const handler = restate.createEndpointHandler({
    services: [...services],
    bidirectional: false,
    ...(options.identityKeys ? { identityKeys: [...options.identityKeys] } : {}),
  });
  const server: Server = createServer(handler);
  // A child may take minutes: the request stays open that long.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host}:${port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const warnings: string[] = [];
  if (registering) {
    try {
      const uri = options.advertise ?? url;
      warnings.push(...(await checkOneAddress(admin, uri, options.advertise === undefined)));
      await registerDeployment(admin, uri);
    } catch (e) {
      // A worker that cannot register serves nobody: it stops listening and says why.
      await close();
      throw e;
    }
  }
  return { url, port, warnings, close };
}

/**
 * Restate pins a run to the deployment (address) it started on: a run whose worker registered its
 * own address waits for that address after the worker dies, whatever other workers serve. So a
 * worker registering its own address is refused while another live deployment serves the @wf
 * services (put the workers behind one address and register that); a dead one is only reported.
 */
async function checkOneAddress(admin: string, uri: string, ownAddress: boolean): Promise<string[]> {
  const others = (await deploymentsServingRuns(admin)).filter((d) => d.uri !== uri);
  const warnings: string[] = [];
  for (const other of others) {
    if (await answers(other.uri)) {
      if (!ownAddress) continue;
      throw new RestateBackendError(
        'WF_RESTATE_INVALID_OPTIONS',
        `another worker already serves the @wf services at ${other.uri} (deployment ${other.id}); registering ${uri} as a second deployment gives no failover: Restate pins each run to the address it started on, so a run whose worker dies waits for that address. Put the workers behind one address (a load balancer, see the deploy/ configuration) and register it with advertise, or stop the other worker`,
      );
    }
    warnings.push(
      `the deployment at ${other.uri} (${other.id}) does not answer: runs that started there wait until a worker listens at that address again`,
    );
  }
  return warnings;
}

/**
 * The deployments that serve the @wf services, and whether something answers at each: a run
 * pinned to one where nothing answers waits until a worker listens there again.
 */
export async function deploymentHealth(
  admin: string,
): Promise<{ id: string; uri: string; answers: boolean }[]> {
  const list = await deploymentsServingRuns(checkUrl('admin', admin));
  return Promise.all(list.map(async (d) => ({ ...d, answers: await answers(d.uri) })));
}

async function deploymentsServingRuns(admin: string): Promise<{ id: string; uri: string }[]> {
  const answer = await callPatiently(
    'listing deployments',
    () => httpJson('GET', `${admin}/deployments`),
    undefined,
    PROBE_PATIENCE_MS,
  );
  const list = parseAnswer<{ deployments?: unknown }>('listing deployments', answer).deployments;
  const out: { id: string; uri: string }[] = [];
  for (const d of Array.isArray(list) ? list : []) {
    const { id, uri, services } = d as { id?: unknown; uri?: unknown; services?: unknown };
    const names = Array.isArray(services)
      ? services.map((x) => (x as { name?: unknown })?.name)
      : [];
    if (typeof id === 'string' && typeof uri === 'string' && names.includes(RUN_SERVICE))
      out.push({ id, uri: uri.replace(/\/+$/, '') });
  }
  return out;
}

async function answers(uri: string): Promise<boolean> {
  try {
    await httpJson('GET', `${uri}/health`, undefined, {}, undefined, 1_000);
    return true;
  } catch {
    return false;
  }
}

/** Registers (or re-registers) a deployment address with the server's admin API. */
export async function registerDeployment(admin: string, uri: string): Promise<{ id: string }> {
  const base = checkUrl('admin', admin);
  const answer = await callPatiently(
    `registering ${uri}`,
    () => httpJson('POST', `${base}/deployments`, { uri, use_http_11: true, force: true }),
    undefined,
    // A deployment whose workers are still starting answers 5xx: worth a few more seconds.
    10_000,
  );
  return parseAnswer<{ id: string }>(`registering ${uri}`, answer);
}
