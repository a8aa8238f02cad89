// `wf run <name|file>` and `wf resume <runId>`: resolve, preflight (args against the input schema
// before anything is recorded), run on the simulated agents with live progress, print the result
// and the run id. Ctrl-C stops the run through the engine (children stopped, run recorded
// `stopped`) and exits 130; a second Ctrl-C exits at once.
import { join } from 'node:path';
import { validateArgs, type WorkflowManifest } from '@wf/bridge';
import type { Catalog, TrustedLocalModule } from '@wf/catalog-fs';
import {
  createEngine,
  createSimulatedAgents,
  type Engine,
  type RunDone,
  type RunHandle,
} from '@wf/engine';
import { clean, cleanLines } from '../progress/frame.js';
import { createProgressView, type ProgressView } from '../progress/view.js';
import { duration, grouped } from '../report/render.js';
import { parseInteger, readArgs } from './args.js';
import { type CliContext, printJson, printLine, printNote } from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { type ResolvedEntry, resolveTarget } from './resolve.js';
import { guestErrorPosition, sourceExcerpt } from './source-excerpt.js';
import { resolveRunTarget, storeError } from './store-error.js';
import {
  openProjectCatalog,
  openProjectStore,
  protectedRoots,
  type RunStore,
  workflowResolver,
} from './workspace.js';

export interface RunOptions {
  readonly args?: string;
  readonly argsFile?: string;
  readonly agents?: string;
  readonly seed?: string;
  readonly delayMs?: string;
  readonly trustLocal?: boolean;
  readonly progress?: boolean;
  readonly json?: boolean;
}

export const NO_MODEL_NOTE = 'simulated agents: no model is called, no tokens are spent';
const DEFAULT_DELAY_MS = 400;

export async function runCommand(
  ctx: CliContext,
  target: string,
  options: RunOptions,
): Promise<ExitCode> {
  const agentsKind = options.agents ?? 'simulated';
  if (agentsKind !== 'simulated') {
    throw new CliError(
      'WF_CLI_AGENTS_UNSUPPORTED',
      `--agents ${agentsKind} is not available from the command line; the wf CLI runs simulated agents only`,
      {
        hint: 'drop --agents (simulated is the default); real model agents run inside DSH with the @wf plugin',
      },
    );
  }
  const seed = options.seed === undefined ? undefined : parseInteger(options.seed, '--seed');
  const delayMs =
    options.delayMs === undefined ? DEFAULT_DELAY_MS : parseInteger(options.delayMs, '--delay-ms');

  const catalog = await openProjectCatalog(ctx);
  const entry = await resolveTarget(target, ctx.cwd, catalog);
  const parsedArgs = await readArgs(options, ctx.cwd);
  let args = parsedArgs.value;
  let argsNote: string | undefined;
  if (parsedArgs.source.kind === 'none') {
    const example =
      entry.execution === 'trusted-local' ? undefined : entry.capsule.inputs?.examples?.[0];
    args = example ?? {};
    if (example !== undefined)
      argsNote = `no --args given: using the first example from ${entry.name}'s capsule`;
  }

  let workflow:
    | { manifest: unknown; source: string }
    | { manifest: unknown; run: (wf: never, args: unknown) => unknown };
  if (entry.execution === 'trusted-local') {
    if (!options.trustLocal) {
      throw new CliError(
        'WF_CLI_TRUST_REQUIRED',
        `${entry.name} is a trusted-local module (${entry.location}): it runs with full Node authority, outside the sandbox`,
        { hint: `read it first; then confirm once with \`wf run ${entry.name} --trust-local\`` },
      );
    }
    const imported = await importTrustedLocal(catalog, entry);
    workflow = {
      manifest: imported.manifest,
      run: imported.run as (wf: never, args: unknown) => unknown,
    };
  } else {
    workflow = { manifest: entry.capsule.manifest, source: entry.capsule.source };
  }
  checkArgs(workflow.manifest, args, entry.name);

  const store = await openProjectStore(ctx);
  const engine = simulatedEngine(ctx, store, catalog, delayMs, seed);

  if (!ctx.json) {
    // A file named on the command line is inline source to the resolver; users know it as a file.
    const origin = entry.source === 'inline' ? 'file' : entry.source;
    printNote(ctx, `wf run ${entry.name} (${origin}, ${entry.execution}) with ${NO_MODEL_NOTE}`);
    if (entry.defaultManifest)
      printNote(
        ctx,
        `${entry.name}: no manifest in a bare .js file; using the default one (read-only, 16 agents, 4 at once)`,
      );
    if (argsNote) printNote(ctx, argsNote);
  }
  const handle = await engine.start({
    workflow: workflow as never,
    args,
    trust: entry.execution,
    ...(seed === undefined ? {} : { seed }),
  });
  return finishRun(
    ctx,
    engine,
    handle,
    store,
    options.progress !== false,
    entry.name,
    undefined,
    'source' in workflow ? workflow.source : undefined,
  );
}

/**
 * The engine `wf run` and `wf resume` use: simulated agents with varied but deterministic child
 * durations (so the live view shows real overlap), the project's run store, and nested
 * `wf.workflow` names through the shared resolver.
 */
function simulatedEngine(
  ctx: CliContext,
  store: RunStore,
  catalog: Catalog | undefined,
  delayMs: number,
  seed: number | undefined,
): Engine {
  const agents = createSimulatedAgents({
    ...(seed === undefined ? {} : { seed }),
    respond: (request) => ({ delayMs: jitter(delayMs, `${request.taskId}|${seed ?? 0}`) }),
  });
  return createEngine({
    agents,
    recorder: store,
    workspace: ctx.cwd,
    // The run store and both catalogs stay out of wf.readFile's reach (WF_ENGINE_READ_PROTECTED).
    readFile: { deny: protectedRoots(ctx) },
    resolveWorkflow: workflowResolver(catalog).nested,
  });
}

export interface ResumeVerbOptions {
  readonly delayMs?: string;
  readonly progress?: boolean;
}

export async function resumeCommand(
  ctx: CliContext,
  target: string,
  options: ResumeVerbOptions,
): Promise<ExitCode> {
  const delayMs =
    options.delayMs === undefined ? DEFAULT_DELAY_MS : parseInteger(options.delayMs, '--delay-ms');
  const store = await openProjectStore(ctx);
  const runId = await resolveRunTarget(store, target);
  const shown = await store.show(runId);
  if (!shown.ok) throw storeError(shown.error, runId);
  const loaded = await store.load(runId);
  if (!loaded) {
    throw new CliError(
      'WF_CLI_NOT_RESUMABLE',
      `run ${runId} has no start record or journal to resume from`,
      {
        hint: 'only runs recorded by this version of wf can be resumed',
      },
    );
  }
  if (loaded.start.trust === 'trusted-local' || loaded.start.source === undefined) {
    throw new CliError(
      'WF_CLI_NOT_RESUMABLE',
      `run ${runId} ran a trusted-local module; only source-based runs can be replayed`,
    );
  }
  const status = shown.run.snapshot?.status;
  if (status === 'running' || status === 'paused') {
    throw new CliError(
      'WF_CLI_RUN_ACTIVE',
      `run ${runId} is still ${status}; resume a run once it has ended or was interrupted`,
    );
  }
  const catalog = await openProjectCatalog(ctx);
  const engine = simulatedEngine(ctx, store, catalog, delayMs, loaded.start.seed);
  if (!ctx.json) {
    printNote(
      ctx,
      `wf resume ${runId}: replaying its journal, then continuing live with ${NO_MODEL_NOTE}`,
    );
  }
  const handle = await engine.resume(runId);
  return finishRun(
    ctx,
    engine,
    handle,
    store,
    options.progress !== false,
    loaded.start.workflow,
    runId,
  );
}

async function finishRun(
  ctx: CliContext,
  engine: Engine,
  handle: RunHandle,
  store: RunStore,
  progress: boolean,
  workflowName: string,
  resumedFrom?: string,
  /** The workflow's source, to show an excerpt where a guest error was raised. */
  source?: string,
): Promise<ExitCode> {
  let interrupted = false;
  let view: ProgressView | undefined;
  // Through the live view when there is one, so a TTY frame is not torn by the message.
  const say = (line: string) => (view ? view.note(line) : printNote(ctx, line));
  const onSigint = () => {
    if (interrupted) {
      // A second Ctrl-C: the user does not want to wait for children to stop.
      say('wf: interrupted again, exiting now');
      process.exit(EXIT.interrupted);
    }
    interrupted = true;
    say(
      `wf: Ctrl-C: stopping run ${handle.runId} (children are being stopped; Ctrl-C again to exit now)`,
    );
    handle.stop('interrupted by Ctrl-C (SIGINT)');
  };
  process.on('SIGINT', onSigint);
  view =
    ctx.json || !progress
      ? undefined
      : createProgressView({
          out: ctx.stderr,
          unicode: unicodeTerminal(ctx.env),
          note: 'simulated agents',
        });
  const pump = (async () => {
    for await (const event of handle.events) view?.event(event);
  })();
  let done: RunDone;
  try {
    done = await handle.done;
    await pump;
  } finally {
    view?.finish();
    process.off('SIGINT', onSigint);
    await engine.close();
    await store.close();
  }
  const code: ExitCode =
    done.status === 'completed'
      ? EXIT.ok
      : interrupted && done.status === 'stopped'
        ? EXIT.interrupted
        : EXIT.failed;
  const runDir = join(store.root, handle.runId);
  if (ctx.json) {
    printJson(ctx, {
      ok: done.status === 'completed',
      runId: handle.runId,
      workflow: workflowName,
      status: done.status,
      ...(done.result === undefined ? {} : { result: done.result }),
      ...(done.error ? { error: done.error } : {}),
      cost: done.cost,
      agents: 'simulated',
      modelCalled: false,
      ...(resumedFrom ? { resumedFromRunId: resumedFrom } : {}),
      runDir,
      exitCode: code,
    });
    return code;
  }
  if (done.result !== undefined) {
    printLine(ctx, 'Result:');
    // The result is untrusted text: no escape sequence reaches the terminal.
    printLine(ctx, cleanLines(resultText(done.result)));
    printLine(ctx);
  }
  if (done.error) {
    printNote(ctx, `error: ${clean(done.error.code)}: ${cleanLines(done.error.message)}`);
    const at = source === undefined ? undefined : guestErrorPosition(done.error.message);
    const excerpt = at && source !== undefined ? sourceExcerpt(source, at) : undefined;
    if (excerpt) printNote(ctx, excerpt);
  }
  const c = done.cost;
  printLine(
    ctx,
    `run ${handle.runId} ${done.status} in ${duration(c.wallClockDurationMs)} · ${c.agentsStarted} agents · ${grouped(c.tokenUsage.totalTokens)} simulated tokens · peak ${c.peakConcurrency} at once`,
  );
  printLine(
    ctx,
    `  wf show ${handle.runId}   wf report ${handle.runId}${done.status === 'stopped' ? `   wf resume ${handle.runId}` : ''}`,
  );
  return code;
}

function checkArgs(manifest: unknown, args: unknown, name: string): void {
  if (!manifest || typeof manifest !== 'object') return;
  // The engine re-validates; checking here keeps an obviously bad invocation out of the run store.
  const checked = validateArgs(manifest as WorkflowManifest, args);
  if (checked.ok) return;
  const list = checked.issues.slice(0, 8).map((i) => `${i.path || 'args'}: ${i.message}`);
  throw new CliError(
    'WF_CLI_ARGS_INVALID',
    `args for ${name} do not match its input schema: ${list.join('; ')}`,
    {
      hint: `\`wf list --json\` shows ${name}'s input schema; fix the listed fields in --args`,
      details: checked.issues,
    },
  );
}

async function importTrustedLocal(
  catalog: Awaited<ReturnType<typeof openProjectCatalog>>,
  entry: ResolvedEntry,
): Promise<TrustedLocalModule> {
  if (!catalog || entry.execution !== 'trusted-local')
    throw new CliError('WF_CLI_INTERNAL', 'trusted-local entry without a catalog');
  // Invariant 10: imported only now, after the explicit --trust-local confirmation.
  const imported = await catalog.importTrustedLocal(entry.catalogEntry, { confirmed: true });
  if (!imported.ok) {
    throw new CliError(
      'WF_CLI_WORKFLOW_INVALID',
      `cannot import ${entry.name}: ${imported.error.message}`,
    );
  }
  return imported.module;
}

function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    for (const key of ['synthesis', 'summary', 'text']) {
      if (typeof r[key] === 'string') return `${r[key]}\n(full result: wf show --json)`;
    }
  }
  return JSON.stringify(result, null, 2);
}

export function jitter(base: number, key: string): number {
  if (base <= 0) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  const f = (h % 1000) / 1000;
  return Math.round(base * (0.5 + 1.5 * f));
}

export function unicodeTerminal(env: { readonly [key: string]: string | undefined }): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}
