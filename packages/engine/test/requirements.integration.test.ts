// `requires` in preflight on real directories (a temp dir with and without
// `git init`) and real host facts: each unmet requirement ends the run `failed` with its own code
// before approval and before any child starts.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '@wf/sandbox';
import {
  type ApprovalRequest,
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  type HostFacts,
  type StartOptions,
} from '../src/index.js';
import { manifest, runToEnd, shareSandbox } from './helpers.js';

let plain: string;
let repo: string;
beforeAll(async () => {
  const base = await mkdtemp(join(tmpdir(), 'wf-requires-'));
  plain = join(base, 'plain');
  repo = join(base, 'repo');
  await mkdir(plain);
  await mkdir(join(repo, 'pkg', 'deep'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  return () => rm(base, { recursive: true, force: true });
});
afterAll(() => {});

function setup(workspace: string | undefined, facts?: HostFacts, worktree = true) {
  const agents = createSimulatedAgents({ capabilities: { worktree } });
  const asked: ApprovalRequest[] = [];
  const engine = createEngine({
    agents,
    ...(workspace ? { workspace } : {}),
    ...(facts ? { hostFacts: () => facts } : {}),
    approver: {
      request: async (r) => {
        asked.push(r);
        return 'allowed';
      },
    },
  });
  return { agents, asked, engine };
}

const start = (requires: NonNullable<StartOptions['requires']>): StartOptions => ({
  workflow: {
    manifest: manifest({ name: 'needs-things' }),
    run: async (wf) => (await wf.runAgent({ name: 'only', prompt: 'p' }))?.status,
  },
  trust: 'trusted-local',
  requires,
});

async function refused(
  s: ReturnType<typeof setup>,
  requires: NonNullable<StartOptions['requires']>,
  code: string,
) {
  const { done } = await runToEnd(s.engine, start(requires));
  expect(done.status).toBe('failed');
  expect(done.error?.code).toBe(code);
  expect(s.agents.stats().started).toBe(0);
  expect(s.asked).toEqual([]);
  return done.error?.message ?? '';
}

async function passes(
  s: ReturnType<typeof setup>,
  requires: NonNullable<StartOptions['requires']>,
) {
  const { done } = await runToEnd(s.engine, start(requires));
  expect(done.error).toBeUndefined();
  expect(done.status).toBe('completed');
  expect(done.result).toBe('completed');
}

describe('requires in preflight', () => {
  it('git-repo: refused in a plain temp dir, accepted at and below a `git init` repository', async () => {
    const message = await refused(
      setup(plain),
      { environment: ['git-repo'] },
      'WF_ENGINE_REQUIRES_GIT_REPO',
    );
    expect(message).toContain(plain);
    expect(message).toContain('not inside a git repository');
    await passes(setup(repo), { environment: ['git-repo'] });
    await passes(setup(join(repo, 'pkg', 'deep')), { environment: ['git-repo'] });
    await refused(setup(undefined), { environment: ['git-repo'] }, 'WF_ENGINE_REQUIRES_GIT_REPO');
  });

  it('worktree-capable: needs a repository and a provider with the worktree capability', async () => {
    const message = await refused(
      setup(repo, undefined, false),
      { environment: ['worktree-capable'] },
      'WF_ENGINE_REQUIRES_WORKTREE',
    );
    expect(message).toContain('no worktree capability');
    await passes(setup(repo), { environment: ['worktree-capable'] });
    await refused(
      setup(plain),
      { environment: ['worktree-capable'] },
      'WF_ENGINE_REQUIRES_GIT_REPO',
    );
  });

  it('tools, MCP servers and skills: named when missing, refused when the host reports none', async () => {
    const facts: HostFacts = {
      tools: ['read', 'grep', 'bash'],
      mcpServers: ['github'],
      skills: [],
    };
    const message = await refused(
      setup(plain, facts),
      { tools: ['read', 'web_search', 'lsp'] },
      'WF_ENGINE_REQUIRES_TOOL',
    );
    expect(message).toContain('"web_search", "lsp"');
    expect(message).not.toContain('"read"');
    expect(
      await refused(setup(plain, facts), { mcp: ['jira'] }, 'WF_ENGINE_REQUIRES_TOOL'),
    ).toContain('MCP server "jira"');
    expect(
      await refused(setup(plain, facts), { skills: ['pdf'] }, 'WF_ENGINE_REQUIRES_TOOL'),
    ).toContain('skill "pdf"');
    expect(await refused(setup(plain), { tools: ['read'] }, 'WF_ENGINE_REQUIRES_TOOL')).toContain(
      'cannot confirm',
    );
    await passes(setup(plain, facts), { tools: ['read', 'bash'], mcp: ['github'] });
  });

  it('model tiers: refused when the deployment does not route the tier', async () => {
    const facts: HostFacts = { modelTiers: ['fast'] };
    const message = await refused(
      setup(plain, facts),
      { modelTiers: ['fast', 'deep'] },
      'WF_ENGINE_REQUIRES_MODEL_TIER',
    );
    expect(message).toContain('"deep"');
    expect(message).toContain('configured: "fast"');
    await passes(setup(plain, facts), { modelTiers: ['fast'] });
  });

  it('user interaction: refused with the host reason when nobody can answer', async () => {
    const message = await refused(
      setup(plain, {
        userInteraction: false,
        userInteractionWhy: 'headless: no question provider',
      }),
      { userInteraction: true },
      'WF_ENGINE_REQUIRES_USER_INTERACTION',
    );
    expect(message).toContain('headless: no question provider');
    await refused(
      setup(plain, {}),
      { userInteraction: true },
      'WF_ENGINE_REQUIRES_USER_INTERACTION',
    );
    await passes(setup(plain, { userInteraction: true }), { userInteraction: true });
    await passes(setup(plain, {}), { userInteraction: false });
  });

  it('a throwing fact source confirms nothing', async () => {
    const agents = createSimulatedAgents();
    const engine = createEngine({
      agents,
      hostFacts: () => {
        throw new Error('host exploded');
      },
    });
    const { done } = await runToEnd(engine, start({ tools: ['read'] }));
    expect(done.error?.code).toBe('WF_ENGINE_REQUIRES_TOOL');
    expect(agents.stats().started).toBe(0);
  });
});

describe('requires on resume', () => {
  let sandbox: Sandbox;
  shareSandbox((created) => {
    sandbox = created;
  });
  const SOURCE = `async function run(wf) {
  const a = await wf.runAgent({ name: 'first', prompt: 'p' });
  const b = await wf.runAgent({ name: 'second', prompt: 'p' });
  return [a && a.status, b && b.status];
}`;

  it('a resumed run checks the recorded requires again, on the host it resumes on', async () => {
    const recorder = createMemoryRecorder();
    const engineWith = (tools: string[], agents = createSimulatedAgents()) => ({
      agents,
      engine: createEngine({ agents, recorder, sandbox, hostFacts: () => ({ tools }) }),
    });
    const first = engineWith(['grep'], createSimulatedAgents({ delayMs: 60_000 }));
    const handle = await first.engine.start({
      workflow: { manifest: manifest({ name: 'needs-grep' }), source: SOURCE },
      trust: 'capability-generated',
      requires: { tools: ['grep'] },
    });
    for await (const e of handle.events) if (e.type === 'agent-started') handle.stop('Ctrl-C');
    expect((await handle.done).status).toBe('stopped');
    await first.engine.close();

    // The host lost the tool since: the resume is refused before any child starts.
    const lost = engineWith(['read']);
    const refusedDone = await (await lost.engine.resume(handle.runId)).done;
    expect(refusedDone.status).toBe('failed');
    expect(refusedDone.error?.code).toBe('WF_ENGINE_REQUIRES_TOOL');
    expect(refusedDone.error?.message).toContain('"grep"');
    expect(lost.agents.stats().started).toBe(0);
    await lost.engine.close();

    // Where the requirement still holds, the same resume runs.
    const held = engineWith(['grep', 'read']);
    const done = await (await held.engine.resume(handle.runId)).done;
    expect(done.status).toBe('completed');
    expect(held.agents.stats().started).toBeGreaterThan(0);
    await held.engine.close();
  });
});
