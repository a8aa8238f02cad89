// Which workflow a tool call or command means: the listing the model sees, and a name or inline
// source turned into one resolved entry (the shared resolver in @wf/catalog-fs does the names).
import { parseManifest, type WorkflowManifest, withManifestDefaults } from '@wf/bridge';
import { type Catalog, defaultManifest, type WorkflowEntry } from '@wf/catalog-fs';
import type { HostAgent } from '@wf/dsh-adapter';
import type { Trust } from '@wf/engine';
import { catalogOf, resolverOf } from './project.js';
import {
  cwdOf,
  fail,
  type RunSource,
  type ServiceResult,
  type ServiceState,
  type StartInput,
} from './state.js';

export interface ListedWorkflow {
  name: string;
  source: RunSource;
  trust: Trust;
  description?: string;
  valid: boolean;
  error?: string;
}

/** Built-ins and patterns, then the catalog's project/personal entries (shadowed ones omitted). */
export async function listWorkflows(
  state: ServiceState,
  agent: HostAgent,
): Promise<{ entries: ListedWorkflow[]; truncated: boolean }> {
  const listing = await resolverOf(state, cwdOf(agent)).list();
  const entries: ListedWorkflow[] = [];
  for (const e of listing.entries) {
    if (e.shadowed) continue; // nothing shadows built-ins or patterns
    entries.push({
      name: e.name,
      source: e.source,
      trust: e.execution,
      ...(e.description === undefined ? {} : { description: e.description }),
      valid: e.valid,
      ...(e.error ? { error: e.error } : {}),
    });
  }
  return { entries, truncated: listing.truncated };
}

/** The manifest inline source (or a trusted-local module without one) runs under. */
export function inlineManifest(state: ServiceState): WorkflowManifest {
  return defaultManifest({
    name: 'inline-workflow',
    description: 'Inline workflow authored in the conversation',
    readOnly: false,
    maxAgents: state.config.maxAgents,
    maxConcurrency: state.config.maxConcurrency,
  });
}

export async function resolveNamed(
  state: ServiceState,
  cwd: string,
  name: string,
): Promise<ServiceResult<{ entry: WorkflowEntry }>> {
  const found = await resolverOf(state, cwd).resolve(name);
  if (found.ok) return found;
  if (found.error.code === 'WF_CATALOG_NOT_FOUND' && !(await catalogOf(state, cwd)))
    return fail('WF_PLUGIN_NOT_FOUND', found.error.message);
  return fail(found.error.code, found.error.message);
}

/** Resolves a tool/command input to a runnable workflow, validating an inline manifest. */
export async function resolveInput(
  state: ServiceState,
  agent: HostAgent,
  input: StartInput,
): Promise<ServiceResult<{ entry: WorkflowEntry }>> {
  const hasName = typeof input.name === 'string' && input.name !== '';
  const hasSource = typeof input.source === 'string' && input.source !== '';
  if (hasName === hasSource)
    return fail(
      'WF_PLUGIN_INVALID_INPUT',
      'give exactly one of `name` (a catalog workflow) or `source` (inline JS)',
    );
  if (hasName) return resolveNamed(state, cwdOf(agent), input.name as string);
  if (
    input.manifest !== undefined &&
    (typeof input.manifest !== 'object' || input.manifest === null)
  )
    return fail('WF_PLUGIN_INVALID_INPUT', '`manifest` must be a JSON object');
  // Every manifest field is optional inline: what the model left out comes from the defaults.
  const defaults = inlineManifest(state);
  const given = input.manifest as Record<string, unknown> | undefined;
  const parsed = parseManifest(given ? withManifestDefaults(given, defaults) : defaults, {
    limits: { maxAgents: state.config.maxAgents, maxConcurrency: state.config.maxConcurrency },
  });
  if (!parsed.ok)
    return fail(
      'WF_PLUGIN_INVALID_INPUT',
      `manifest: ${parsed.issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
    );
  const manifest = parsed.manifest;
  return {
    ok: true,
    entry: {
      name: manifest.name,
      source: 'inline',
      execution: 'capability-generated',
      capsule: { manifest, source: input.source as string },
      location: 'inline',
    },
  };
}

/** The project's catalog for the manage tool's catalog actions (save, rename, delete, ...). */
export async function catalogFor(
  state: ServiceState,
  agent: HostAgent,
): Promise<ServiceResult<{ catalog: Catalog }>> {
  const catalog = await catalogOf(state, cwdOf(agent));
  return catalog
    ? { ok: true, catalog }
    : fail('WF_PLUGIN_CATALOG_UNAVAILABLE', 'the catalog could not be opened');
}
