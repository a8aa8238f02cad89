// `wf worker --restate <ingress>` and `wf run <name> --engine restate --restate <ingress>`
// (@wf/restate): a worker serves @wf runs from a Restate server with simulated agents and records
// the runs it executes in this directory's run store (the mirror `wf runs/show/report` read);
// `run` submits a run to the server and follows it to its end. @wf/restate is loaded only here.
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { terminalText } from '@wf/bridge/terminal-text';
import type { AgentProvider, RunRecorder } from '@wf/engine';
import { type CliContext, printJson, printLine, printNote } from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { adminNextTo, restateCall } from './restate-common.js';
import { DEFAULT_DELAY_MS, DEFAULT_SEED, simulatedAgents } from './run-verb.js';
import { workflowResolver } from './shipped.js';
import {
  openProjectCatalog,
  openProjectStore,
  protectedRoots,
  type RunStore,
} from './workspace.js';

export interface WorkerOptions {
  readonly restate?: string;
  readonly admin?: string;
  readonly port?: string;
  readonly advertise?: string;
  readonly concurrency?: string;
  readonly semaphoreShards?: string;
  readonly delayMs?: string;
  readonly workspace?: string;
  readonly verbose?: boolean;
}

function need(url: string | undefined, flag: string): string {
  if (!url)
    throw new CliError(
      'WF_CLI_USAGE',
      `${flag} <url> is required: the Restate ingress URL (e.g. http://127.0.0.1:8080)`,
    );
  return url;
}

function int(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new CliError(
      'WF_CLI_USAGE',
      `${flag} must be a non-negative integer, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** Settings a submitted run carries to its children (untrusted on the way back: checked). */
function settingsOf(settings: { readonly [key: string]: unknown }, fallbackDelay: number) {
  const n = (v: unknown, max: number) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max ? v : undefined;
  return {
    seed: n(settings.seed, 2 ** 32) ?? DEFAULT_SEED,
    delayMs: n(settings.delayMs, 3_600_000) ?? fallbackDelay,
  };
}

/** A line per child (`--verbose`): which worker ran what, and when it ended. */
function loggedChildren(ctx: CliContext, inner: AgentProvider): AgentProvider {
  return {
    ...inner,
    async start(request, signal) {
      const key = `${request.runId}/${request.taskId}`;
      const t0 = Date.now();
      printNote(ctx, `wf worker: child ${key} started`);
      const handle = await inner.start(request, signal);
      void handle.result.then((r) =>
        printNote(ctx, `wf worker: child ${key} ${r.status} in ${Date.now() - t0} ms`),
      );
      return handle;
    },
  };
}

/** The run store, with one line per run that ends on this worker (`--verbose`: and starts). */
function loggedRuns(ctx: CliContext, store: RunStore, verbose: boolean): RunRecorder {
  const started = new Map<string, number>();
  return {
    ...store,
    begin: async (run) => {
      started.set(run.runId, Date.now());
      await store.begin(run);
      if (verbose) printNote(ctx, `wf worker: run ${run.runId} started here`);
    },
    beginOrContinue: async (run) => {
      started.set(run.runId, Date.now());
      const out = await store.beginOrContinue(run);
      if (verbose)
        printNote(
          ctx,
          `wf worker: run ${run.runId} ${out.continued ? 'continued' : 'started'} here`,
        );
      return out;
    },
    finish: async (runId, record) => {
      await store.finish(runId, record);
      const t0 = started.get(runId);
      started.delete(runId);
      const took = t0 === undefined ? '' : `, ${((Date.now() - t0) / 1000).toFixed(1)} s here`;
      printNote(
        ctx,
        `wf worker: run ${runId} ${terminalText(String(record.status))}${record.error ? ` (${terminalText(String(record.error.code))})` : ''}: ${record.cost.agentsStarted} agents${took}`,
      );
    },
  };
}

function workspaceOf(ctx: CliContext, dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  const root = resolve(ctx.cwd, dir);
  let ok = false;
  try {
    ok = statSync(root).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new CliError('WF_CLI_USAGE', `--workspace ${dir}: not a directory (${root})`);
  return root;
}

export async function workerCommand(ctx: CliContext, options: WorkerOptions): Promise<ExitCode> {
  const ingress = need(options.restate, '--restate');
  const workspace = workspaceOf(ctx, options.workspace);
  const delayMs = int(options.delayMs, '--delay-ms', DEFAULT_DELAY_MS);
  // The SDK reads its log level once, when it loads: verbose asks for it before the import.
  if (options.verbose && ctx.env.RESTATE_LOGGING === undefined)
    process.env.RESTATE_LOGGING = 'INFO';
  // ES modules outside the CLI's CommonJS bundle (src/startup/bundle.mjs): import(), never require()
  const [{ startRestateWorker }, { createSimulatedAgents }, { createSandbox }] = await Promise.all([
    import('@wf/restate'),
    import('@wf/engine'),
    import('@wf/sandbox'),
  ]);
  const store = await openProjectStore(ctx);
  // wf.workflow resolves as with `wf run`: shipped workflows, then this project's catalog
  const catalog = await openProjectCatalog(ctx);
  const sandbox = await createSandbox();
  const children = (settings: { readonly [key: string]: unknown }) => {
    const s = settingsOf(settings, delayMs);
    const agents = simulatedAgents(createSimulatedAgents, s.seed, s.delayMs);
    return options.verbose ? loggedChildren(ctx, agents) : agents;
  };
  const worker = await restateCall(() =>
    startRestateWorker({
      ingress,
      admin: options.admin ?? adminNextTo(ingress),
      agents: children({}),
      agentsFor: children,
      sandbox,
      recorder: loggedRuns(ctx, store, options.verbose === true),
      resolveWorkflow: workflowResolver(catalog).nested,
      deploymentConcurrency: int(options.concurrency, '--concurrency', 16),
      semaphoreShards: int(options.semaphoreShards, '--semaphore-shards', 1),
      ...(options.port ? { port: int(options.port, '--port', 0) } : {}),
      ...(options.advertise ? { advertise: options.advertise } : {}),
      ...(workspace ? { workspace, readFileDeny: protectedRoots(ctx) } : {}),
    }),
  ).catch(async (e: unknown) => {
    await sandbox.close();
    await store.close();
    throw e;
  });
  for (const warning of worker.warnings) printNote(ctx, `wf worker: warning: ${warning}`);
  if (ctx.json) printJson(ctx, { ok: true, worker: worker.url, ingress });
  else
    printNote(
      ctx,
      `wf worker: serving ${ingress} at ${worker.url} with simulated agents${workspace ? `, readFile below ${workspace}` : ''} (Ctrl-C to stop)`,
    );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await worker.close();
  await sandbox.close();
  await store.close();
  return EXIT.ok;
}

export interface RestateRun {
  readonly name: string;
  readonly workflow: { manifest: unknown; source: string };
  readonly args: unknown;
  readonly trust: 'trusted-package' | 'capability-generated';
  readonly seed: number;
  readonly delayMs: number;
  readonly limits: {
    readonly maxAgents?: number;
    readonly tokenBudget?: number;
    readonly wallMs?: number;
    readonly childWallMs?: number;
  };
}

export async function runOnRestate(
  ctx: CliContext,
  ingressFlag: string | undefined,
  run: RestateRun,
  adminFlag?: string,
): Promise<ExitCode> {
  const ingress = need(ingressFlag, '--restate');
  const { awaitRun, controlRun, probeIngress, submitRun } = await import('@wf/restate');
  const runId = `run-${randomUUID()}`;
  await restateCall(async () => {
    // A wrong URL, a server down or not Restate, no worker: said now, not after a silent wait.
    await probeIngress(ingress, { needWorker: true });
    await submitRun(ingress, {
      runId,
      workflow: { ...run.workflow, name: run.name },
      args: run.args,
      trust: run.trust,
      seed: run.seed,
      agentSettings: { seed: run.seed, delayMs: run.delayMs },
      ...(Object.keys(run.limits).length > 0 ? { limits: run.limits } : {}),
    });
  });
  // On stderr also with --json: the run id is known (and usable) before the run ends.
  printNote(ctx, `wf run ${run.name}: submitted to Restate as ${runId}; waiting for it`);
  // Ctrl-C stops the run, as on the embedded engine (its children stop where they run); a
  // second one leaves at once, the run going on.
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
    printNote(ctx, `wf run: stopping ${runId} (Ctrl-C again to leave it running)`);
    void controlRun(ingress, runId, { run: 'stopping', reason: 'interrupted (Ctrl-C)' }).catch(
      () => {},
    );
  };
  process.on('SIGINT', onSigint);
  const admin = adminFlag ?? adminNextTo(ingress);
  const slow = setTimeout(() => void notStarted(ctx, admin, runId), NOT_STARTED_MS);
  const done = await restateCall(() => awaitRun(ingress, runId)).finally(() => {
    clearTimeout(slow);
    process.off('SIGINT', onSigint);
  });
  // The submitter's own history: the finished run, whole, from its durable record.
  await recordHere(ctx, ingress, runId);
  if (ctx.json) {
    printJson(ctx, { ok: done.status === 'completed', runId, engine: 'restate', ...done });
  } else {
    // The status and error are one line each (terminalText, `line`); the result is printed
    // through printLine, which sanitizes it too (invariant 13).
    printNote(
      ctx,
      `${runId} ${terminalText(String(done.status))}${done.error ? `: ${terminalText(String(done.error.code))}: ${terminalText(String(done.error.message))}` : ''}`,
    );
    if (done.result !== undefined) printLine(ctx, JSON.stringify(done.result, null, 2));
  }
  if (interrupted && done.status === 'stopped') return EXIT.interrupted;
  return done.status === 'completed' ? EXIT.ok : EXIT.failed;
}

const CONTROL = {
  pause: { run: 'paused', did: 'paused: no child starts until `wf resume --restate`' },
  resume: { run: 'running', did: 'resumed' },
  stop: { run: 'stopping', did: 'stopping: its children are stopped where they run' },
} as const;

/** `wf pause|resume|stop <runId> --restate URL`: the run's control in Restate. */
export async function controlCommand(
  ctx: CliContext,
  runId: string,
  what: keyof typeof CONTROL,
  options: { readonly restate?: string; readonly reason?: string },
): Promise<ExitCode> {
  const ingress = need(options.restate, '--restate');
  const { controlRun, fetchRun, probeIngress } = await import('@wf/restate');
  return restateCall(async () => {
    await probeIngress(ingress);
    const run = await fetchRun(ingress, runId, { events: false });
    if (!run)
      throw new CliError('WF_CLI_RUN_NOT_FOUND', `no run ${JSON.stringify(runId)} on ${ingress}`, {
        hint: '`wf runs --restate <ingress URL>` lists the runs the server holds',
      });
    if (run.finish) {
      const note = `run ${runId} has ended (${run.finish.status}): nothing to ${what}`;
      if (ctx.json) printJson(ctx, { ok: true, runId, status: run.finish.status, changed: false });
      else printLine(ctx, note);
      return EXIT.ok;
    }
    const control = await controlRun(ingress, runId, {
      run: CONTROL[what].run,
      ...(options.reason === undefined ? {} : { reason: options.reason }),
    });
    if (ctx.json) printJson(ctx, { ok: true, runId, control: control.run, changed: true });
    else
      printLine(
        ctx,
        `run ${runId} ${control.run === 'stopping' && what !== 'stop' ? 'is stopping (a stop is final)' : CONTROL[what].did}`,
      );
    return EXIT.ok;
  });
}

/** How long a submitted run may go before `wf run` looks whether it waits for a worker. */
const NOT_STARTED_MS = 5_000;

/**
 * A run whose worker does not answer waits (Restate keeps retrying it): when the deployment it is
 * pinned to does not answer (its worker died, nothing behind its address) or Restate keeps
 * retrying it, `wf run` says so instead of waiting in silence.
 */
async function notStarted(ctx: CliContext, admin: string, runId: string): Promise<void> {
  try {
    const { runProgress } = await import('@wf/restate');
    const progress = await runProgress(admin, runId);
    if (!progress || progress.status === 'completed') return;
    const where = progress.deployment;
    const why =
      where && !where.answers
        ? `nothing answers at ${where.uri}, the address its worker registered (it runs once a worker listens there again)`
        : progress.retries > 0
          ? `Restate retried it ${progress.retries} times${progress.lastFailure ? ` (${terminalText(progress.lastFailure)})` : ''}`
          : undefined;
    if (why) printNote(ctx, `wf run: ${runId} is waiting: ${why}; still waiting (Ctrl-C stops it)`);
  } catch (e) {
    // only a note: the wait goes on
    if (ctx.env.WF_DEBUG) printNote(ctx, `wf run: progress of ${runId}: ${(e as Error).message}`);
  }
}

async function recordHere(ctx: CliContext, ingress: string, runId: string): Promise<void> {
  const { recordRemoteRun } = await import('./restate-runs.js');
  let store: RunStore | undefined;
  try {
    store = await openProjectStore(ctx);
    await recordRemoteRun(store, ingress, runId);
  } catch (e) {
    printNote(ctx, `wf run: ${runId} is not recorded in this directory: ${(e as Error).message}`);
  } finally {
    await store?.close();
  }
}
