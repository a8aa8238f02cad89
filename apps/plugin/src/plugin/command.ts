// The `/workflow` command. A human typing it is explicit intent, so named runs are not gated by
// the approval prompt (trusted-local files still need their own confirmation); free text that is
// not a subcommand or workflow name becomes a `/workflow create` handoff.
import type { HostAgent } from '@wf/dsh-adapter';
import type { CommandInvocation, CommandResult } from './host-context.js';
import type { Manager } from './manage.js';
import { interruptedOffer } from './interrupted.js';
import type { ReviewRunner } from './review.js';
import { runLine, runText } from './run-text.js';
import type { WorkflowService } from './service.js';
import type { RunReply } from './state.js';

export const COMMAND_HELP = `Usage: /workflow <subcommand>
  list                                  runnable workflows
  <name> [JSON args] [--wait]           run a workflow (background unless --wait)
  create <request>                      have this agent author and run a workflow
  review [base|sha <hash>] [--wait]     review the git diff with scoped-review
  runs | show [run] | events [run]      inspect runs (default: latest)
  report [run]                          write a run's HTML report into the project
  pause|resume|stop [run]               control a run (default: the active one); resume <run>
                                        also continues a run DSH interrupted [--wait]
  rerun <run|name> [JSON] [--wait]      run again; resume-run <run> replays a recorded run
  save <run> <name> [project|personal]  save a run's workflow; rename <from> <to>
  delete <run|name> [project|personal]  delete a run, or (with a scope) a saved workflow
  revise <name> <JSON {source, manifest?}>  replace a saved workflow's source
  archived [name] | restore <id> [name]  archived versions; restore one (optionally renamed)
  prune [--keep N]                      forget old finished runs`;

/** Splits `a b "c d" {"json": 1}` into words; a trailing JSON object/array stays one word. */
export function splitArgs(raw: string): {
  words: string[];
  json?: unknown;
  flags: Set<string>;
  keep?: number;
} {
  let text = raw.trim();
  const flags = new Set<string>();
  let keep: number | undefined;
  text = text.replace(/--keep\s+(\d+)/, (_m, n: string) => {
    keep = Number(n);
    return '';
  });
  text = text.replace(/(^|\s)--(wait|force|replace)(?=\s|$)/g, (_m, pre: string, f: string) => {
    flags.add(f);
    return pre;
  });
  let json: unknown;
  const brace = text.search(/[[{]/);
  if (brace >= 0) {
    try {
      json = JSON.parse(text.slice(brace));
      text = text.slice(0, brace);
    } catch {
      // not JSON: treat as words
    }
  }
  const words = [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
  return {
    words,
    ...(json !== undefined ? { json } : {}),
    flags,
    ...(keep !== undefined ? { keep } : {}),
  };
}

const ok = (value: unknown): CommandResult => ({
  kind: 'success',
  text: typeof value === 'string' ? value : JSON.stringify(value, null, 2),
});
const err = (text: string): CommandResult => ({ kind: 'error', text });

export function createCommandHandler(
  service: WorkflowService,
  manager: Manager,
  review: ReviewRunner,
) {
  const { commandName, maxResultChars } = service.config;
  const manage = async (
    agent: HostAgent,
    input: Parameters<Manager['manage']>[1],
    signal: AbortSignal,
  ) => {
    const out = await manager.manage(agent, input, signal);
    return out.ok ? ok(out.value) : err(`${out.error.code}: ${out.error.message}`);
  };
  /** A verb that starts a run: its reply as readable text (run-text.ts). */
  const launch = async (
    agent: HostAgent,
    input: Parameters<Manager['manage']>[1],
    signal: AbortSignal,
  ) => {
    const out = await manager.manage(agent, input, signal, { typed: true });
    if (!out.ok) return err(`${out.error.code}: ${out.error.message}`);
    return ok(runText(out.value as RunReply, maxResultChars));
  };
  return async (inv: CommandInvocation): Promise<CommandResult> => {
    const { agent, signal } = inv;
    const raw = inv.rawInput.trim();
    if (raw === '' || raw === 'help' || raw === '--help') return ok(COMMAND_HELP);
    const head = raw.split(/\s+/, 1)[0] ?? '';
    const rest = raw.slice(head.length).trim();
    const { words, json, flags, keep } = splitArgs(rest);
    const wait = flags.has('wait');
    switch (head) {
      case 'list': {
        const listing = await service.list(agent);
        if (listing.entries.length === 0) return ok('No workflows.');
        return ok(
          listing.entries
            .map(
              (e) =>
                `${e.name}  [${e.source}${e.valid ? '' : ', invalid'}]${e.description ? `  ${e.description}` : ''}`,
            )
            .join('\n'),
        );
      }
      case 'create': {
        if (!rest) return err('usage: /workflow create <request>');
        const h = manager.handoff(agent, rest);
        return h.ok ? ok(`Authoring a workflow for: ${rest}`) : err(h.message);
      }
      case 'review':
        return review.run(agent, words, { wait, signal });
      case 'runs':
        return ok(await runsText(service, agent, commandName));
      case 'show': {
        const found = await service.findRun(agent, words[0]);
        if (!found.ok) return err(`${found.error.code}: ${found.error.message}`);
        return ok(runText(service.replyFor(found.run), maxResultChars));
      }
      case 'report': {
        const out = await service.writeReport(agent, words[0]);
        if (!out.ok) return err(`${out.error.code}: ${out.error.message}`);
        return ok(
          `Wrote the report of run ${out.runId}: ${out.path}\n(self-contained HTML: open it in any browser; no script, no network)`,
        );
      }
      case 'resume': {
        // a run that is not active here (DSH exited under it, or it stopped) continues from its
        // journal; an active one is un-paused
        const target = words[0];
        if (target) {
          const found = await service.findRun(agent, target);
          if (found.ok && !service.isActive(found.run.runId))
            return launch(agent, { action: 'resume-run', target: found.run.runId, wait }, signal);
        }
        return manage(agent, { action: 'resume', target }, signal);
      }
      case 'events':
      case 'pause':
      case 'stop':
        return manage(agent, { action: head, target: words[0] }, signal);
      case 'rerun':
      case 'resume-run':
        return launch(agent, { action: head, target: words[0], args: json, wait }, signal);
      case 'save':
        return manage(
          agent,
          {
            action: 'save',
            target: words[0],
            name: words[1],
            scope: words[2] === 'personal' ? 'personal' : 'project',
          },
          signal,
        );
      case 'rename':
        return manage(agent, { action: 'rename', target: words[0], name: words[1] }, signal);
      case 'delete': {
        const scope = words[1] === 'project' || words[1] === 'personal' ? words[1] : undefined;
        return manage(agent, { action: 'delete', target: words[0], scope }, signal);
      }
      case 'prune':
        return manage(agent, { action: 'prune', keep }, signal);
      case 'archived':
        return manage(agent, { action: 'archived', target: words[0] }, signal);
      case 'restore':
        return manage(
          agent,
          { action: 'restore', target: words[0], name: words[1], replace: flags.has('replace') },
          signal,
        );
      case 'revise': {
        const body = (json ?? {}) as { source?: unknown; manifest?: unknown };
        return manage(
          agent,
          {
            action: 'revise',
            target: words[0],
            ...(typeof body.source === 'string' ? { source: body.source } : {}),
            ...(body.manifest && typeof body.manifest === 'object'
              ? { manifest: body.manifest as Record<string, unknown> }
              : {}),
          },
          signal,
        );
      }
      default: {
        const listing = await service.list(agent);
        if (!listing.entries.some((e) => e.name === head)) {
          const h = manager.handoff(agent, raw);
          return h.ok ? ok(`Authoring a workflow for: ${raw}`) : err(h.message);
        }
        const out = await service.start(
          { name: head, args: json ?? (words.length ? { question: words.join(' ') } : {}), wait },
          { agent, signal, preApproved: true },
        );
        if (!out.ok) return err(`${out.error.code}: ${out.error.message}`);
        return ok(runText(out.reply, maxResultChars));
      }
    }
  };
}

/** `/workflow runs`: one line per run, newest first, then the offer for interrupted runs. */
async function runsText(service: WorkflowService, agent: HostAgent, command: string) {
  const { runs, total } = await service.recentRuns(agent);
  if (runs.length === 0) return 'No runs yet.';
  const interrupted = service.interrupted(runs);
  const cut = new Set(interrupted.map((r) => r.runId));
  const lines = runs.map((r) => runLine({ ...r, interrupted: cut.has(r.runId) }));
  if (total > runs.length) lines.push(`(the ${runs.length} newest of ${total} runs)`);
  const offer = interruptedOffer(interrupted, command);
  return offer ? `${lines.join('\n')}\n\n${offer}` : lines.join('\n');
}
