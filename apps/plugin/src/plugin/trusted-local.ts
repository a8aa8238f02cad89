// Trusted-local workflows (project/personal .ts/.mjs/.js modules with full Node authority): the
// user confirms first, then the module is imported, once per execution (invariant 10).
import type { TrustedLocalWorkflowEntry } from '@wf/catalog-fs';
import { confirmWithUser, type HostAgent } from '@wf/dsh-adapter';
import type { WorkflowInput } from '@wf/engine';
import { catalogOf } from './project.js';
import { cwdOf, fail, type ServiceResult, type ServiceState } from './state.js';
import { inlineManifest } from './workflows.js';

export async function confirmAndImport(
  state: ServiceState,
  entry: TrustedLocalWorkflowEntry,
  agent: HostAgent,
  signal: AbortSignal,
): Promise<ServiceResult<{ workflow: WorkflowInput }>> {
  const confirmed = await confirmWithUser(state.services().userQuestions, {
    id: 'workflow-trusted-local',
    header: 'Workflow',
    question: `Run trusted-local workflow "${entry.name}"?`,
    detail: 'It executes local JavaScript/TypeScript with your full authority (no sandbox).',
    yesLabel: 'Run',
    noLabel: 'Cancel',
    agent,
    signal,
  });
  if (!confirmed.confirmed)
    return fail(
      'WF_PLUGIN_CONFIRMATION_REQUIRED',
      confirmed.reason === 'declined'
        ? `trusted-local workflow "${entry.name}" was not confirmed; nothing ran`
        : `trusted-local workflow "${entry.name}" needs your confirmation, but nothing here can answer questions (${confirmed.message}); nothing ran. No option skips this confirmation (the file runs with your full authority): run it where DSH can ask, such as its web UI`,
    );
  // Looked up again after the question: the file may have changed or gone while the user read it.
  const catalog = await catalogOf(state, cwdOf(agent));
  const listing = catalog
    ? (await catalog.list()).entries.find((e) => e.name === entry.name)
    : undefined;
  if (!catalog || !listing)
    return fail('WF_PLUGIN_NOT_FOUND', `workflow "${entry.name}" disappeared`);
  const imported = await catalog.importTrustedLocal(listing, { confirmed: true });
  if (!imported.ok) return fail(imported.error.code, imported.error.message);
  const m = imported.module;
  const manifest = {
    ...inlineManifest(state),
    name: entry.name,
    ...(typeof m.manifest === 'object' && m.manifest !== null ? (m.manifest as object) : {}),
  };
  return {
    ok: true,
    workflow: { manifest, run: m.run as (wf: unknown, args: unknown) => unknown, name: entry.name },
  };
}
