// `wf worker --restate <ingress>` and `wf run <name> --engine restate --restate <ingress>`
// (@wf/restate): a worker serves @wf runs from a Restate server with simulated agents and records
// the runs it executes in this directory's run store (the mirror `wf runs/show/report` read);
// `run` submits a run to the server and follows it to its end. @wf/restate is loaded only here.
import { randomUUID } from 'node:crypto';
import { terminalText } from '@wf/bridge/terminal-text';
import { type CliContext, printJson, printLine, printNote } from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { jitter } from './run-verb.js';
import { workflowResolver } from './shipped.js';
import { openProjectCatalog, openProjectStore } from './workspace.js';

export interface WorkerOptions {
  readonly restate?: string;
  readonly admin?: string;
  readonly port?: string;
  readonly advertise?: string;
  readonly concurrency?: string;
  readonly semaphoreShards?: string;
  readonly delayMs?: string;
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

/** The admin URL next to an ingress URL: same host, Restate's default admin port 9070. */
function adminNextTo(ingress: string): string {
  const u = new URL(ingress);
  u.port = '9070';
  return u.toString().replace(/\/+$/, '');
}

export async function workerCommand(ctx: CliContext, options: WorkerOptions): Promise<ExitCode> {
  const ingress = need(options.restate, '--restate');
  // ES modules outside the CLI's CommonJS bundle (src/startup/bundle.mjs): import(), never require()
  const [{ startRestateWorker }, { createSimulatedAgents }, { createSandbox }] = await Promise.all([
    import('@wf/restate'),
    import('@wf/engine'),
    import('@wf/sandbox'),
  ]);
  const delayMs = int(options.delayMs, '--delay-ms', 400);
  const store = await openProjectStore(ctx);
  // wf.workflow resolves as with `wf run`: shipped workflows, then this project's catalog
  const catalog = await openProjectCatalog(ctx);
  const sandbox = await createSandbox();
  const worker = await startRestateWorker({
    ingress,
    admin: options.admin ?? adminNextTo(ingress),
    agents: createSimulatedAgents({ respond: (r) => ({ delayMs: jitter(delayMs, r.taskId) }) }),
    sandbox,
    recorder: store,
    resolveWorkflow: workflowResolver(catalog).nested,
    deploymentConcurrency: int(options.concurrency, '--concurrency', 16),
    semaphoreShards: int(options.semaphoreShards, '--semaphore-shards', 1),
    ...(options.port ? { port: int(options.port, '--port', 0) } : {}),
    ...(options.advertise ? { advertise: options.advertise } : {}),
  }).catch(async (e: unknown) => {
    await sandbox.close();
    await store.close();
    throw e;
  });
  if (ctx.json) printJson(ctx, { ok: true, worker: worker.url, ingress });
  else
    printNote(
      ctx,
      `wf worker: serving ${ingress} at ${worker.url} with simulated agents (Ctrl-C to stop)`,
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

export async function runOnRestate(
  ctx: CliContext,
  ingressFlag: string | undefined,
  run: {
    readonly name: string;
    readonly workflow: { manifest: unknown; source: string };
    readonly args: unknown;
    readonly trust: 'trusted-package' | 'capability-generated';
    readonly seed?: number;
  },
): Promise<ExitCode> {
  const ingress = need(ingressFlag, '--restate');
  const { awaitRun, submitRun } = await import('@wf/restate');
  const runId = `run-${randomUUID()}`;
  await submitRun(ingress, {
    runId,
    workflow: { ...run.workflow, name: run.name },
    args: run.args,
    trust: run.trust,
    ...(run.seed === undefined ? {} : { seed: run.seed }),
  });
  if (!ctx.json)
    printNote(ctx, `wf run ${run.name}: submitted to Restate as ${runId}; waiting for it`);
  const done = await awaitRun(ingress, runId);
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
  return done.status === 'completed' ? EXIT.ok : EXIT.failed;
}
