// How a run reads in DSH: one summary line, then what the run returned. The run tool's result
// (what the model reads), the `/workflow` answers and a background run's job output all come from
// here, so one run reads the same wherever DSH shows it. Run text is untrusted (model-written code
// produced it): where the plugin meets DSH every shown text passes terminalText (host-text.ts);
// names here are escaped on their line as well, so a summary line stays one line.
import { terminalText } from '@wf/bridge/terminal-text';
import { duration, grouped } from '@wf/report';
import type { RunReply, RunSummary } from './state.js';

/** A run's value as text: a string as it is, anything else as indented JSON. */
export function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `text`, cut at `max` characters with a line that says so. */
export function capped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… (cut at ${grouped(max)} characters)` : text;
}

/** `3 agents: 2 completed, 1 failed` (replayed children count as completed, as in the report). */
function agentsText(agents: NonNullable<RunReply['agents']>): string {
  const parts: string[] = [];
  const done = agents.completed + agents.cached;
  if (done) parts.push(`${done} completed`);
  for (const key of ['failed', 'stopped', 'running'] as const)
    if (agents[key]) parts.push(`${agents[key]} ${key}`);
  const n = agents.total;
  return `${n} agent${n === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/** The summary line: `Workflow "x" completed in 1.2s (run run-…; 3 agents: 3 completed).` */
export function summaryLine(reply: RunReply): string {
  const name = reply.workflow === undefined ? 'workflow' : `"${terminalText(reply.workflow)}"`;
  const status = reply.status === 'running' ? 'started in the background' : reply.status;
  const took =
    reply.durationMs !== undefined && reply.status !== 'running'
      ? ` in ${duration(reply.durationMs)}`
      : '';
  const detail = [`run ${reply.runId}`, ...(reply.agents ? [agentsText(reply.agents)] : [])];
  return `Workflow ${name} ${status}${took} (${detail.join('; ')}).`;
}

/**
 * The whole answer: the summary line; where it came from (resume), how to follow a background
 * run, the error and its hint; then `Result:` and the result, capped at `maxChars`.
 */
export function runText(reply: RunReply, maxChars: number): string {
  const lines = [summaryLine(reply)];
  if (reply.resumedFrom) lines.push(`Resumed from run ${reply.resumedFrom.runId}.`);
  if (reply.status === 'running')
    lines.push(
      `${reply.jobId ? `DSH job ${reply.jobId} owns it. ` : ''}Follow it with /workflow show ${reply.runId}; stop it with /workflow stop ${reply.runId}.`,
    );
  if (reply.note) lines.push(reply.note);
  if (reply.error) {
    lines.push(`Error: ${reply.error.code}: ${terminalText(reply.error.message)}`);
    if (reply.error.hint) lines.push(`Hint: ${reply.error.hint}`);
  }
  if (reply.result !== undefined)
    lines.push('', 'Result:', capped(valueText(reply.result), maxChars));
  return lines.join('\n');
}

/** One line per run for `/workflow runs`: id, workflow, status, when and how long. */
export function runLine(run: RunSummary & { readonly interrupted?: boolean }): string {
  const took =
    run.endedAt !== undefined && run.status !== 'running' && run.status !== 'paused'
      ? ` in ${duration(run.endedAt - run.startedAt)}`
      : '';
  const status = run.interrupted ? 'interrupted' : run.status;
  return `${run.runId}  ${terminalText(run.workflow)}  ${status}${took}  started ${new Date(run.startedAt).toISOString()}`;
}
