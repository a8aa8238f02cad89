// Run and catalog management shared by `workflow_manage` and `/workflow`, plus the one-shot
// authoring grant of `/workflow create`.
import { randomUUID } from 'node:crypto';
import { parseManifest, type RunSpan, runSpan } from '@wf/bridge';
import { type HostAgent, readSessionEvents } from '@wf/dsh-adapter';
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { type Failure, failure } from '@wf/errors';
import type { WorkflowService } from './service.js';
import { hostDshVersion } from './host-version.js';

export interface ManageInput {
  readonly action: string;
  readonly target?: string | undefined;
  readonly name?: string | undefined;
  readonly scope?: 'project' | 'personal' | undefined;
  readonly args?: unknown;
  readonly source?: string | undefined;
  readonly manifest?: Record<string, unknown> | undefined;
  readonly wait?: boolean | undefined;
  readonly keep?: number | undefined;
  readonly replace?: boolean | undefined;
}

export type ManageResult = { readonly ok: true; readonly value: unknown } | Failure;

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

const failed = (code: string, message: string): ManageResult => failure(code, message);

interface Grant {
  readonly messageId: string;
}

/** The authoring contract injected (as context, not as the user's words) for `/workflow create`. */
export function authoringContract(runTool: string): string {
  return [
    'Workflow authoring request. Author a workflow for the user message that follows, then run it.',
    `1. Scout with your own read tools only as much as needed. 2. Call \`${runTool}\` with \`source\` and \`manifest\` (not \`name\`).`,
    'The source is exactly one top-level `async function run(wf, args) { ... }` plus helper functions/consts; it acts only through wf (runAgent, spawnAgent, wait, parallel, pipeline, phase, synthesize, log, artifact). No imports, timers, network, filesystem, Date.now or Math.random side channels.',
    'The manifest has name (kebab-case), description, phases, readOnly, maxAgents, maxConcurrency and patterns (one or more of: fan-out-and-synthesize, adversarial-verification, classify-and-act, generate-and-filter, tournament, loop-until-done).',
    'This request is your approval to run the authored workflow once, if it passes the source contract and a smoke run.',
  ].join('\n');
}

export class Manager {
  private readonly grants = new WeakMap<HostAgent, Grant>();

  constructor(private readonly service: WorkflowService) {}

  /**
   * `/workflow create <request>`: the request goes in as a real user message (it shows in chat and
   * titles the session), the contract as separate context, and a one-shot grant is bound to that
   * message id.
   */
  handoff(
    agent: HostAgent,
    request: string,
  ): { ok: true; messageId: string } | { ok: false; message: string } {
    if (!agent.followup || !agent.inject)
      return { ok: false, message: 'this agent cannot take a handoff' };
    const contract = Object.freeze({
      id: randomUUID(),
      role: 'user' as const,
      content: Object.freeze([
        Object.freeze({ type: 'text', text: authoringContract(this.service.config.runToolName) }),
      ]),
      source: Object.freeze({ kind: 'plugin', plugin: 'wf-workflows', form: 'instructions' }),
    });
    const message = Object.freeze({
      id: randomUUID(),
      role: 'user' as const,
      content: Object.freeze([Object.freeze({ type: 'text', text: request })]),
      source: Object.freeze({ kind: 'user' }),
    });
    agent.inject(contract);
    agent.followup(message);
    this.grants.set(agent, { messageId: message.id });
    return { ok: true, messageId: message.id };
  }

  /**
   * Consumes the agent's grant for this inline run if the latest user message is the granted one
   * and the capsule passes the source contract and a smoke run; otherwise keeps it (a failed
   * attempt must not burn the grant) and the run is gated normally.
   */
  async consumeGrant(
    agent: HostAgent,
    input: { source?: string | undefined; manifest?: unknown; args?: unknown },
  ): Promise<boolean> {
    const grant = this.grants.get(agent);
    if (!grant || !input.source) return false;
    const users = readSessionEvents(agent.session).events.filter(
      (e) =>
        e.type === 'user/message' &&
        (e.data as { source?: { kind?: string } })?.source?.kind === 'user',
    );
    const last = users[users.length - 1]?.data as { id?: string } | undefined;
    if (last?.id !== grant.messageId) return false;
    if (!(await this.smoke(input.source, input.manifest, input.args))) return false;
    this.grants.delete(agent);
    return true;
  }

  /**
   * Source contract + a run against simulated agents with a short wall clock, with the args the
   * real run will get: a capsule that cannot even complete against instant agents is refused
   * before it can spend the grant.
   */
  async smoke(source: string, manifest: unknown, args: unknown = {}): Promise<boolean> {
    const parsed = parseManifest(manifest);
    if (!parsed.ok) return false;
    const engine = createEngine({ agents: createSimulatedAgents({}), limits: { wallMs: 5_000 } });
    try {
      const handle = await engine.start({
        workflow: { manifest: parsed.manifest, source },
        args: args ?? {},
        trust: 'capability-generated',
      });
      const done = await handle.done;
      return done.status === 'completed';
    } catch {
      return false;
    } finally {
      await engine.close();
    }
  }

  /**
   * `typed`: the user typed the verb (`/workflow rerun|resume-run|resume`), explicit intent that
   * counts as approval, as for `/workflow <name>` (approvalMode `always` still asks).
   */
  async manage(
    agent: HostAgent,
    input: ManageInput,
    signal: AbortSignal,
    options: { typed?: boolean } = {},
  ): Promise<ManageResult> {
    const s = this.service;
    const preApproved = options.typed === true;
    const view = (r: Awaited<ReturnType<WorkflowService['listRuns']>>[number], full = false) => {
      // The run's own recorded times (bridge runSpan), as the CLI prints them: a stored run's
      // snapshot, a run of this process its workflow-started and terminal events.
      const span = runSpan(r.stored || r.events.length === 0 ? r : { status: r.status }, r.events);
      return viewOf(r, span, full);
    };
    const viewOf = (
      r: Awaited<ReturnType<WorkflowService['listRuns']>>[number],
      span: RunSpan,
      full: boolean,
    ) => ({
      runId: r.runId,
      workflow: r.workflow,
      source: r.source,
      status: r.status,
      startedAt: new Date(span.startedAt ?? r.startedAt).toISOString(),
      ...(span.endedAt !== undefined && r.status !== 'running' && r.status !== 'paused'
        ? { endedAt: new Date(span.endedAt).toISOString() }
        : {}),
      ...(span.durationMs !== undefined && r.status !== 'running' && r.status !== 'paused'
        ? { durationMs: span.durationMs }
        : {}),
      ...(r.jobId ? { jobId: r.jobId } : {}),
      ...(r.resumedFrom
        ? {
            resumedFrom: {
              runId: r.resumedFrom.runId,
              at: new Date(r.resumedFrom.at).toISOString(),
            },
          }
        : {}),
      // a run the `wf` command line recorded: its results were made up, no model was called
      ...(r.simulated ? { simulated: true } : {}),
      ...(r.error ? { error: r.error } : {}),
      ...(full && r.result !== undefined ? { result: r.result } : {}),
      ...(full ? { events: r.events.length } : {}),
    });
    switch (input.action) {
      case 'list': {
        // The newest runs only (the run store's index), whatever the store holds; say so.
        const { runs, total } = await s.recentRuns(agent);
        return {
          ok: true,
          value: {
            runs: runs.map((r) => view(r)),
            ...(total > runs.length
              ? { total, note: `the ${runs.length} newest of ${total} runs` }
              : {}),
          },
        };
      }
      case 'show': {
        const f = await s.findRun(agent, input.target);
        if (!f.ok) return f;
        // `wait: true` blocks until an active run ends (or this call is cancelled)
        if (input.wait) await Promise.race([s.waitFor(f.run.runId), aborted(signal)]);
        return { ok: true, value: view(f.run, true) };
      }
      case 'events': {
        const f = await s.findRun(agent, input.target);
        if (!f.ok) return f;
        return {
          ok: true,
          value: {
            runId: f.run.runId,
            events: f.run.events
              .slice(-200)
              .map((e) => ({ seq: e.seq, type: e.type, data: e.data })),
          },
        };
      }
      case 'pause':
      case 'resume':
      case 'stop': {
        const f = await s.control(agent, input.action, input.target);
        return f.ok ? { ok: true, value: { runId: f.run.runId, action: input.action } } : f;
      }
      case 'rerun': {
        if (!input.target)
          return failed('WF_PLUGIN_INVALID_INPUT', 'rerun needs a target (run id or saved name)');
        const out = await s.rerun(agent, input.target, input.args, {
          agent,
          signal,
          preApproved,
          wait: input.wait ?? true,
        });
        return out.ok ? { ok: true, value: out.reply } : out;
      }
      case 'resume-run': {
        if (!input.target) return failed('WF_PLUGIN_INVALID_INPUT', 'resume-run needs a run id');
        const out = await s.resumeRun(agent, input.target, {
          agent,
          signal,
          preApproved,
          wait: input.wait ?? true,
        });
        return out.ok ? { ok: true, value: out.reply } : out;
      }
      case 'save': {
        if (!input.target || !input.name)
          return failed('WF_PLUGIN_INVALID_INPUT', 'save needs target (a run) and name');
        const out = await s.saveRun(agent, input.target, input.name, input.scope);
        return out.ok ? { ok: true, value: { saved: input.name, path: out.path } } : out;
      }
      case 'rename': {
        if (!input.target || !input.name)
          return failed('WF_PLUGIN_INVALID_INPUT', 'rename needs target and name');
        const c = await s.catalogOp(agent);
        if (!c.ok) return c;
        const out = await c.catalog.rename(
          input.target,
          input.name,
          input.scope ? { scope: input.scope } : {},
        );
        return out.ok
          ? { ok: true, value: { renamed: input.target, to: input.name } }
          : failed(out.error.code, out.error.message);
      }
      case 'delete': {
        if (!input.target) return failed('WF_PLUGIN_INVALID_INPUT', 'delete needs a target');
        // `scope` names the saved workflow explicitly; otherwise a target that is both is refused
        const run = input.scope ? undefined : await s.findRun(agent, input.target);
        const c = await s.catalogOp(agent);
        const saved = c.ok
          ? (await c.catalog.list()).entries.some((e) => e.name === input.target)
          : false;
        if (run?.ok && saved)
          return failed(
            'WF_PLUGIN_AMBIGUOUS',
            `"${input.target}" is both a run and a saved workflow; give the run id to delete the run, or scope to delete the saved workflow`,
          );
        if (run?.ok) {
          const out = await s.deleteRun(agent, input.target);
          return out.ok ? { ok: true, value: { deletedRun: out.runId } } : out;
        }
        if (!c.ok) return c;
        const out = await c.catalog.delete(input.target, input.scope ? { scope: input.scope } : {});
        return out.ok
          ? { ok: true, value: { deleted: input.target, archived: out.archived } }
          : failed(out.error.code, out.error.message);
      }
      case 'prune':
        return { ok: true, value: { pruned: await s.prune(agent, input.keep ?? 100) } };
      case 'report': {
        const out = await s.writeReport(agent, input.target);
        return out.ok
          ? { ok: true, value: { runId: out.runId, path: out.path, bytes: out.bytes } }
          : out;
      }
      case 'archived': {
        // Archived versions (replaced, renamed, deleted), newest first; `target` filters by name.
        const c = await s.catalogOp(agent);
        if (!c.ok) return c;
        const out = await c.catalog.archive({
          ...(input.target ? { name: input.target } : {}),
          ...(input.scope ? { scope: input.scope } : {}),
        });
        if (!out.ok) return failed(out.error.code, out.error.message);
        return {
          ok: true,
          value: {
            archived: out.entries.map((e) => ({
              id: e.id,
              name: e.name,
              scope: e.scope,
              archivedAt: e.archivedAt,
              valid: e.valid,
            })),
          },
        };
      }
      case 'restore': {
        if (!input.target)
          return failed(
            'WF_PLUGIN_INVALID_INPUT',
            'restore needs target: an archived version id (action "archived" lists them)',
          );
        const c = await s.catalogOp(agent);
        if (!c.ok) return c;
        const out = await c.catalog.restore(input.target, {
          ...(input.scope ? { scope: input.scope } : {}),
          ...(input.name ? { as: input.name } : {}),
          replace: input.replace === true,
        });
        return out.ok
          ? {
              ok: true,
              value: {
                restored: input.target,
                name: out.entry.name,
                scope: out.entry.scope,
                ...(out.archived ? { archived: out.archived } : {}),
              },
            }
          : failed(out.error.code, out.error.message);
      }
      case 'revise': {
        if (!input.target || !input.source)
          return failed(
            'WF_PLUGIN_INVALID_INPUT',
            'revise needs target (a saved workflow) and source',
          );
        const c = await s.catalogOp(agent);
        if (!c.ok) return c;
        const loaded = await c.catalog.load(input.target);
        if (!loaded.ok) return failed(loaded.error.code, loaded.error.message);
        if (!loaded.capsule)
          return failed('WF_PLUGIN_NOT_SAVEABLE', `"${input.target}" is not a capsule`);
        const name = input.name ?? input.target;
        const manifest = parseManifest({
          ...loaded.capsule.manifest,
          ...(input.manifest ?? {}),
          name,
        });
        if (!manifest.ok)
          return failed(
            'WF_PLUGIN_INVALID_INPUT',
            manifest.issues.map((i) => `${i.path}: ${i.message}`).join('; '),
          );
        const capsule = {
          ...loaded.capsule,
          manifest: manifest.manifest,
          source: input.source,
          provenance: {
            ...(loaded.capsule.provenance ?? {}),
            revisionOf: input.target,
            createdAt: new Date().toISOString(),
            dshVersion: hostDshVersion(),
            pluginVersion: '0.0.0',
          },
        };
        const replace = name === input.target ? true : input.replace === true;
        const out = await c.catalog.save(name, capsule, {
          scope: input.scope ?? loaded.entry.scope,
          replace,
        });
        return out.ok
          ? { ok: true, value: { revised: name, archived: out.archived ?? null } }
          : failed(out.error.code, out.error.message);
      }
      default:
        return failed('WF_PLUGIN_INVALID_INPUT', `unknown action "${input.action}"`);
    }
  }
}
