// Preflight of a capsule's `requires` (DESIGN.md section 4 step 2): the environment (a git
// repository around the workspace, worktree support), tools, MCP servers, skills, model tiers and
// user interaction, checked against facts the host reports before any child starts. Anything the
// host cannot confirm is refused (fail closed), each category with its own code.
import { lstat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { CapsuleRequires } from '@wf/bridge';
import type { EngineErrorCode } from '../errors.js';
import type { HostFacts } from '../types.js';

export interface RequirementMiss {
  readonly code: EngineErrorCode;
  readonly message: string;
}

/** The nearest directory at or above `dir` holding a `.git` entry (a directory or a worktree's file). */
export async function gitRootOf(dir: string): Promise<string | undefined> {
  let current = resolve(dir);
  for (;;) {
    try {
      const st = await lstat(join(current, '.git'));
      if (st.isDirectory() || st.isFile()) return current;
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

const list = (xs: readonly string[]) => xs.map((x) => `"${x}"`).join(', ');

/** The first unmet requirement, or undefined when every declared one is met. */
export async function checkRequirements(
  requires: CapsuleRequires | undefined,
  facts: HostFacts,
  context: { workflow: string; workspace: string | undefined; worktreeCapability: boolean },
): Promise<RequirementMiss | undefined> {
  if (!requires) return undefined;
  const who = `workflow ${context.workflow} requires`;
  const env = requires.environment ?? [];
  if (env.includes('git-repo') || env.includes('worktree-capable')) {
    const need = env.includes('git-repo') ? 'git-repo' : 'worktree-capable';
    if (context.workspace === undefined)
      return {
        code: 'WF_ENGINE_REQUIRES_GIT_REPO',
        message: `${who} environment "${need}", but the engine has no workspace directory to check; no child was started`,
      };
    if ((await gitRootOf(context.workspace)) === undefined)
      return {
        code: 'WF_ENGINE_REQUIRES_GIT_REPO',
        message: `${who} environment "${need}", but the workspace ${context.workspace} is not inside a git repository (no .git at or above it); run it in a repository or \`git init\` first; no child was started`,
      };
  }
  if (env.includes('worktree-capable') && !context.worktreeCapability)
    return {
      code: 'WF_ENGINE_REQUIRES_WORKTREE',
      message: `${who} environment "worktree-capable", but the agent provider cannot isolate children in worktrees (no worktree capability); no child was started`,
    };
  const missingOf = (wanted: readonly string[] | undefined, have: readonly string[] | undefined) =>
    (wanted ?? []).filter((x) => !have?.includes(x));
  const tools = missingOf(requires.tools, facts.tools);
  if (tools.length > 0)
    return {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      message: `${who} tool${tools.length > 1 ? 's' : ''} ${list(tools)}, which ${facts.tools ? 'the host does not offer its agents' : 'the host cannot confirm (it reports no tool list)'}; no child was started`,
    };
  const mcp = missingOf(requires.mcp, facts.mcpServers);
  if (mcp.length > 0)
    return {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      message: `${who} MCP server${mcp.length > 1 ? 's' : ''} ${list(mcp)}, which ${facts.mcpServers ? 'the host has not mounted' : 'the host cannot confirm (it reports no MCP servers)'}; no child was started`,
    };
  const skills = missingOf(requires.skills, facts.skills);
  if (skills.length > 0)
    return {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      message: `${who} skill${skills.length > 1 ? 's' : ''} ${list(skills)}, which ${facts.skills ? 'the host does not offer' : 'the host cannot confirm (it reports no skills)'}; no child was started`,
    };
  const tiers = missingOf(requires.modelTiers, facts.modelTiers);
  if (tiers.length > 0)
    return {
      code: 'WF_ENGINE_REQUIRES_MODEL_TIER',
      message: `${who} model tier${tiers.length > 1 ? 's' : ''} ${list(tiers)}, which ${facts.modelTiers ? `this deployment does not route (configured: ${facts.modelTiers.length > 0 ? list(facts.modelTiers) : 'none'})` : 'the host cannot confirm (it reports no tier routing)'}; no child was started`,
    };
  if (requires.userInteraction === true && facts.userInteraction !== true)
    return {
      code: 'WF_ENGINE_REQUIRES_USER_INTERACTION',
      message: `${who} user interaction, but nobody can answer questions here (${facts.userInteractionWhy ?? 'the host reports no question answerer'}); no child was started`,
    };
  return undefined;
}
