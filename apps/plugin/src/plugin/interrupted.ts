// Runs cut short by DSH itself: stopped because DSH exited (or unloaded the plugin) while they
// ran, or marked `interrupted` by the run store because the process that owned them is gone.
// The next session lists them and offers `/workflow resume <run>`, which continues a run from its
// journal: children that completed are not run again.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { recentRunsAt } from './runs-index.js';
import { runLine } from './run-text.js';
import { cwdOf, type RunSummary, type ServiceState } from './state.js';

/** The stop reason of runs still active when the plugin unloads (DSH exits or reloads it). */
export const EXIT_STOP_REASON =
  'DSH exited (or unloaded the workflow plugin) while the run was active';

/** How many interrupted runs a notice names (newest first); `/workflow runs` lists them all. */
const NOTICE_MAX = 5;

/** A run DSH cut short, as opposed to one a user or the workflow stopped. */
export function wasInterrupted(run: RunSummary): boolean {
  return (
    run.status === 'interrupted' ||
    (run.status === 'stopped' && run.error?.message === EXIT_STOP_REASON)
  );
}

/**
 * Interrupted runs of this agent's project that nothing has continued yet (no later run resumed
 * from them), newest first, among the runs `/workflow runs` lists.
 */
export async function pendingInterrupted(state: ServiceState, cwd: string): Promise<RunSummary[]> {
  return pendingAmong((await recentRunsAt(state, cwd)).runs, state);
}

/** The interrupted runs among `runs` that no run in `runs` continues. */
export function pendingAmong(runs: readonly RunSummary[], state: ServiceState): RunSummary[] {
  const resumed = new Set(runs.flatMap((r) => (r.resumedFrom ? [r.resumedFrom.runId] : [])));
  return runs.filter(
    (r) => wasInterrupted(r) && !resumed.has(r.runId) && !state.active.has(r.runId),
  );
}

/** The offer, for people: what was cut short and the command that continues it. */
export function interruptedOffer(runs: readonly RunSummary[], command: string): string {
  if (runs.length === 0) return '';
  const first = runs[0]?.runId ?? '<run>';
  return `${runs.length} run${runs.length === 1 ? ' was' : 's were'} interrupted when DSH exited. /${command} resume ${first} continues ${runs.length === 1 ? 'it' : 'one'} from its journal (children that completed are not run again).`;
}

/** The same, for the model: the runs, and how the user and the model can continue one. */
function modelNotice(runs: readonly RunSummary[], state: ServiceState): string {
  if (runs.length === 0) return '';
  const { commandName, manageToolName } = state.config;
  const shown = runs.slice(0, NOTICE_MAX).map((r) => `- ${runLine({ ...r, interrupted: true })}`);
  const more =
    runs.length > NOTICE_MAX
      ? [`- and ${runs.length - NOTICE_MAX} more (/${commandName} runs)`]
      : [];
  return [
    'Workflow runs interrupted when DSH last exited in this project (not finished; nothing is running them):',
    ...shown,
    ...more,
    `Tell the user: they can continue one by typing \`/${commandName} resume <run>\` where DSH takes slash commands (the web UI), or by asking you; you continue one with ${manageToolName} action resume-run (completed children are replayed from the journal, not run again).`,
  ].join('\n');
}

/**
 * Registers the notice as dynamic prompt context where the host has it. The context provider is
 * synchronous, so each project's list is read in the background and served from memory: the
 * working directory DSH started in is read at once, others on their first request.
 */
export function registerInterruptedNotice(state: ServiceState): () => void {
  const host = state.ctx.systemPrompt;
  if (typeof host.context !== 'function') return () => {};
  const texts = new Map<string, string>();
  const reading = new Set<string>();
  const refresh = (cwd: string) => {
    if (reading.has(cwd)) return;
    // a project that never ran a workflow has no run store: nothing to read, nothing to create
    if (!existsSync(resolve(cwd, state.config.runDirectory))) return;
    reading.add(cwd);
    void pendingInterrupted(state, cwd)
      .then((runs) => texts.set(cwd, modelNotice(runs, state)))
      .catch(() => texts.delete(cwd))
      .finally(() => reading.delete(cwd));
  };
  refresh(process.cwd());
  return host.context({
    name: 'wf-workflows:interrupted-runs',
    order: 160,
    text: ({ agent }) => {
      if (!agent || (agent.session.header as { origin?: unknown }).origin === 'subagent') return '';
      const cwd = cwdOf(agent);
      const text = texts.get(cwd) ?? '';
      refresh(cwd);
      return text;
    },
  });
}
