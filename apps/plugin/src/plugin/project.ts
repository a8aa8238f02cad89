// Per-project resources, opened once per working directory: the engine with its run router and
// the on-disk run store, the catalog, and the shared workflow resolver over both catalog roots.
// A run store that cannot open is an error (WF_PLUGIN_RUN_STORE_UNAVAILABLE), never a silent
// in-memory fallback: runs the user cannot find later would look recorded but vanish.
import { isAbsolute, resolve } from 'node:path';
import {
  type Catalog,
  createWorkflowResolver,
  openCatalog,
  openRunStore,
  personalCatalogRoot,
  type RunStore,
  type WorkflowResolver,
} from '@wf/catalog-fs';
import {
  createNativeRunEvents,
  dshEstimateTokens,
  type HostAgent,
  type NativeRunEvents,
} from '@wf/dsh-adapter';
import { createEngine } from '@wf/engine';
import { PluginError } from './errors.js';
import { createRunRouter } from './routing.js';
import type { Project, ServiceState } from './state.js';

/** The project's engine and run store; rejects with a PluginError when the store cannot open. */
export function projectOf(state: ServiceState, cwd: string): Promise<Project> {
  let p = state.projects.get(cwd);
  if (!p) {
    p = openProject(state, cwd);
    state.projects.set(cwd, p);
    // a store that failed to open is retried on the next call (the user may fix the directory)
    p.catch(() => {
      if (state.projects.get(cwd) === p) state.projects.delete(cwd);
    });
  }
  return p;
}

/**
 * Where `/workflow review` writes its packets. It is below `.dsh/`, which `wf.readFile` refuses,
 * so the engine is told to allow this one subtree (the run store and catalogs stay denied).
 */
export function reviewPacketsRoot(cwd: string): string {
  return resolve(cwd, '.dsh', 'review-packets');
}

/** The project and personal catalog roots for a workspace. */
function catalogRoots(state: ServiceState, cwd: string): { project: string; personal: string } {
  const { config } = state;
  const project = isAbsolute(config.projectDirectory)
    ? config.projectDirectory
    : resolve(cwd, config.projectDirectory);
  return { project, personal: config.personalDirectory || personalCatalogRoot(process.env) };
}

/** The catalog, or undefined when its roots cannot be opened (built-ins still resolve). */
export function catalogOf(state: ServiceState, cwd: string): Promise<Catalog | undefined> {
  let c = state.catalogs.get(cwd);
  if (!c) {
    c = openCatalog(catalogRoots(state, cwd)).catch(() => undefined);
    state.catalogs.set(cwd, c);
  }
  return c;
}

export function resolverOf(state: ServiceState, cwd: string): WorkflowResolver {
  let r = state.resolvers.get(cwd);
  if (!r) {
    r = createWorkflowResolver({ shipped: state.shipped, catalog: () => catalogOf(state, cwd) });
    state.resolvers.set(cwd, r);
  }
  return r;
}

export function nativeWriter(state: ServiceState, agent: HostAgent): NativeRunEvents {
  let w = state.writers.get(agent.session);
  if (!w) {
    w = createNativeRunEvents(agent.session);
    state.writers.set(agent.session, w);
  }
  return w;
}

async function openRunStoreOrFail(state: ServiceState, cwd: string): Promise<RunStore> {
  try {
    return await openRunStore({
      project: cwd,
      root: state.config.runDirectory,
      maxResultChars: state.config.maxResultChars,
    });
  } catch (error) {
    throw new PluginError(
      'WF_PLUGIN_RUN_STORE_UNAVAILABLE',
      `the workflow run store (${state.config.runDirectory} under ${cwd}) cannot be opened: ${error instanceof Error ? error.message : String(error)}; no run was started`,
      { cause: error },
    );
  }
}

async function openProject(state: ServiceState, cwd: string): Promise<Project> {
  const { config, ctx } = state;
  const transport = config.provider;
  const hostCaps = () => {
    try {
      return ctx.subagents.getProvider(transport)?.capabilities;
    } catch {
      return undefined;
    }
  };
  const router = createRunRouter(
    `dsh:${transport}`,
    () => {
      const c = hostCaps();
      return {
        toolFilter: c?.toolFilter === true,
        outputSchema: c?.outputSchema === true,
        steer: true,
        worktree: false,
        agentOptions: c?.agentOptions !== false,
      };
    },
    dshEstimateTokens,
  );
  const store = await openRunStoreOrFail(state, cwd);
  const engine = createEngine({
    agents: router.agents,
    approver: router.approver,
    recorder: store,
    workspace: cwd,
    // The run store and both catalogs stay out of wf.readFile's reach (WF_ENGINE_READ_PROTECTED).
    readFile: {
      deny: [resolve(cwd, config.runDirectory), ...Object.values(catalogRoots(state, cwd))],
      allow: [reviewPacketsRoot(cwd)],
    },
    limits: {
      maxAgents: config.maxAgents,
      maxConcurrency: config.maxConcurrency,
      deploymentConcurrency: config.deploymentConcurrency,
      wallMs: config.wallMs > 0 ? config.wallMs : null,
      tokenBudget: config.tokenBudget > 0 ? config.tokenBudget : null,
      childWallMs: config.childWallMs > 0 ? config.childWallMs : null,
    },
    hostFacts: router.hostFacts,
    resolveWorkflow: resolverOf(state, cwd).nested,
  });
  return { cwd, engine, router, store };
}
