// The run-store verbs: `wf runs`, `wf show`, `wf events [--follow]`, `wf delete-run`, `wf prune`,
// `wf report`. They read what the engine recorded through @wf/catalog-fs; every id comes from the
// user and every record from disk, so both are checked before use.
import { constants, promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
// The light entry: `wf runs` must not load the whole bridge (schemas, prelude).
import { runSpan } from '@wf/bridge/run-span';
import { terminalText } from '@wf/bridge/terminal-text';
import { CatalogFsError, type RunStore } from '@wf/catalog-fs/run-store';
import {
  duration,
  foldRunEvents,
  grouped,
  isRecord,
  phaseStats,
  renderRunReport,
  utcMinute,
} from '@wf/report';
import { errorText, parseDuration, parseInteger } from './args.js';
import {
  type CliContext,
  printJson,
  printJsonLine,
  printLine,
  printNote,
  printTable,
} from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { fileKind } from './input-file.js';
import { resolveRunTarget, storeError } from './store-error.js';
import { SHOW_AGENTS_MAX } from './verbs.js';
import { withProjectStore } from './store.js';

type Summary = Awaited<ReturnType<RunStore['list']>>[number];

const MAX_RESULT_BYTES = 16 * 1024 * 1024;

/**
 * The read verbs open the store without its separate recovery pass and recover in their first
 * read instead (listRecent or resolveRunTarget with `recover`): one listing of the runs directory
 * and one read of the runs index per command, and stale runs are still marked `interrupted`.
 * They read with blocking calls: a one-shot command waits for each read anyway, and a round trip
 * to the thread pool per call would be most of `wf runs`' reading time.
 */
function withReadStore<T>(ctx: CliContext, body: (store: RunStore) => Promise<T>): Promise<T> {
  return withProjectStore(ctx, body, { recoverAtOpen: false, blockingReads: true });
}

export async function runsCommand(
  ctx: CliContext,
  options: { limit?: string; all?: boolean } & RunSource,
): Promise<ExitCode> {
  const limit = options.all
    ? Number.POSITIVE_INFINITY
    : options.limit === undefined
      ? 20
      : parseInteger(options.limit, '--limit', 1);
  const list = async (): Promise<{
    runs: readonly Summary[];
    total: number;
    deferred?: readonly { readonly runId: string; readonly reason: string }[];
  }> => {
    if (options.restate) {
      const { listRemoteRuns } = await import('./restate-runs.js');
      const all = await listRemoteRuns(options.restate, options.admin);
      return { runs: all.slice(0, limit), total: all.length };
    }
    // One pass: recovery and the listing share one listing of the runs directory and one read of
    // the runs index; then the run.json of the runs it prints, not of every stored run.
    return withReadStore(ctx, (store) => store.listRecent(limit, { recover: true }));
  };
  {
    const recent = await list();
    const runs = recent.runs.map(summaryRow);
    const deferred = recent.deferred ?? [];
    if (ctx.json) {
      printJson(ctx, {
        ok: true,
        runs,
        total: recent.total,
        ...(deferred.length > 0 ? { deferred } : {}),
      });
      return EXIT.ok;
    }
    printDeferred(ctx, deferred);
    if (runs.length === 0) {
      printLine(
        ctx,
        options.restate
          ? `No runs recorded on the Restate server at ${options.restate} yet.`
          : 'No runs recorded in this directory yet. Try: wf run fan-out-and-synthesize',
      );
      return EXIT.ok;
    }
    const rows = runs.map((r) => [
      r.runId,
      terminalText(r.workflow ?? '?'),
      statusCell(r),
      r.startedAt === undefined ? '' : utcMinute(r.startedAt),
      r.durationMs === undefined ? '' : duration(r.durationMs),
      r.agents === undefined ? '' : String(r.agents),
      r.tokens === undefined ? '' : grouped(r.tokens),
    ]);
    printTable(ctx, ['RUN', 'WORKFLOW', 'STATUS', 'STARTED', 'TOOK', 'AGENTS', 'TOKENS'], rows);
    if (recent.total > runs.length)
      printLine(ctx, `(${recent.total - runs.length} older runs not shown; --all shows every run)`);
    for (const r of runs)
      if (r.error)
        printNote(
          ctx,
          `wf runs: ${r.runId}: ${terminalText(r.error.code)}: ${terminalText(r.error.message)}`,
        );
    return EXIT.ok;
  }
}

function summaryRow(s: Summary) {
  const snap = s.snapshot;
  const cost = isRecord(snap?.cost) ? snap.cost : undefined;
  const tokenUsage = cost && isRecord(cost.tokenUsage) ? cost.tokenUsage : undefined;
  const { startedAt, endedAt, durationMs } = runSpan(snap ?? {});
  const from = snap ? resumedFromOf(snap) : undefined;
  return {
    runId: s.runId,
    ...(s.displayName ? { displayName: s.displayName } : {}),
    workflow: snap?.workflow,
    status: snap?.status ?? 'unreadable',
    active: s.active,
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(typeof cost?.agentsStarted === 'number' ? { agents: cost.agentsStarted } : {}),
    ...(typeof tokenUsage?.totalTokens === 'number' ? { tokens: tokenUsage.totalTokens } : {}),
    ...(snap?.error ? { runError: snap.error } : {}),
    ...(s.error ? { error: s.error } : {}),
    ...(typeof snap?.provider === 'string' ? { provider: snap.provider } : {}),
    ...(typeof snap?.simulated === 'boolean' ? { simulated: snap.simulated } : {}),
    ...(from ? { resumedFromRunId: from.runId } : {}),
  };
}

/**
 * The status column: `(live)` while owned, `(owner gone)` for a run that says it runs but whose
 * process is gone (recovery could not mark it interrupted yet), `(resumed)` for a run that
 * continues another.
 */
function statusCell(r: ReturnType<typeof summaryRow>): string {
  const stale = !r.active && (r.status === 'running' || r.status === 'paused');
  const marks = [
    r.active ? 'live' : stale ? 'owner gone' : '',
    r.resumedFromRunId ? 'resumed' : '',
  ].filter(Boolean);
  const status = terminalText(String(r.status));
  return marks.length > 0 ? `${status} (${marks.join(', ')})` : status;
}

/** Recovery that could not write (a full disk) says so, once per run, and why. */
function printDeferred(
  ctx: CliContext,
  deferred: readonly { readonly runId: string; readonly reason: string }[],
): void {
  for (const d of deferred)
    printNote(
      ctx,
      `wf ${ctx.verb}: run ${d.runId} was left running by a process that is gone; it is not recorded interrupted yet (${terminalText(d.reason)}): the next wf command that can write does it`,
    );
}

/** The run a resumed run continues: `resumedFrom` ({ runId, at }), or the older bare id. */
function resumedFromOf(snap: {
  readonly resumedFrom?: unknown;
  readonly resumedFromRunId?: unknown;
}): { runId: string; at?: number } | undefined {
  const from = isRecord(snap.resumedFrom) ? snap.resumedFrom : undefined;
  const runId = typeof from?.runId === 'string' ? from.runId : snap.resumedFromRunId;
  if (typeof runId !== 'string') return undefined;
  return typeof from?.at === 'number' ? { runId, at: from.at } : { runId };
}

/** Loads everything about one run: the snapshot, the event log and the full result. */
async function loadRun(store: RunStore, target: string) {
  const runId = await resolveRunTarget(store, target, { recover: true });
  const shown = await store.show(runId);
  if (!shown.ok) throw storeError(shown.error, runId);
  const summary = shown.run;
  if (!summary.snapshot) {
    throw storeError(
      summary.error ?? { code: 'WF_CATALOG_RUN_CORRUPT', message: 'run.json cannot be read' },
      runId,
    );
  }
  let events: readonly unknown[];
  try {
    events = await store.events(runId);
  } catch (e) {
    throw CatalogFsError.is(e) ? storeError(e, runId) : e;
  }
  const result = await readResult(store, runId);
  return { runId, summary, snapshot: summary.snapshot, events, result };
}

/**
 * The full result from `result.json` (run.json keeps only a capped summary). Read without
 * following links: the run directory and the file must both be what they claim.
 */
async function readResult(store: RunStore, runId: string): Promise<{ value: unknown } | undefined> {
  const dir = join(store.root, runId);
  const path = join(dir, 'result.json');
  try {
    const d = await fsp.lstat(dir);
    const f = await fsp.lstat(path);
    if (!d.isDirectory() || !f.isFile() || f.size > MAX_RESULT_BYTES) return undefined;
    const handle = await fsp.open(path, 'r');
    try {
      const parsed: unknown = JSON.parse(await handle.readFile('utf8'));
      return isRecord(parsed) && 'result' in parsed ? { value: parsed.result } : undefined;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** Where a read verb finds runs: this directory's store, or a Restate server's records. */
interface RunSource {
  readonly restate?: string;
  readonly admin?: string;
}

/** Runs `body` on one run, loaded from this directory's store or (`--restate`) from Restate. */
async function withRun<T>(
  ctx: CliContext,
  target: string,
  source: RunSource,
  body: (run: Awaited<ReturnType<typeof loadRun>>) => Promise<T>,
): Promise<T> {
  if (source.restate) {
    const { loadRemoteRun } = await import('./restate-runs.js');
    return body(await loadRemoteRun(source.restate, source.admin, target));
  }
  return withReadStore(ctx, async (store) => body(await loadRun(store, target)));
}

export async function showCommand(
  ctx: CliContext,
  target: string,
  options: { agents?: boolean } & RunSource = {},
): Promise<ExitCode> {
  return withRun(ctx, target, options, async (run) => {
    const model = foldRunEvents(run.events);
    const snap = run.snapshot;
    const providers = agentProviders(run.events);
    // Per phase instance (by id): a phase entered three times is three rows, each with its own.
    const phases = phaseStats(model).map(({ phase: p, durationMs, agents, failed, tokens }) => ({
      id: p.id,
      name: p.name,
      depth: p.depth,
      startedAt: p.startedAt,
      ...(p.endedAt === undefined || durationMs === undefined
        ? {}
        : { endedAt: p.endedAt, durationMs }),
      agents,
      failed,
      tokens,
    }));
    const agents = model.agents.map((a) => ({
      taskId: a.taskId,
      name: a.name,
      kind: a.kind,
      ...(a.phase === undefined ? {} : { phase: a.phase }),
      ...(a.phaseId === undefined ? {} : { phaseId: a.phaseId }),
      outcome: a.outcome,
      startedAt: a.startedAt,
      ...(a.endedAt === undefined
        ? {}
        : { endedAt: a.endedAt, durationMs: a.endedAt - a.startedAt }),
      tokens: a.tokens,
      ...(a.error ? { error: a.error } : {}),
    }));
    if (ctx.json) {
      printJson(ctx, {
        ok: true,
        run: {
          ...snap,
          active: run.summary.active,
          ...(run.summary.displayName ? { displayName: run.summary.displayName } : {}),
        },
        ...(run.result ? { result: run.result.value } : {}),
        phases,
        agents,
        agentProviders: providers,
        eventCount: run.events.length,
      });
      return EXIT.ok;
    }
    const cost = isRecord(snap.cost) ? snap.cost : undefined;
    const tu = cost && isRecord(cost.tokenUsage) ? cost.tokenUsage : undefined;
    const span = runSpan(snap, run.events);
    const took = span.durationMs === undefined ? 'still running' : duration(span.durationMs);
    printLine(
      ctx,
      `run ${run.runId}${run.summary.displayName ? ` (${terminalText(run.summary.displayName)})` : ''}`,
    );
    printLine(
      ctx,
      `  workflow   ${terminalText(snap.workflow)} (${terminalText(String(snap.execution ?? ''))})`,
    );
    const stale = snap.status === 'running' || snap.status === 'paused';
    printLine(
      ctx,
      `  status     ${terminalText(String(snap.status))}${run.summary.active ? ' (live)' : stale ? ' (owner gone: not recorded interrupted yet)' : ''}`,
    );
    printLine(ctx, `  started    ${utcMinute(snap.startedAt)} · ${took}`);
    const from = resumedFromOf(snap);
    if (from)
      printLine(
        ctx,
        `  resumed    from ${terminalText(from.runId)}${from.at === undefined ? '' : ` at ${utcMinute(from.at)}`}`,
      );
    if (typeof snap.provider === 'string')
      printLine(
        ctx,
        `  agents     ${snap.simulated === true ? `simulated${snap.provider === 'simulated' ? '' : ` (${terminalText(snap.provider)})`}: no model was called` : terminalText(snap.provider)}`,
      );
    if (cost) {
      printLine(
        ctx,
        `  cost       ${costField(cost.agentsStarted)} agents started, ${costField(cost.agentsCompleted)} completed, ${costField(cost.cacheHits)} replayed · peak ${costField(cost.peakConcurrency)} at once`,
      );
    }
    if (tu)
      printLine(
        ctx,
        `  tokens     ${grouped(Number(tu.totalTokens))} (in ${grouped(Number(tu.inputTokens))}, out ${grouped(Number(tu.outputTokens))}; ${terminalText(tokenNote(providers, snap.simulated))})`,
      );
    if (snap.error)
      printLine(
        ctx,
        `  error      ${terminalText(snap.error.code)}: ${terminalText(snap.error.message)}`,
      );
    if (phases.length > 0) {
      printLine(ctx, 'phases');
      for (const p of phases) {
        printLine(
          ctx,
          `  ${'  '.repeat(p.depth)}${terminalText(p.name)}  ${p.durationMs === undefined ? 'open' : duration(p.durationMs)}  ${p.agents} agent${p.agents === 1 ? '' : 's'}`,
        );
      }
    }
    if (agents.length > SHOW_AGENTS_MAX && !options.agents) {
      printAgentSummary(ctx, agents);
    } else if (agents.length > 0) {
      printLine(ctx, 'agents');
      printTable(
        ctx,
        ['  TASK', 'NAME', 'PHASE', 'OUTCOME', 'TOOK', 'TOKENS'],
        agents.map((a) => [
          `  ${terminalText(a.taskId)}`,
          terminalText(a.name).slice(0, 40),
          terminalText(a.phase ?? ''),
          a.error ? `${a.outcome} (${terminalText(a.error.code)})` : a.outcome,
          a.durationMs === undefined ? '' : duration(a.durationMs),
          grouped(a.tokens.total),
        ]),
      );
    }
    const summary = run.result
      ? capText(
          typeof run.result.value === 'string'
            ? run.result.value
            : JSON.stringify(run.result.value, null, 2),
          4000,
        )
      : typeof snap.resultSummary === 'string'
        ? snap.resultSummary
        : undefined;
    if (summary !== undefined) {
      printLine(ctx, 'result');
      printLine(
        ctx,
        terminalText(summary, 'lines')
          .split('\n')
          .map((l) => `  ${l}`)
          .join('\n'),
      );
    }
    return EXIT.ok;
  });
}

type ShownAgent = {
  readonly taskId: string;
  readonly name: string;
  readonly phase?: string;
  readonly outcome: string;
  readonly durationMs?: number;
  readonly tokens: { readonly total: number };
  readonly error?: { readonly code: string };
};

/** A large run in a screenful: per phase, its agents by outcome; then the ones that did not complete. */
function printAgentSummary(ctx: CliContext, agents: readonly ShownAgent[]): void {
  printLine(ctx, `agents (${grouped(agents.length)}, per phase; --agents lists each)`);
  const byPhase = new Map<string, ShownAgent[]>();
  for (const a of agents) {
    const key = a.phase ?? '';
    const list = byPhase.get(key) ?? [];
    list.push(a);
    byPhase.set(key, list);
  }
  printTable(
    ctx,
    ['  PHASE', 'AGENTS', 'OUTCOMES', 'LONGEST', 'TOKENS'],
    [...byPhase].map(([phase, list]) => {
      const outcomes = new Map<string, number>();
      for (const a of list) outcomes.set(a.outcome, (outcomes.get(a.outcome) ?? 0) + 1);
      const longest = Math.max(...list.map((a) => a.durationMs ?? 0));
      return [
        `  ${phase === '' ? '(no phase)' : terminalText(phase)}`,
        grouped(list.length),
        [...outcomes].map(([o, n]) => `${grouped(n)} ${o}`).join(', '),
        duration(longest),
        grouped(list.reduce((n, a) => n + a.tokens.total, 0)),
      ];
    }),
  );
  const notCompleted = agents.filter((a) => a.outcome !== 'completed' && a.outcome !== 'cached');
  const shown = notCompleted.slice(0, 10);
  for (const a of shown)
    printLine(
      ctx,
      `  ${terminalText(a.taskId)} ${terminalText(a.name).slice(0, 40)}: ${a.outcome}${a.error ? ` (${terminalText(a.error.code)})` : ''}`,
    );
  if (notCompleted.length > shown.length)
    printLine(ctx, `  ... and ${notCompleted.length - shown.length} more that did not complete`);
}

export async function eventsCommand(
  ctx: CliContext,
  target: string,
  options: { follow?: boolean; after?: string; intervalMs?: string } & RunSource,
): Promise<ExitCode> {
  let after = options.after === undefined ? 0 : parseInteger(options.after, '--after');
  const interval =
    options.intervalMs === undefined ? 200 : parseInteger(options.intervalMs, '--interval-ms', 10);
  if (options.restate) return remoteEventsCommand(ctx, target, options, after, interval);
  let stopped = false;
  const onSigint = () => {
    stopped = true;
  };
  return withReadStore(ctx, async (store) => {
    try {
      const runId = await resolveRunTarget(store, target, { recover: true });
      // Offsets count from the run's recorded start (bridge runSpan), as every other surface does.
      const shownAtStart = await store.show(runId);
      const t0Ref: { t0?: number } = {};
      const recordedStart = shownAtStart.ok
        ? runSpan(shownAtStart.run.snapshot ?? {}).startedAt
        : undefined;
      if (recordedStart !== undefined) t0Ref.t0 = recordedStart;
      if (options.follow) process.on('SIGINT', onSigint);
      for (;;) {
        let batch: readonly { seq: number; type: string; time: number; data: unknown }[];
        try {
          batch = await store.events(runId, { after });
        } catch (e) {
          throw CatalogFsError.is(e) ? storeError(e, runId) : e;
        }
        for (const event of batch) {
          after = Math.max(after, event.seq);
          // --json: one JSON object per line (JSON Lines), so --follow can stream.
          if (ctx.json) printJsonLine(ctx, event);
          else printLine(ctx, eventLine(event, t0Ref));
        }
        if (!options.follow || stopped) break;
        const shown = await store.show(runId);
        const status = shown.ok ? shown.run.snapshot?.status : undefined;
        const live = shown.ok && (shown.run.active || status === 'running' || status === 'paused');
        if (!live && batch.length === 0) break;
        await new Promise((r) => setTimeout(r, interval));
        if (stopped) break;
      }
      return stopped ? EXIT.interrupted : EXIT.ok;
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}

/** `wf events --restate`: the run's durable record, every attempt's events (`--follow`: polled). */
async function remoteEventsCommand(
  ctx: CliContext,
  target: string,
  source: RunSource & { follow?: boolean },
  from: number,
  interval: number,
): Promise<ExitCode> {
  const { loadRemoteRun, remoteEvents } = await import('./restate-runs.js');
  const ingress = source.restate as string;
  const first = await loadRemoteRun(ingress, source.admin, target);
  const t0Ref: { t0?: number } = {};
  const recordedStart = runSpan(first.snapshot).startedAt;
  if (recordedStart !== undefined) t0Ref.t0 = recordedStart;
  let stopped = false;
  const onSigint = () => {
    stopped = true;
  };
  if (source.follow) process.on('SIGINT', onSigint);
  try {
    let after = from;
    for (;;) {
      const { events, ended } = await remoteEvents(ingress, first.runId, after);
      for (const event of events) {
        after = Math.max(after, event.seq);
        if (ctx.json) ctx.stdout.write(`${JSON.stringify(event)}\n`);
        else printLine(ctx, eventLine(event, t0Ref));
      }
      if (!source.follow || stopped || (ended && events.length === 0)) break;
      await new Promise((r) => setTimeout(r, interval));
      if (stopped) break;
    }
    return stopped ? EXIT.interrupted : EXIT.ok;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function eventLine(
  event: { seq: number; type: string; time: number; data: unknown },
  ref: { t0?: number },
): string {
  ref.t0 ??= event.time;
  let data = '';
  try {
    data = JSON.stringify(event.data);
  } catch {
    data = '';
  }
  if (data.length > 300) data = `${data.slice(0, 299)}…`;
  return `${terminalText(String(event.seq)).padStart(5)}  +${duration(event.time - ref.t0).padEnd(7)} ${terminalText(event.type).padEnd(20)} ${terminalText(data)}`;
}

export async function deleteRunCommand(
  ctx: CliContext,
  target: string,
  options: { force?: boolean } & RunSource,
): Promise<ExitCode> {
  if (options.restate) {
    const { deleteRemoteRun } = await import('./restate-runs.js');
    const released = await deleteRemoteRun(options.restate, options.admin, target);
    if (ctx.json) printJson(ctx, { ok: true, deleted: target, blobsReleased: released });
    else printLine(ctx, `deleted run ${target} from Restate (${released} stored answers released)`);
    return EXIT.ok;
  }
  const force = options.force === true;
  return withReadStore(ctx, async (store) => {
    const runId = await resolveRunTarget(store, target, { recover: true });
    const deleted = await store.delete(runId, { force });
    if (!deleted.ok) throw storeError(deleted.error, runId);
    if (ctx.json) printJson(ctx, { ok: true, deleted: deleted.deleted });
    else printLine(ctx, `deleted run ${deleted.deleted}`);
    return EXIT.ok;
  });
}

export async function pruneCommand(
  ctx: CliContext,
  options: { keep?: string; olderThan?: string; dryRun?: boolean },
): Promise<ExitCode> {
  const keep = options.keep === undefined ? 20 : parseInteger(options.keep, '--keep');
  const olderThan =
    options.olderThan === undefined ? undefined : parseDuration(options.olderThan, '--older-than');
  return withProjectStore(ctx, async (store) => {
    const out = await store.prune({
      keep,
      ...(olderThan === undefined ? {} : { olderThan }),
      dryRun: options.dryRun === true,
    });
    if (ctx.json) {
      printJson(ctx, {
        ok: true,
        pruned: out.pruned,
        dryRun: out.dryRun,
        keep,
        ...(olderThan === undefined ? {} : { olderThanMs: olderThan }),
      });
      return EXIT.ok;
    }
    const verb = out.dryRun ? 'would prune' : 'pruned';
    printLine(
      ctx,
      `${verb} ${out.pruned.length} run${out.pruned.length === 1 ? '' : 's'} (kept the newest ${keep} ended runs${olderThan === undefined ? '' : `, and any newer than ${options.olderThan}`}; live and unfinished runs are never pruned)`,
    );
    for (const id of out.pruned) printLine(ctx, `  ${id}`);
    return EXIT.ok;
  });
}

export async function reportCommand(
  ctx: CliContext,
  target: string,
  options: { out?: string } & RunSource,
): Promise<ExitCode> {
  return withRun(ctx, target, options, async (run) => {
    const html = renderRunReport({
      run: { ...run.snapshot, ...(run.result ? { result: run.result.value } : {}) },
      events: run.events,
    });
    const out = resolve(ctx.cwd, options.out ?? `${run.runId}.report.html`);
    try {
      await writeOutputFile(out, options.out ?? out, html);
    } catch (e) {
      const full = ['ENOSPC', 'EDQUOT', 'EIO'].includes(String((e as { code?: unknown }).code));
      throw new CliError(
        full ? 'WF_CLI_STORAGE_FAILED' : 'WF_CLI_USAGE',
        `cannot write the report to ${options.out ?? out}: ${full ? `${(e as { code: string }).code}: the disk refused the write` : errorText(e)}`,
        {
          hint: full
            ? 'free space on that disk, or pick another with --out'
            : 'pick a writable path with --out',
        },
      );
    }
    if (ctx.json)
      printJson(ctx, { ok: true, runId: run.runId, path: out, bytes: Buffer.byteLength(html) });
    else
      printLine(
        ctx,
        `wrote ${terminalText(out)} (self-contained HTML: open it in any browser, no network needed)`,
      );
    return EXIT.ok;
  });
}

/**
 * Writes a file named on the command line: an existing FIFO, device or directory is refused by
 * what it is (a FIFO would block the write until someone read it), and the open is O_NONBLOCK so
 * one swapped in meanwhile fails instead of blocking.
 */
async function writeOutputFile(path: string, shown: string, text: string): Promise<void> {
  const st = await fsp.stat(path).catch(() => undefined);
  if (st && !st.isFile())
    throw Object.assign(new Error(`${shown} is ${fileKind(st)}, not a file`), { code: 'EKIND' });
  const { O_WRONLY, O_CREAT, O_TRUNC, O_NONBLOCK } = constants;
  const handle = await fsp.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0o644);
  try {
    if (!(await handle.stat()).isFile())
      throw Object.assign(new Error(`${shown} is not a regular file`), { code: 'EKIND' });
    await handle.writeFile(text, 'utf8');
  } catch (error) {
    // A report cut short by a full disk is no report: it is not left behind.
    if ((error as { code?: unknown }).code !== 'EKIND')
      await fsp.unlink(path).catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}

/** The providers that ran the run's agents, from its agent-started events ('simulated', 'dsh:...'). */
function agentProviders(events: readonly unknown[]): string[] {
  const out = new Set<string>();
  for (const event of events) {
    if (!isRecord(event) || event.type !== 'agent-started' || !isRecord(event.data)) continue;
    const provider = event.data.provider;
    if (typeof provider === 'string' && provider.length > 0)
      out.add(terminalText(provider).slice(0, 60));
  }
  return [...out].sort();
}

/**
 * Whether the token count was spent on a model: only simulated agents spend none. The run record
 * says which kind ran its children (`simulated`, whatever the provider's name: `restate:simulated`
 * on Restate); records without it are read from the providers' names.
 */
function tokenNote(providers: readonly string[], simulated: unknown): string {
  const none = 'simulated agents: counted, no model called, none spent';
  if (simulated === true) return none;
  const real = simulated === false ? providers : providers.filter((p) => p !== 'simulated');
  if (real.length === 0) return simulated === false ? 'spent by real agents' : none;
  const mixed = real.length < providers.length ? ', some agents simulated' : '';
  return `spent by real agents (${real.join(', ')})${mixed}`;
}

/** A run.json cost field as shown: a count, or whatever was recorded there, sanitized. */
function costField(value: unknown): string {
  return typeof value === 'number' ? String(value) : terminalText(String(value));
}

function capText(text: string, max: number): string {
  return text.length > max
    ? `${text.slice(0, max)}\n… (${text.length - max} more characters: wf show --json)`
    : text;
}
