// `wf save <runId> <name>`: turns a recorded run's workflow (its manifest and source snapshot) into
// a capsule in the catalog, with provenance pointing back at the run. Saves are create-only
// unless --replace (the catalog archives the old capsule); the capsule is validated before the
// catalog sees it, and the catalog validates it again.
import { readFileSync } from 'node:fs';
import { type CapsuleDraft, createCapsule, type WorkflowCapsule } from '@wf/bridge';
import { CatalogFsError } from '@wf/catalog-fs';
import { isRecord } from '@wf/report';
import { type CliContext, printJson, printLine } from './context.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { resolveRunTarget, storeError } from './store-error.js';
import { shippedWorkflows } from './shipped.js';
import { openProjectCatalog, openProjectStore } from './workspace.js';

/** The DSH release the capsules we write declare as their minimum (the pinned host). */
export const MIN_DSH_VERSION = '0.1.0-rc.8';

export function pluginVersion(): string {
  try {
    const pkg: unknown = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    );
    return isRecord(pkg) && typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The capsule's `inputs`: the built-in's, with the run's args as the first example. */
export function savedInputs(
  origin: { description: string; examples?: readonly unknown[] } | undefined,
  args: unknown,
): { inputs: { description: string; examples: unknown[] } } | undefined {
  const examples = origin?.examples ?? [];
  if (args === undefined || args === null || typeof args !== 'object') {
    return origin
      ? { inputs: { description: origin.description, examples: [...examples] } }
      : undefined;
  }
  const same = (e: unknown) => JSON.stringify(e) === JSON.stringify(args);
  return {
    inputs: {
      description: origin?.description ?? 'the args of the run this workflow was saved from',
      examples: [args, ...examples.filter((e) => !same(e))].slice(0, 8),
    },
  };
}

export async function saveCommand(
  ctx: CliContext,
  target: string,
  name: string,
  options: { scope?: string; replace?: boolean },
): Promise<ExitCode> {
  const scope = options.scope ?? 'project';
  if (scope !== 'project' && scope !== 'personal') {
    throw new CliError(
      'WF_CLI_USAGE',
      `--scope must be project or personal, got ${JSON.stringify(scope)}`,
    );
  }
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(name)) {
    throw new CliError('WF_CLI_USAGE', `${JSON.stringify(name)} is not a valid workflow name`, {
      hint: 'use kebab-case: a lowercase letter, then lowercase letters, digits and dashes (at most 64)',
    });
  }
  if (shippedWorkflows().some((b) => b.name === name)) {
    throw new CliError(
      'WF_CLI_NAME_TAKEN',
      `${name} is a built-in workflow name; a catalog entry by that name would never run`,
      {
        hint: 'pick another name',
      },
    );
  }
  const store = await openProjectStore(ctx);
  let start: {
    workflow: string;
    manifest: unknown;
    source?: string;
    trust: string;
    runId: string;
    args?: unknown;
  };
  try {
    const runId = await resolveRunTarget(store, target);
    let loaded: Awaited<ReturnType<typeof store.load>>;
    try {
      loaded = await store.load(runId);
    } catch (e) {
      throw CatalogFsError.is(e) ? storeError(e, runId) : e;
    }
    if (!loaded) {
      throw new CliError(
        'WF_CLI_RUN_CORRUPT',
        `run ${runId} has no start record, so there is no workflow to save`,
      );
    }
    start = loaded.start;
  } finally {
    await store.close();
  }
  if (start.trust === 'trusted-local' || start.source === undefined) {
    throw new CliError(
      'WF_CLI_USAGE',
      `run ${start.runId} ran a trusted-local module; there is no source snapshot to save`,
      {
        hint: 'trusted-local modules already live in the catalog as files',
      },
    );
  }
  const manifest = isRecord(start.manifest) ? start.manifest : {};
  // A run of a built-in keeps that capsule's intent, inputs and requirements.
  const origin = shippedWorkflows().find((b) => b.capsule.source === start.source)?.capsule;
  const draft = {
    minDshVersion: origin?.minDshVersion ?? MIN_DSH_VERSION,
    manifest: { ...manifest, name },
    source: start.source,
    ...(origin?.intent ? { intent: origin.intent } : {}),
    // The run's own args become the capsule's example, so `wf run <name>` runs it as it ran.
    ...(savedInputs(origin?.inputs, start.args) ?? {}),
    ...(origin?.requires ? { requires: origin.requires } : {}),
    provenance: {
      fromRunId: start.runId,
      fromWorkflowName: start.workflow,
      createdAt: new Date().toISOString(),
      dshVersion: 'none (saved by the wf command line)',
      pluginVersion: pluginVersion(),
    },
  } as unknown as CapsuleDraft;
  const built = createCapsule(draft);
  if (!built.ok) {
    const list = built.issues.slice(0, 6).map((i) => `${i.path || 'capsule'}: ${i.message}`);
    throw new CliError(
      'WF_CLI_WORKFLOW_INVALID',
      `run ${start.runId} does not make a valid capsule: ${list.join('; ')}`,
      {
        details: built.issues,
      },
    );
  }
  const capsule: WorkflowCapsule = built.capsule;
  const catalog = await openProjectCatalog(ctx);
  if (!catalog) throw new CliError('WF_CLI_INTERNAL', 'the workflow catalog cannot be opened');
  const saved = await catalog.save(name, capsule, { scope, replace: options.replace === true });
  if (!saved.ok) {
    const { code, message } = saved.error;
    if (code === 'WF_CATALOG_EXISTS') {
      throw new CliError(
        'WF_CLI_NAME_TAKEN',
        `a workflow named ${name} already exists in the ${scope} catalog`,
        {
          hint: 'pick another name, or pass --replace (the old capsule is archived and can be restored)',
        },
      );
    }
    if (code === 'WF_CATALOG_INVALID_NAME') throw new CliError('WF_CLI_USAGE', message);
    if (code === 'WF_CATALOG_INVALID_CAPSULE' || code === 'WF_CATALOG_TOO_LARGE')
      throw new CliError('WF_CLI_WORKFLOW_INVALID', message);
    throw new CliError('WF_CLI_INTERNAL', `saving ${name}: ${code}: ${message}`);
  }
  if (ctx.json) {
    printJson(ctx, {
      ok: true,
      name,
      scope,
      path: saved.entry.path,
      fromRunId: start.runId,
      ...(saved.archived ? { archived: saved.archived } : {}),
    });
  } else {
    printLine(
      ctx,
      `saved run ${start.runId} as ${name} (${scope}: ${saved.entry.path})${saved.archived ? `; the previous version is archived` : ''}`,
    );
    printLine(ctx, `  run it again with: wf run ${name}`);
  }
  return EXIT.ok;
}
