// Preflight: nothing launches before the manifest, the args, the source contract (invariant 4)
// and the approver have passed; a refused run ends here with its terminal status and error.
import { parseManifest, validateArgs, type WorkflowManifest } from '@wf/bridge';
import { EngineError } from '../errors.js';
import type { RunDone, StartOptions } from '../types.js';
import {
  checkSource,
  type EngineState,
  issuesText,
  type RunContext,
  summaryOf,
} from './engine-state.js';
import { checkRequirements } from './requirements.js';

/** How a refused run ends (passed to finishWith). */
export interface RefusedEnd {
  readonly status: RunDone['status'];
  readonly error: { code: string; message: string };
}

function refuse(
  status: RunDone['status'],
  code: string,
  message: string,
): { ok: false; end: RefusedEnd } {
  return { ok: false, end: { status, error: { code, message } } };
}

/** Checks one run's manifest, args, source and approval, in that order. */
export async function preflight(
  e: EngineState,
  ctx: RunContext,
  name: string,
  source: string | undefined,
): Promise<
  | {
      ok: true;
      manifest: WorkflowManifest;
      args: Extract<ReturnType<typeof validateArgs>, { ok: true }>;
    }
  | { ok: false; end: RefusedEnd }
> {
  const { runId, start } = ctx;
  const workflow = start.workflow;
  // Preflight: nothing launches before it passes.
  const parsed = parseManifest(workflow.manifest);
  if (!parsed.ok) {
    return refuse(
      'failed',
      'WF_ENGINE_INVALID_MANIFEST',
      `invalid manifest: ${issuesText(parsed.issues)}`,
    );
  }
  const manifest = parsed.manifest;
  const args = validateArgs(manifest, start.args ?? {});
  if (!args.ok) {
    return refuse(
      'failed',
      'WF_ENGINE_INVALID_ARGS',
      `invalid args for ${manifest.name}: ${issuesText(args.issues)}`,
    );
  }
  if (source !== undefined) {
    const checked = await checkSource(e, source);
    if (!checked.ok) {
      return refuse(
        'failed',
        'WF_ENGINE_SOURCE_REJECTED',
        `the source of ${manifest.name} breaks the workflow source contract: ${checked.errors
          .slice(0, 5)
          .map((d) => `${d.line ?? '?'}:${d.column ?? '?'} ${d.code} ${d.message}${hintOf(d)}`)
          .join('; ')}`,
      );
    }
  }
  // Requirements before approval: nobody is asked to approve a run that cannot work here.
  if (start.requires !== undefined) {
    let facts: Awaited<ReturnType<NonNullable<typeof e.options.hostFacts>>> = {};
    try {
      facts = (await e.options.hostFacts?.({ runId })) ?? {};
    } catch {
      facts = {}; // a failing fact source confirms nothing: every requirement on it is refused
    }
    const miss = await checkRequirements(start.requires, facts, {
      workflow: manifest.name,
      workspace: e.options.workspace,
      worktreeCapability: e.agents.capabilities.worktree === true,
    });
    if (miss) return refuse('failed', miss.code, miss.message);
  }
  if (e.options.approver) {
    const decision = await e.options.approver
      .request(
        {
          runId,
          workflow: name,
          trust: start.trust,
          summary: summaryOf(manifest, start.trust),
        },
        ctx.preflight.signal,
      )
      .catch(() => 'unavailable' as const);
    if (decision !== 'allowed') {
      return refuse(
        'denied',
        'WF_ENGINE_RUN_STOPPED',
        `approval ${decision}: no child was started`,
      );
    }
  }
  if (ctx.stopRequest !== undefined) {
    return refuse('stopped', 'WF_ENGINE_RUN_STOPPED', ctx.stopRequest);
  }

  return { ok: true, manifest, args };
}

export function checkStart(start: StartOptions): void {
  const bad = (message: string) => new EngineError('WF_ENGINE_INVALID_START', message);
  if (!start || typeof start !== 'object') throw bad('engine.start needs an options object');
  const w = start.workflow as unknown as
    | { manifest?: unknown; source?: unknown; run?: unknown }
    | undefined;
  if (!w || typeof w !== 'object' || !('manifest' in w))
    throw bad('engine.start: workflow must be { manifest, source } or { manifest, run }');
  const hasSource = typeof w.source === 'string';
  const hasRun = typeof w.run === 'function';
  if (hasSource === hasRun)
    throw bad('engine.start: workflow needs exactly one of source (string) or run (function)');
  if (!['trusted-package', 'capability-generated', 'trusted-local'].includes(start.trust)) {
    throw bad(
      `engine.start: trust must be trusted-package, capability-generated or trusted-local (got ${String(start.trust)})`,
    );
  }
  if (hasRun && start.trust !== 'trusted-local') {
    throw bad(
      `engine.start: a host function (workflow.run) is trusted-local code, but trust is ${start.trust}`,
    );
  }
  if (hasSource && start.trust === 'trusted-local') {
    throw bad(
      'engine.start: source-based workflows run sandboxed; trust trusted-local needs workflow.run',
    );
  }
  if (start.runId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(start.runId)) {
    throw bad(
      `engine.start: runId "${start.runId}" must be 1-128 characters of letters, digits, . _ -`,
    );
  }
}

/** The contract's repair hint, when the checker gave one: the author's next step. */
function hintOf(d: unknown): string {
  const hint = (d as { hint?: unknown }).hint;
  return typeof hint === 'string' && hint !== '' ? ` (hint: ${hint})` : '';
}
