// Preflight of a capsule's `requires` (docs/design.md#one-run-end-to-end, step 2): the environment (a git
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
  // Named capabilities: what the capsule wants against what the host reports (absent: unknown).
  const named: readonly {
    code: EngineErrorCode;
    noun: string;
    wanted: readonly string[] | undefined;
    have: readonly string[] | undefined;
    notOffered: () => string;
    unknown: string;
  }[] = [
    {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      noun: 'tool',
      wanted: requires.tools,
      have: facts.tools,
      notOffered: () => 'the host does not offer its agents',
      unknown: 'it reports no tool list',
    },
    {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      noun: 'MCP server',
      wanted: requires.mcp,
      have: facts.mcpServers,
      notOffered: () => 'the host has not mounted',
      unknown: 'it reports no MCP servers',
    },
    {
      code: 'WF_ENGINE_REQUIRES_TOOL',
      noun: 'skill',
      wanted: requires.skills,
      have: facts.skills,
      notOffered: () => 'the host does not offer',
      unknown: 'it reports no skills',
    },
    {
      code: 'WF_ENGINE_REQUIRES_MODEL_TIER',
      noun: 'model tier',
      wanted: requires.modelTiers,
      have: facts.modelTiers,
      notOffered: () =>
        `this deployment does not route (configured: ${facts.modelTiers && facts.modelTiers.length > 0 ? list(facts.modelTiers) : 'none'})`,
      unknown: 'it reports no tier routing',
    },
  ];
  for (const n of named) {
    const missing = (n.wanted ?? []).filter((x) => !n.have?.includes(x));
    if (missing.length === 0) continue;
    return {
      code: n.code,
      message: `${who} ${n.noun}${missing.length > 1 ? 's' : ''} ${list(missing)}, which ${n.have ? n.notOffered() : `the host cannot confirm (${n.unknown})`}; no child was started`,
    };
  }
  if (requires.userInteraction === true && facts.userInteraction !== true)
    return {
      code: 'WF_ENGINE_REQUIRES_USER_INTERACTION',
      message: `${who} user interaction, but nobody can answer questions here (${facts.userInteractionWhy ?? 'the host reports no question answerer'}); no child was started`,
    };
  return undefined;
}
