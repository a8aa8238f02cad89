// Cost guards in the plugin: on by default, a capsule's `requires` enforced before any
// child (real temp dirs, with and without `git init`), and the smoke run before an authoring grant
// (a capsule failing its smoke run must not take the grant). Real engine, sandbox, catalog and
// run store on disk, real rc.8 Sessions; only the DSH subagent transport is scripted.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '@deepseek-ai/dsh-session';
import type { HostAgent } from '@wf/dsh-adapter';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/index.js';
import type { ToolDefinition } from '../src/plugin/host-context.js';
import { Manager } from '../src/plugin/manage.js';
import { createTestHost } from './helpers/host.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-guards-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Guarded {
  readonly tools: Map<string, ToolDefinition>;
  readonly commands: Map<string, (inv: unknown) => Promise<{ kind: string; text?: string }>>;
  readonly parent: HostAgent;
  readonly session: Session;
  readonly starts: string[];
  readonly approvals: string[];
  unload(): Promise<void>;
}

/** A host-shaped context whose parent agent really appends its follow-ups to its session. */
function host(config: Record<string, unknown> = {}, withQuestions = false): Guarded {
  const starts: string[] = [];
  const approvals: string[] = [];
  const h = createTestHost({
    cwd: dir,
    config,
    hostTools: ['read', 'grep', 'bash'],
    capabilities: { outputSchema: true, toolFilter: true },
    parentExtra: (session) => ({
      followup(message) {
        session.append('user/message', message as never, { surfaceOp: 'append' });
      },
      inject() {},
    }),
    services: {
      approval: {
        async request(r: { reason?: string }) {
          approvals.push(r.reason ?? '');
          return 'rejected';
        },
      },
      sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: dir }) },
      // rc.8's service keeps its one provider in `provider`; an answerer is registered here
      userQuestions: withQuestions
        ? { provider: { ask: async () => ({ answers: [] }) }, ask: async () => ({ answers: [] }) }
        : undefined,
    },
    onStart: (request) => starts.push(String(request.label)),
    appendAnswer: false,
    linkParent: false,
  });
  return {
    tools: h.tools,
    commands: h.commands as unknown as Guarded['commands'],
    parent: h.parent,
    session: h.parentSession,
    starts,
    approvals,
    unload: h.unload,
  };
}

const exec = (h: Guarded) => ({ agent: h.parent, signal: new AbortController().signal });
const runTool = (h: Guarded, input: Record<string, unknown>) => {
  const t = h.tools.get('run_workflow');
  if (!t) throw new Error('run_workflow is not registered');
  return t.execute(input, exec(h)) as Promise<{
    runId: string;
    status: string;
    result?: unknown;
    error?: { code: string; message: string };
  }>;
};

const MANIFEST = {
  name: 'needs-repo',
  description: 'a workflow that needs a git repository',
  phases: ['work'],
  readOnly: false,
  maxAgents: 2,
  maxConcurrency: 1,
  patterns: ['fan-out-and-synthesize'],
};
const SOURCE = `async function run(wf, args) {
  const r = await wf.runAgent({ name: 'worker', prompt: 'do it' });
  return r ? r.finalText : null;
}`;

/** Saves a capsule with `requires` in the project catalog, as `wf save` would. */
function saveCapsule(requires: Record<string, unknown>, name = 'needs-repo') {
  const root = join(dir, '.dsh', 'workflows');
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, `${name}.workflow.json`),
    JSON.stringify({
      format: 'dsh.workflow',
      version: 1,
      workflowApiVersion: 1,
      minDshVersion: '0.1.0-rc.8',
      manifest: { ...MANIFEST, name },
      source: SOURCE,
      requires,
    }),
  );
}

describe('cost guards are on by default in DSH', () => {
  it('config defaults: 1,000,000 tokens, 30 min per run, 10 min and 200 model calls per child', () => {
    const parsed = parseConfig(undefined);
    expect(parsed.ok && parsed.config).toMatchObject({
      tokenBudget: 1_000_000,
      wallMs: 1_800_000,
      childWallMs: 600_000,
      maxChildModelCalls: 200,
    });
    const off = parseConfig({ tokenBudget: 0, wallMs: 0, childWallMs: 0, maxChildModelCalls: 0 });
    expect(off.ok).toBe(true);
    const bad = parseConfig({ tokenBudget: -1, childWallMs: 1.5 });
    expect(bad.ok ? [] : bad.issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['tokenBudget', 'childWallMs']),
    );
  });

  it('an inline run without a manifest budget gets the configured default budget', async () => {
    const h = host({ approvalMode: 'never', tokenBudget: 12_345 });
    const reply = await runTool(h, {
      source: 'async function run(wf) { return wf.budget.total; }',
      manifest: { ...MANIFEST, name: 'budget-probe' },
    });
    expect(reply.status).toBe('completed');
    expect(reply.result).toBe(12_345);
    await h.unload();
  });
});

describe('requires is enforced before any child starts', () => {
  it('git-repo: refused in a plain temp dir, runs after `git init`', async () => {
    saveCapsule({ environment: ['git-repo'] });
    const h = host({ approvalMode: 'never' });
    const refused = await runTool(h, { name: 'needs-repo' });
    expect(refused.status).toBe('failed');
    expect(refused.error?.code).toBe('WF_ENGINE_REQUIRES_GIT_REPO');
    expect(refused.error?.message).toContain(dir);
    expect(h.starts).toEqual([]);
    execFileSync('git', ['init', '-q', dir]);
    const ok = await runTool(h, { name: 'needs-repo' });
    expect(ok.status).toBe('completed');
    expect(ok.result).toBe('done: worker');
    expect(h.starts).toEqual(['worker']);
    await h.unload();
  });

  it('tools the calling agent cannot see, unrouted tiers and user interaction are refused by name', async () => {
    const h = host({ approvalMode: 'always', tiers: { fast: { model: 'small' } } });
    saveCapsule({ tools: ['bash', 'web_search'] }, 'needs-tools');
    const tools = await runTool(h, { name: 'needs-tools' });
    expect(tools.error?.code).toBe('WF_ENGINE_REQUIRES_TOOL');
    expect(tools.error?.message).toContain('"web_search"');
    expect(tools.error?.message).not.toContain('"bash"');
    saveCapsule({ modelTiers: ['fast', 'deep'] }, 'needs-deep');
    const tiers = await runTool(h, { name: 'needs-deep' });
    expect(tiers.error?.code).toBe('WF_ENGINE_REQUIRES_MODEL_TIER');
    expect(tiers.error?.message).toContain('"deep"');
    saveCapsule({ userInteraction: true }, 'needs-user');
    const user = await runTool(h, { name: 'needs-user' });
    expect(user.error?.code).toBe('WF_ENGINE_REQUIRES_USER_INTERACTION');
    expect(user.error?.message).toContain('no userQuestions service');
    // refused in preflight: nobody was asked to approve, no child started
    expect(h.approvals).toEqual([]);
    expect(h.starts).toEqual([]);
    await h.unload();
    const answered = host({ approvalMode: 'never' }, true);
    expect((await runTool(answered, { name: 'needs-user' })).status).toBe('completed');
    await answered.unload();
  });
});

describe('the smoke run before an authoring grant', () => {
  const FAILS_SMOKE = `async function run(wf, args) {
  const r = await wf.runAgent({ name: 'scout', prompt: 'look' });
  return r.structured.findings.length;
}`;
  const PASSES = `async function run(wf, args) {
  const r = await wf.runAgent({ name: 'scout', prompt: 'look' });
  return r ? 'ok' : 'no';
}`;
  const manifest = { ...MANIFEST, name: 'authored' };

  it('a capsule failing its smoke run does not take the grant; the next, passing one does', async () => {
    // generated-and-local: inline runs are asked for, unless a grant pre-approves them
    const h = host({ approvalMode: 'generated-and-local' });
    const create = h.commands.get('workflow');
    const handed = await create?.({
      agent: h.parent,
      rawInput: 'create count the findings',
      signal: new AbortController().signal,
    });
    expect(handed?.kind).toBe('success');

    // fails the smoke run (simulated children return no structured value): gated normally, and
    // the approval the test host answers "rejected" denies it before any child starts
    const first = await runTool(h, { source: FAILS_SMOKE, manifest });
    expect(h.approvals).toHaveLength(1);
    expect(first.status).toBe('denied');
    expect(h.starts).toEqual([]);

    // the grant is still there: a capsule that passes its smoke run takes it and runs unasked
    const second = await runTool(h, { source: PASSES, manifest });
    expect(h.approvals).toHaveLength(1);
    expect(second.status).toBe('completed');
    expect(second.result).toBe('ok');

    // one-shot: the grant is spent
    const third = await runTool(h, { source: PASSES, manifest });
    expect(h.approvals).toHaveLength(2);
    expect(third.status).toBe('denied');
    await h.unload();
  });

  it('smoke() itself refuses a capsule that cannot complete against instant agents', async () => {
    const manager = new Manager({} as never);
    expect(await manager.smoke(FAILS_SMOKE, manifest)).toBe(false);
    expect(await manager.smoke(PASSES, manifest)).toBe(true);
    expect(await manager.smoke(PASSES, { name: 'Bad Name' })).toBe(false);
  });
});
