// `wf run <name|file>` and `wf resume <runId>` (entered through run.ts, which boots the sandbox
// first): resolve, preflight (args against the input schema before anything is recorded), run on
// the simulated agents with live progress, print the result and the run id. Ctrl-C stops the run through the engine (children stopped, run recorded
// `stopped`) and exits 130; a second Ctrl-C exits at once.
import { join } from 'node:path';
import { isTerminalEventType, validateArgs, type WorkflowManifest } from '@wf/bridge';
import { terminalText } from '@wf/bridge/terminal-text';
import { type Catalog, CatalogFsError, type TrustedLocalModule } from '@wf/catalog-fs';
import type { Engine, RunDone, RunHandle, SandboxLike, SourceCheck } from '@wf/engine';
import { createProgressView, type ProgressView } from '../progress/view.js';
import { duration, grouped } from '@wf/report';
import { parseInteger, readArgs } from './args.js';
import {
  type CliContext,
  errorDocument,
  printError,
  printJson,
  printLine,
  printNote,
} from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { type ResolvedEntry, resolveTarget } from './resolve.js';
import { guestErrorPosition, sourceExcerpt } from './source-excerpt.js';
import { resolveRunTarget, storeError } from './store-error.js';
import { workflowResolver } from './shipped.js';
import {
  catalogProblem,
  openProjectCatalog,
  openProjectStore,
  protectedRoots,
  type RunStore,
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
  readonly tokenBudget?: string;
  readonly wallMs?: string;
  readonly childWallMs?: string;
  readonly maxAgents?: string;
  /** `restate` submits the run to a Restate server (`--restate <ingress>`) instead. */
  readonly engine?: string;
  readonly restate?: string;
  /** With --engine restate: the admin API, to say why a run waits (default: port 9070). */
  readonly admin?: string;
}

/**
 * The cost-guard flags (`--token-budget`, `--wall-ms`, `--child-wall-ms`) as engine per-run
 * limits. Simulated agents spend nothing, so the CLI sets none by default; the flags rehearse
 * the limits the DSH plugin applies by default (0 means none).
 */
export function guardLimits(options: {
  readonly tokenBudget?: string | undefined;
  readonly wallMs?: string | undefined;
  readonly childWallMs?: string | undefined;
}): { tokenBudget?: number; wallMs?: number; childWallMs?: number } {
  const out: { tokenBudget?: number; wallMs?: number; childWallMs?: number } = {};
  const set = (key: keyof typeof out, raw: string | undefined, flag: string) => {
    if (raw === undefined) return;
    const n = parseInteger(raw, flag);
    if (n > 0) out[key] = n;
  };
  set('tokenBudget', options.tokenBudget, '--token-budget');
  set('wallMs', options.wallMs, '--wall-ms');
  set('childWallMs', options.childWallMs, '--child-wall-ms');
  return out;
}

export const NO_MODEL_NOTE = 'simulated agents: no model is called, no tokens are spent';
export const DEFAULT_DELAY_MS = 400;
/**
 * The seed of a run without `--seed`, for the workflow's Math.random and the simulated answers
 * alike. It is recorded in the run's start record and `wf resume` reuses it, so a resumed run
 * gives the result of an uninterrupted one whatever the flags.
 */
export const DEFAULT_SEED = 1;

type EngineModule = typeof import('@wf/engine');

/**
 * @wf/engine is an ES module outside the CLI's CommonJS bundle (src/startup/bundle.mjs): it is loaded
 * with import(), never require(), and early, so it loads while the catalog and the target resolve.
 */
function loadEngine(): Promise<EngineModule> {
  const loading = import('@wf/engine');
  loading.catch(() => {}); // a refused target may return before awaiting it; its caller reports it
  return loading;
}

/** The sandbox run.ts started for this verb; `release` closes it (once) when the run is over. */
export interface VerbSandbox {
  readonly sandbox: SandboxLike;
  release(): Promise<void>;
}

export async function runCommand(
  ctx: CliContext,
  target: string,
  options: RunOptions,
  verbSandbox?: VerbSandbox,
): Promise<ExitCode> {
  const engineModule = loadEngine();
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
  const seed = options.seed === undefined ? DEFAULT_SEED : parseInteger(options.seed, '--seed');
  const delayMs =
    options.delayMs === undefined ? DEFAULT_DELAY_MS : parseInteger(options.delayMs, '--delay-ms');
  const limits = guardLimits(options);
  const maxAgents = maxAgentsOption(options);

  const catalog = await openProjectCatalog(ctx);
  const entry = await resolveTarget(target, ctx.cwd, catalog, catalogProblem(ctx));
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
  const checkSource =
    'source' in workflow ? await checkSourceFirst(workflow.source, entry, target) : undefined;
  if (options.engine !== undefined && options.engine !== 'embedded') {
    if (
      options.engine !== 'restate' ||
      !('source' in workflow) ||
      entry.execution === 'trusted-local'
    )
      throw new CliError(
        'WF_CLI_USAGE',
        `--engine ${options.engine}: use embedded (default) or restate; restate runs source-based workflows only`,
      );
    // A run means the same on both engines: the seed, the children's delay and every limit
    // travel in the run's start, so whichever worker executes it applies them.
    return (await import('./restate.js')).runOnRestate(
      ctx,
      options.restate,
      {
        name: entry.name,
        workflow,
        args,
        trust: entry.execution,
        seed,
        delayMs,
        limits: { ...limits, ...(maxAgents === undefined ? {} : { maxAgents }) },
      },
      options.admin,
    );
  }

  const store = await openProjectStore(ctx);
  const engine = simulatedEngine(
    await engineModule,
    ctx,
    store,
    catalog,
    delayMs,
    seed,
    maxAgents,
    verbSandbox,
    checkSource,
  );

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
    const asked = (workflow.manifest as { maxAgents?: unknown } | null)?.maxAgents;
    const cap = maxAgents ?? (await engineModule).DEFAULT_ENGINE_LIMITS.maxAgents;
    if (typeof asked === 'number' && asked > cap)
      printNote(
        ctx,
        `${entry.name}: its manifest allows ${asked} agents, this run stops at ${cap}${maxAgents === undefined ? ' (the default)' : ''}; --max-agents ${asked} allows them all`,
      );
  }
  const handle = await engine.start({
    workflow: workflow as never,
    args,
    trust: entry.execution,
    seed,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    // The workspace is real in the CLI, so environment requirements (git-repo) are checked;
    // simulated children have no tools, tiers or user, so those are DSH's to enforce.
    ...(entry.execution !== 'trusted-local' && entry.capsule.requires?.environment
      ? { requires: { environment: entry.capsule.requires.environment } }
      : {}),
  });
  return finishRun(
    ctx,
    engine,
    handle,
    store,
    options.progress !== false,
    entry.name,
    verbSandbox,
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
  { createEngine, createSimulatedAgents }: EngineModule,
  ctx: CliContext,
  store: RunStore,
  catalog: Catalog | undefined,
  delayMs: number,
  seed: number,
  maxAgents: number | undefined,
  verbSandbox: VerbSandbox | undefined,
  checkSource?: SourceCheck,
): Engine {
  const agents = simulatedAgents(createSimulatedAgents, seed, delayMs);
  return createEngine({
    agents,
    recorder: releasingAtEnd(store, verbSandbox),
    workspace: ctx.cwd,
    // The run store and both catalogs stay out of wf.readFile's reach (WF_ENGINE_READ_PROTECTED).
    readFile: { deny: protectedRoots(ctx) },
    resolveWorkflow: workflowResolver(catalog).nested,
    ...(maxAgents === undefined ? {} : { limits: { maxAgents } }),
    ...(verbSandbox === undefined ? {} : { sandbox: verbSandbox.sandbox }),
    ...(checkSource === undefined ? {} : { checkSource }),
  });
}

/**
 * The run store as the engine's recorder, releasing the verb's sandbox when the run's terminal
 * event is recorded: the run and its children are over (the engine quiesces before that event)
 * and no guest runs again, so the sandbox's thread ends while the store writes the run's
 * final record (fsync). Readers of the run's events see that event only once the record is
 * written (invariant 12), too late to overlap.
 */
function releasingAtEnd(store: RunStore, verbSandbox: VerbSandbox | undefined): RunStore {
  if (verbSandbox === undefined) return store;
  const release = () => verbSandbox.release();
  return {
    ...store,
    event: (event) => {
      store.event(event);
      if (isTerminalEventType(event.type)) void release();
    },
  };
}

/**
 * The source contract, before anything is recorded: a file that cannot be a workflow (empty, a
 * syntax error, no `run`, a construct the contract refuses) is an input error (exit 2) and
 * records no run. The engine checks again at preflight; it is handed this result for the same
 * source (nested workflows are checked afresh), so the source is parsed once.
 */
async function checkSourceFirst(
  source: string,
  entry: ResolvedEntry,
  target: string,
): Promise<SourceCheck> {
  const { checkWorkflowSource } = await import('@wf/source-contract');
  const checked = checkWorkflowSource(source);
  if (!checked.ok) {
    const first = checked.errors
      .slice(0, 5)
      .map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);
    const where = entry.source === 'inline' ? target : entry.name;
    throw new CliError(
      'WF_CLI_WORKFLOW_INVALID',
      `${where} cannot run: it breaks the workflow source contract: ${first.join('; ')}${checked.errors.length > 5 ? `; and ${checked.errors.length - 5} more` : ''}`,
      {
        hint: `\`wf check ${entry.source === 'inline' ? where : '<file>'}\` lists every problem with a fix hint; nothing was run or recorded`,
        details: checked.errors,
      },
    );
  }
  return (candidate) => (candidate === source ? checked : checkWorkflowSource(candidate));
}

export interface ResumeVerbOptions {
  readonly delayMs?: string;
  readonly progress?: boolean;
  readonly tokenBudget?: string;
  readonly wallMs?: string;
  readonly childWallMs?: string;
  readonly maxAgents?: string;
  /** Continue a run recorded with real (DSH) agents on simulated ones, on purpose. */
  readonly simulate?: boolean;
}

/** `--max-agents N`: the run's cap on children (the engine's default is 100). */
function maxAgentsOption(options: { readonly maxAgents?: string }): number | undefined {
  return options.maxAgents === undefined
    ? undefined
    : parseInteger(options.maxAgents, '--max-agents', 1);
}

export async function resumeCommand(
  ctx: CliContext,
  target: string,
  options: ResumeVerbOptions,
  verbSandbox?: VerbSandbox,
): Promise<ExitCode> {
  const engineModule = loadEngine();
  const delayMs =
    options.delayMs === undefined ? DEFAULT_DELAY_MS : parseInteger(options.delayMs, '--delay-ms');
  const maxAgents = maxAgentsOption(options);
  const store = await openProjectStore(ctx);
  const runId = await resolveRunTarget(store, target);
  const shown = await store.show(runId);
  if (!shown.ok) throw storeError(shown.error, runId);
  let loaded: Awaited<ReturnType<RunStore['load']>>;
  try {
    loaded = await store.load(runId);
  } catch (error) {
    // A damaged start.json or journal line: named, exit 5 (never a crash).
    throw CatalogFsError.is(error) ? storeError(error, runId) : error;
  }
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
  // Its owner decides, not the status: a crashed run recovery could not mark yet (a full disk)
  // still says running, and may be resumed.
  if (shown.run.active) {
    throw new CliError(
      'WF_CLI_RUN_ACTIVE',
      `run ${runId} is still ${status}; resume a run once it has ended or was interrupted`,
    );
  }
  const catalog = await openProjectCatalog(ctx);
  const engineLib = await engineModule;
  // The recorded seed drives the simulated answers too: the same children say the same thing.
  const engine = simulatedEngine(
    engineLib,
    ctx,
    store,
    catalog,
    delayMs,
    loaded.start.seed,
    maxAgents,
    verbSandbox,
  );
  const limits = guardLimits(options);
  let handle: RunHandle;
  try {
    handle = await engine.resume(runId, {
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(options.simulate ? { allowProviderChange: true } : {}),
    });
  } catch (error) {
    await engine.close();
    await store.close();
    if (engineLib.EngineError.is(error) && error.code === 'WF_ENGINE_RESUME_PROVIDER_MISMATCH') {
      throw new CliError(
        'WF_CLI_RESUME_PROVIDER_MISMATCH',
        `run ${runId} was recorded with real agents (${terminalText(String(loaded.start.provider ?? 'a DSH provider'))}); wf resume would continue it with simulated ones and mix made-up results into it`,
        {
          hint: `resume it inside DSH (workflow_manage resume-run ${runId}), or pass --simulate to continue it on simulated agents (the new run is labelled simulated)`,
          cause: error,
        },
      );
    }
    throw error;
  }
  if (!ctx.json) {
    printNote(
      ctx,
      `wf resume ${runId}: replaying its journal, then continuing live with ${NO_MODEL_NOTE}${options.simulate && loaded.start.simulated === false ? ` (the run was recorded with real agents, ${terminalText(String(loaded.start.provider))}; this resumed run is simulated)` : ''}`,
    );
  }
  return finishRun(
    ctx,
    engine,
    handle,
    store,
    options.progress !== false,
    loaded.start.workflow,
    verbSandbox,
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
  verbSandbox: VerbSandbox | undefined,
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
    // Had the run no terminal event (the engine failed), its sandbox is released here (run.ts
    // awaits the release before the verb returns).
    void verbSandbox?.release();
    view?.finish();
    process.off('SIGINT', onSigint);
    await engine.close();
    await store.close();
  }
  if (done.unrecorded?.stage === 'begin') {
    // Nothing ran and nothing is recorded: the run id names nothing, and nothing is printed as run.
    throw new CliError(
      'WF_CLI_STORAGE_FAILED',
      `the run could not be recorded, so it did not start: ${done.unrecorded.message}`,
      {
        hint: `free space on the disk holding ${store.root} (or make it writable), then run it again`,
        details: { code: done.unrecorded.code },
      },
    );
  }
  const runDir = join(store.root, handle.runId);
  const unrecorded =
    done.unrecorded === undefined ? undefined : unrecordedError(done, handle.runId, ctx.json);
  const code: ExitCode = unrecorded
    ? unrecorded.exitCode
    : done.status === 'completed'
      ? EXIT.ok
      : interrupted && done.status === 'stopped'
        ? EXIT.interrupted
        : EXIT.failed;
  const runError = runErrorOf(done, store.root, resumedFrom);
  if (ctx.json) {
    printJson(ctx, {
      ok: code === EXIT.ok,
      runId: handle.runId,
      workflow: workflowName,
      status: done.status,
      ...(done.result === undefined ? {} : { result: done.result }),
      // docs/cli.md: exit 130 is WF_CLI_INTERRUPTED; the engine's stop error stays in details.
      ...(unrecorded
        ? { error: errorDocument(unrecorded).error }
        : code === EXIT.interrupted
          ? {
              error: {
                code: 'WF_CLI_INTERRUPTED',
                message: `interrupted by Ctrl-C: run ${handle.runId} was stopped and can be resumed`,
                hint: `wf resume ${handle.runId}`,
                ...(done.error ? { details: { runError: done.error } } : {}),
              },
            }
          : runError
            ? { error: runError }
            : {}),
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
    // The result is untrusted text: printLine passes it through terminalText (invariant 13).
    printLine(ctx, resultText(done.result));
    printLine(ctx);
  }
  if (runError) {
    printNote(ctx, `error: ${terminalText(runError.code)}: ${terminalText(runError.message)}`);
    if (runError.hint) printNote(ctx, `  hint: ${terminalText(runError.hint)}`);
    const at = source === undefined ? undefined : guestErrorPosition(runError.message);
    const excerpt = at && source !== undefined ? sourceExcerpt(source, at) : undefined;
    if (excerpt) printNote(ctx, excerpt);
  }
  const c = done.cost;
  printLine(
    ctx,
    `run ${handle.runId} ${done.status}${unrecorded ? ' (not recorded)' : ''} in ${duration(c.wallClockDurationMs)} · ${c.agentsStarted} agents · ${grouped(c.tokenUsage.totalTokens)} simulated tokens · peak ${c.peakConcurrency} at once`,
  );
  printLine(
    ctx,
    `  wf show ${handle.runId}   wf report ${handle.runId}${done.status === 'stopped' || unrecorded ? `   wf resume ${handle.runId}` : ''}`,
  );
  // Last, on stderr: the verb's own error, as runVerb prints every CliError.
  if (unrecorded) printError(ctx, unrecorded);
  return code;
}

/**
 * Invariant 12: a run whose end could not be recorded is not reported done. The outcome is still
 * printed (the result is its only copy: on stdout, or in the --json document), and the run stays
 * resumable from what was recorded.
 */
function unrecordedError(done: RunDone, runId: string, json: boolean): CliError {
  const reason = done.unrecorded?.message ?? 'the recorder refused it';
  const where = json ? 'in this document' : 'on stdout above';
  return new CliError(
    'WF_CLI_RUN_UNRECORDED',
    `run ${runId} ${done.status}, but its end could not be recorded: ${reason}. ${done.result === undefined ? 'Its outcome is' : 'The result is printed'} ${where}, the only copy; the run stays resumable from what was recorded`,
    {
      hint: `once the disk has space again: wf resume ${runId} (its recorded children are replayed, not run again)`,
      details: { stage: 'finish', code: done.unrecorded?.code },
    },
  );
}

/**
 * The run's own error as printed: a resume that diverged from its journal also names the journal
 * it replayed (the run store's file), since the record, not only the source, may be what changed.
 */
function runErrorOf(
  done: RunDone,
  storeRoot: string,
  resumedFrom: string | undefined,
): { code: string; message: string; hint?: string } | undefined {
  if (!done.error) return undefined;
  if (done.error.code !== 'WF_ENGINE_REPLAY_DIVERGED' || resumedFrom === undefined)
    return done.error;
  return {
    ...done.error,
    hint: `the journal replayed is ${join(storeRoot, resumedFrom, 'journal.jsonl')}: if the source and args are unchanged, that file was edited or damaged`,
  };
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

/**
 * The CLI's simulated children for a run's seed and delay: the embedded engine and `wf worker`
 * build them alike, so a run gives the same answers on both engines.
 */
export function simulatedAgents(
  create: EngineModule['createSimulatedAgents'],
  seed: number,
  delayMs: number,
): ReturnType<EngineModule['createSimulatedAgents']> {
  return create({
    seed,
    respond: (request) => ({ delayMs: jitter(delayMs, `${request.taskId}|${seed}`) }),
  });
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
