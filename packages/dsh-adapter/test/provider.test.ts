import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentRequest, createEngine } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createDshAgentProvider,
  createNativeRunEvents,
  DshAdapterError,
  type HostAgent,
  type HostSubagents,
  readSessionEvents,
} from '../src/index.js';
import { childTurn, FULL_CAPS, fakeAgent, fakeSubagents, fakeTools, store } from './helpers.js';

const OWN = ['workflow_list', 'run_workflow', 'workflow_manage'];

const task = (over: Partial<AgentRequest> = {}): AgentRequest => ({
  runId: 'run-1',
  taskId: 'task-1',
  kind: 'task',
  name: 'alpha',
  prompt: 'Investigate alpha',
  readOnly: false,
  ...over,
});

const completes =
  (text: string, extra: { structured?: unknown } = {}) =>
  (agent: ReturnType<typeof fakeAgent>) => {
    childTurn(agent.session, {
      text,
      usage: { inputTokens: 11, outputTokens: 7, cacheReadTokens: 2 },
    });
    return {
      output: [{ type: 'text' as const, text }],
      stopReason: 'completed' as const,
      ...extra,
    };
  };

describe('AgentProvider over ctx.subagents', () => {
  it('launches a child, reports usage from its session, and disposes exactly once', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('alpha done'));
    const parent = fakeAgent();
    const provider = createDshAgentProvider({
      subagents,
      tools: fakeTools(),
      parent,
      ownToolNames: OWN,
    });
    expect(provider.name).toBe('dsh:spawn');
    expect(provider.capabilities).toMatchObject({
      toolFilter: true,
      outputSchema: true,
      steer: true,
    });
    const handle = await provider.start(task(), new AbortController().signal);
    expect(handle.id).toBe(subagents.children[0]?.id);
    const result = await handle.result;
    expect(result).toMatchObject({
      status: 'completed',
      text: 'alpha done',
      usage: { inputTokens: 11, outputTokens: 7, cacheReadTokens: 2 },
    });
    await handle.dispose();
    await handle.dispose();
    expect(subagents.disposed).toEqual([handle.id]);
    const req = subagents.starts[0]?.request;
    expect(req?.label).toBe('alpha');
    expect(req?.prompt).toEqual([{ type: 'text', text: 'Investigate alpha' }]);
    expect(req?.parent).toBe(parent);
  });

  it('leaves maxTokens unset unless the task or a configured tier asks', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('ok'));
    const provider = createDshAgentProvider({
      subagents,
      parent: fakeAgent(),
      tiers: { deep: { model: 'deep-model' }, fast: { model: 'fast-model', maxTokens: 300_000 } },
    });
    const signal = new AbortController().signal;
    await (await provider.start(task(), signal)).result;
    await (await provider.start(task({ modelHint: 'deep' }), signal)).result;
    await (await provider.start(task({ modelHint: 'fast' }), signal)).result;
    await (
      await provider.start(task({ modelHint: 'deep', maxTokens: 1234, model: 'explicit' }), signal)
    ).result;
    const opts = subagents.starts.map((s) => s.request.agentOptions);
    expect(opts[0]).toBeUndefined();
    expect(opts[1]).toEqual({ model: 'deep-model' });
    expect(opts[2]).toEqual({ model: 'fast-model', maxTokens: 300_000 });
    expect(opts[3]).toEqual({ model: 'explicit', maxTokens: 1234 });
  });

  it('gives read-only children a fail-closed allow-list: trusted ∩ parent-visible, never our tools', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('ro'));
    const parent = fakeAgent();
    const tools = fakeTools(['bash', 'read', 'grep', 'write', 'run_workflow', 'workflow_list']);
    const provider = createDshAgentProvider({
      subagents,
      tools,
      parent,
      ownToolNames: OWN,
      readOnlyTools: ['read', 'grep', 'glob', 'workflow_list'],
    });
    await (await provider.start(task({ readOnly: true }), new AbortController().signal)).result;
    // glob is trusted but the parent cannot see it; workflow_list is ours: both are left out.
    expect(subagents.starts[0]?.request.toolFilter).toEqual({ allow: ['read', 'grep'] });
    expect(tools.scopes[0]).toBe(parent);
  });

  it('an unreadable tool list yields an empty allow-list, not an open child', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('ro'));
    const provider = createDshAgentProvider({
      subagents,
      tools: {
        schemas() {
          throw new Error('no scope');
        },
      },
      parent: fakeAgent(),
    });
    await (await provider.start(task({ readOnly: true }), new AbortController().signal)).result;
    expect(subagents.starts[0]?.request.toolFilter).toEqual({ allow: [] });
  });

  it('gives tool-free children (structured-output repairs) an empty allow-list', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('repair'));
    const provider = createDshAgentProvider({
      subagents,
      tools: fakeTools(['read', 'grep', 'write']),
      parent: fakeAgent(),
      ownToolNames: OWN,
    });
    const request = task({ kind: 'repair', readOnly: true, toolFree: true });
    await (await provider.start(request, new AbortController().signal)).result;
    expect(subagents.starts[0]?.request.toolFilter).toEqual({ allow: [] });
  });

  it('hides our own tools from write children so a workflow cannot recurse', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('w'));
    const provider = createDshAgentProvider({
      subagents,
      tools: fakeTools(['bash', 'write', 'run_workflow', 'workflow_list']),
      parent: fakeAgent(),
      ownToolNames: OWN,
    });
    await (await provider.start(task(), new AbortController().signal)).result;
    expect(subagents.starts[0]?.request.toolFilter).toEqual({
      deny: ['workflow_list', 'run_workflow'],
    });
  });

  it('refuses a read-only task before launch when the provider has no toolFilter', async () => {
    const subagents = fakeSubagents(
      { spawn: { ...FULL_CAPS, toolFilter: false } },
      completes('never'),
    );
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    expect(provider.capabilities.toolFilter).toBe(false);
    const err = await provider
      .start(task({ readOnly: true }), new AbortController().signal)
      .catch((e) => e);
    expect(DshAdapterError.is(err)).toBe(true);
    expect(err.code).toBe('WF_DSH_CAPABILITY_MISSING');
    expect(err.message).toMatch(/read-only.*toolFilter/);
    expect(subagents.starts).toHaveLength(0);
  });

  it('refuses structured output without the capability, unknown transports, and worktrees', async () => {
    const subagents = fakeSubagents(
      { spawn: { ...FULL_CAPS, outputSchema: false } },
      completes('never'),
    );
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    const signal = new AbortController().signal;
    const schema = { type: 'object', properties: { x: { type: 'string' } } };
    await expect(provider.start(task({ outputSchema: schema }), signal)).rejects.toMatchObject({
      code: 'WF_DSH_CAPABILITY_MISSING',
    });
    await expect(provider.start(task({ subagentType: 'acp' }), signal)).rejects.toMatchObject({
      code: 'WF_DSH_PROVIDER_MISSING',
    });
    await expect(provider.start(task({ isolation: 'worktree' }), signal)).rejects.toMatchObject({
      code: 'WF_DSH_CAPABILITY_MISSING',
    });
    expect(subagents.starts).toHaveLength(0);
  });

  it('wraps a refused start as WF_DSH_LAUNCH_FAILED with the host reason', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('x'), {
      rejectStart: new Error('depth limit exceeded'),
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    const err = await provider.start(task(), new AbortController().signal).catch((e) => e);
    expect(err).toMatchObject({ code: 'WF_DSH_LAUNCH_FAILED' });
    expect(err.message).toContain('depth limit exceeded');
  });

  it('returns the structured value, and fails a structured task that produced none', async () => {
    const schema = { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] };
    const ok = fakeSubagents(
      { spawn: FULL_CAPS },
      completes('', { structured: { word: 'PINEAPPLE' } }),
    );
    const p1 = createDshAgentProvider({ subagents: ok, parent: fakeAgent() });
    const r1 = await (await p1.start(task({ outputSchema: schema }), new AbortController().signal))
      .result;
    expect(r1).toMatchObject({ status: 'completed', structured: { word: 'PINEAPPLE' } });
    expect(ok.starts[0]?.request.outputSchema).toEqual(schema);
    const none = fakeSubagents({ spawn: FULL_CAPS }, completes('no tool call'));
    const p2 = createDshAgentProvider({ subagents: none, parent: fakeAgent() });
    const r2 = await (await p2.start(task({ outputSchema: schema }), new AbortController().signal))
      .result;
    expect(r2).toMatchObject({ status: 'failed', error: { code: 'WF_DSH_STRUCTURED_INVALID' } });
  });

  it('maps host stop reasons and infrastructure faults to data, never a rejection', async () => {
    const reasons = ['error', 'max-tokens', 'refusal', 'aborted'] as const;
    for (const stopReason of reasons) {
      const subagents = fakeSubagents({ spawn: FULL_CAPS }, () => ({
        output: [],
        stopReason,
        diagnostic: 'EMPTY_RESPONSE',
      }));
      const p = createDshAgentProvider({ subagents, parent: fakeAgent() });
      const r = await (await p.start(task(), new AbortController().signal)).result;
      expect(r.status).toBe(stopReason === 'aborted' ? 'stopped' : 'failed');
      if (stopReason !== 'aborted') expect(r.error?.message).toContain(stopReason);
    }
    const broken = fakeSubagents({ spawn: FULL_CAPS }, () => {
      throw new Error('driver crashed');
    });
    const p = createDshAgentProvider({ subagents: broken, parent: fakeAgent() });
    const r = await (await p.start(task(), new AbortController().signal)).result;
    expect(r).toMatchObject({ status: 'failed', error: { code: 'WF_DSH_CHILD_FAILED' } });
    expect(r.error?.message).toContain('driver crashed');
  });

  it('writes one agent-start and one agent-end per child into the parent session', async () => {
    const parent = fakeAgent();
    const native = createNativeRunEvents(parent.session);
    native.runStart('run-1', 'wf');
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, async (agent, req) => {
      if (req.label === 'slow') await gate;
      return completes(String(req.label))(agent);
    });
    const provider = createDshAgentProvider({ subagents, parent, nativeEvents: native });
    const signal = new AbortController().signal;
    const a = await provider.start(task({ name: 'fast', phase: 'fan' }), signal);
    const b = await provider.start(task({ name: 'slow', taskId: 'task-2', phase: 'fan' }), signal);
    await a.result;
    // a disposed-before-settling child still gets its end record, exactly once
    await b.dispose();
    release();
    await b.result;
    await a.dispose();
    native.runEnd('run-1', 'completed');
    const events = readSessionEvents(parent.session).events.filter((e) =>
      e.type.startsWith('tool-workflow/'),
    );
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['tool-workflow/run-start', { runId: 'run-1', name: 'wf' }],
      [
        'tool-workflow/agent-start',
        { runId: 'run-1', seq: 1, label: 'fast', phase: 'fan', childId: a.id },
      ],
      [
        'tool-workflow/agent-start',
        { runId: 'run-1', seq: 2, label: 'slow', phase: 'fan', childId: b.id },
      ],
      ['tool-workflow/agent-end', { runId: 'run-1', seq: 1, outcome: 'completed' }],
      ['tool-workflow/agent-end', { runId: 'run-1', seq: 2, outcome: 'cancelled' }],
      ['tool-workflow/run-end', { runId: 'run-1', stopReason: 'completed' }],
    ]);
  });

  it('stop cancels the child and its own signal; the launch signal does not reach a published child', async () => {
    let seenSignal: AbortSignal | undefined;
    let release!: () => void;
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, async (agent, req) => {
      seenSignal = req.signal;
      await new Promise<void>((r) => {
        release = r;
      });
      return completes('late')(agent);
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    const launch = new AbortController();
    const handle = await provider.start(task(), launch.signal);
    launch.abort(); // e.g. the launching tool step ended: a background child must survive it
    await Promise.resolve();
    expect(seenSignal?.aborted).toBe(false);
    handle.stop('user stop');
    expect(seenSignal?.aborted).toBe(true);
    expect(subagents.children[0]?.cancelled).toBe(1);
    release();
    expect(await handle.result).toMatchObject({ status: 'stopped' });
    await expect(handle.send?.('more')).rejects.toMatchObject({ code: 'WF_DSH_SEND_UNAVAILABLE' });
    await handle.dispose();
  });

  it('steers a running local child and exposes its latest text', async () => {
    let release!: () => void;
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, async (agent) => {
      childTurn(agent.session, { text: 'partial' });
      await new Promise<void>((r) => {
        release = r;
      });
      return completes('final')(agent);
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    const handle = await provider.start(task(), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 5));
    expect(handle.lastText?.()).toBe('partial');
    await handle.send?.('focus on tests');
    expect(subagents.children[0]?.steered).toEqual(['focus on tests']);
    release();
    await handle.result;
    expect(handle.lastText?.()).toBe('final');
    await handle.dispose();
  });

  it('a launch already aborted is refused without starting anything', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, completes('x'));
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent() });
    const c = new AbortController();
    c.abort();
    await expect(provider.start(task(), c.signal)).rejects.toMatchObject({
      code: 'WF_DSH_LAUNCH_FAILED',
    });
    expect(subagents.starts).toHaveLength(0);
  });
});

describe('verification evidence with a real git workspace', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-adapter-git-')));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  writeFileSync(join(dir, 'a.txt'), 'one\n');
  git('add', '.');
  git('commit', '-qm', 'init');

  it('accepts a write task whose successful write changed the workspace', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, (agent) => {
      writeFileSync(join(dir, 'a.txt'), 'two\n');
      childTurn(agent.session, {
        text: 'Changed a.txt from one to two.',
        calls: [
          { name: 'read', args: { path: 'a.txt' } },
          { name: 'write', args: { path: 'a.txt', content: 'two\n' } },
        ],
      });
      return {
        output: [{ type: 'text', text: 'Changed a.txt from one to two.' }],
        stopReason: 'completed',
      };
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent(), cwd: dir });
    const r = await (
      await provider.start(
        task({
          verification: {
            enforcement: 'hard',
            requiresMutation: true,
            requiredChangedPaths: ['a.txt'],
            requiredReadPaths: ['a.txt'],
          },
        }),
        new AbortController().signal,
      )
    ).result;
    expect(r.status).toBe('completed');
    expect(r.verification).toMatchObject({
      ok: true,
      changedPaths: ['a.txt'],
      readPaths: ['a.txt'],
    });
  });

  it('repairs at most twice with the same agent, then fails hard verification', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, (agent) => {
      agent.onFollowup = () => childTurn(agent.session, { text: 'I will do it next.' });
      childTurn(agent.session, {
        text: 'I will edit b.txt now.',
        calls: [{ name: 'bash', args: { cmd: 'true' } }],
      });
      return {
        output: [{ type: 'text', text: 'I will edit b.txt now.' }],
        stopReason: 'completed',
      };
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent(), cwd: dir });
    const r = await (
      await provider.start(
        task({ verification: { requiresMutation: true, rejectPreparatoryFinalText: true } }),
        new AbortController().signal,
      )
    ).result;
    expect(subagents.children[0]?.followups).toHaveLength(2);
    expect(subagents.children[0]?.followups[0]).toMatch(/did not pass verification/);
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('WF_DSH_VERIFICATION_FAILED');
    expect(r.verification?.reasons).toEqual([
      'the git workspace did not change',
      'final text announces work instead of reporting it',
    ]);
  });

  it('a repair that fixes the work passes; warn enforcement never repairs', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, (agent) => {
      agent.onFollowup = () => {
        writeFileSync(join(dir, 'c.txt'), 'made\n');
        childTurn(agent.session, {
          text: 'Created c.txt.',
          calls: [{ name: 'write', args: { path: 'c.txt' } }],
        });
      };
      childTurn(agent.session, { text: 'Nothing yet.' });
      return { output: [{ type: 'text', text: 'Nothing yet.' }], stopReason: 'completed' };
    });
    const provider = createDshAgentProvider({ subagents, parent: fakeAgent(), cwd: dir });
    const r = await (
      await provider.start(
        task({ verification: { requiresMutation: true, requiredChangedPaths: ['c.txt'] } }),
        new AbortController().signal,
      )
    ).result;
    expect(subagents.children[0]?.followups).toHaveLength(1);
    expect(r).toMatchObject({
      status: 'completed',
      text: 'Created c.txt.',
      verification: { ok: true },
    });

    const warn = fakeSubagents({ spawn: FULL_CAPS }, completes('short'));
    const p2 = createDshAgentProvider({ subagents: warn, parent: fakeAgent(), cwd: dir });
    const r2 = await (
      await p2.start(
        task({ verification: { enforcement: 'warn', minFinalTextChars: 100 } }),
        new AbortController().signal,
      )
    ).result;
    expect(warn.children[0]?.followups).toHaveLength(0);
    expect(r2).toMatchObject({ status: 'completed', verification: { ok: false } });
    expect(r2.verification?.reasons[0]).toMatch(/shorter than 100/);
  });

  it('outside git, a mutation claim is reported as unverifiable', async () => {
    const plain = realpathSync(mkdtempSync(join(tmpdir(), 'wf-adapter-plain-')));
    try {
      const subagents = fakeSubagents({ spawn: FULL_CAPS }, (agent) => {
        childTurn(agent.session, {
          text: 'wrote',
          calls: [{ name: 'write', args: { path: 'x' } }],
        });
        return { output: [{ type: 'text', text: 'wrote' }], stopReason: 'completed' };
      });
      const provider = createDshAgentProvider({ subagents, parent: fakeAgent(), cwd: plain });
      const r = await (
        await provider.start(
          task({ verification: { enforcement: 'warn', requiresMutation: true } }),
          new AbortController().signal,
        )
      ).result;
      expect(r.verification?.reasons).toEqual([
        'mutation evidence unavailable: the workspace is not a git repository',
      ]);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});

describe('the token budget over DSH children (agent/request gate)', () => {
  /** The host's agent/request waterfall: listeners in registration order, then the default. */
  function fakeHooks() {
    const listeners: ((p: { agent?: HostAgent }, next: () => Promise<unknown>) => unknown)[] = [];
    return {
      listeners,
      on(_event: 'agent/request', listener: (typeof listeners)[number]) {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
      async request(agent: HostAgent): Promise<unknown> {
        const chain = [...listeners];
        const next = async (): Promise<unknown> => {
          const l = chain.shift();
          return l ? l({ agent }, next) : { provider: 'test', model: 'test' };
        };
        return next();
      },
    };
  }

  it('gates a child request made before the host returned the child, and none of another agent', async () => {
    const hooks = fakeHooks();
    const parent = fakeAgent();
    const stranger = fakeAgent();
    let requests = 0;
    let firstBeforeStart = false;
    let started = false;
    // The child starts its first request inside the host's start(), before our code has its id;
    // its session names its parent, as DSH's subagent sessions do.
    const subagents: HostSubagents = {
      getProvider: (name) =>
        name === 'spawn'
          ? { name, capabilities: FULL_CAPS, inheritsParentContext: false }
          : undefined,
      async start() {
        const session = store.create(undefined, {
          meta: { cwd: '/tmp', parentSession: parent.session.id, origin: 'subagent' },
        });
        const agent = fakeAgent(session);
        const result = (async () => {
          for (let i = 0; i < 10; i += 1) {
            if (i === 0) firstBeforeStart = !started;
            await hooks.request(stranger); // another agent's request: never gated by this child
            try {
              await hooks.request(agent);
            } catch {
              return { output: [], stopReason: 'aborted' as const };
            }
            requests += 1;
            childTurn(agent.session, {
              text: `s${i}`,
              usage: { inputTokens: 50, outputTokens: 0 },
            });
          }
          return { output: [], stopReason: 'completed' as const };
        })();
        await new Promise((r) => setTimeout(r, 5));
        return { id: agent.id, localAgent: agent, result, dispose: async () => {} };
      },
    };
    const asked: number[] = [];
    const meter = {
      report: () => {},
      beforeCall: (usage: { inputTokens: number }) => {
        asked.push(usage.inputTokens);
        return asked.length === 3
          ? { code: 'WF_ENGINE_BUDGET_EXCEEDED', message: 'used up' }
          : undefined;
      },
    };
    const provider = createDshAgentProvider({ subagents, tools: fakeTools(), parent, hooks });
    const handle = await provider.start(task(), new AbortController().signal, meter);
    started = true;
    const result = await handle.result;
    await handle.dispose();
    expect(firstBeforeStart).toBe(true);
    expect(asked).toEqual([0, 50, 100]);
    expect(requests).toBe(2);
    expect(result).toMatchObject({
      status: 'failed',
      usage: { inputTokens: 100 },
      error: { code: 'WF_ENGINE_BUDGET_EXCEEDED', message: 'used up' },
    });
    expect(hooks.listeners).toHaveLength(0);
  });

  it('a looping child is charged as it spends and refused its next request at the budget', async () => {
    const hooks = fakeHooks();
    const parent = fakeAgent();
    let requests = 0;
    // A child that keeps calling a tool: every model request goes through the host's waterfall
    // (the gate), then its answer lands in the session with its usage (120 tokens).
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, async (agent) => {
      for (let i = 0; i < 50; i += 1) {
        try {
          await hooks.request(agent);
        } catch {
          return { output: [], stopReason: 'aborted' as const };
        }
        requests += 1;
        childTurn(agent.session, {
          text: `step ${i}`,
          usage: { inputTokens: 100, outputTokens: 20 },
        });
      }
      return {
        output: [{ type: 'text' as const, text: 'done' }],
        stopReason: 'completed' as const,
      };
    });
    const agents = createDshAgentProvider({ subagents, tools: fakeTools(), parent, hooks });
    expect(agents.estimateTokens?.('x'.repeat(400))).toBe(108);
    const engine = createEngine({ agents, limits: { tokenBudget: 1_000 } });
    const handle = await engine.start({
      workflow: {
        manifest: {
          name: 'loop',
          description: 'one looping child',
          phases: ['p'],
          readOnly: false,
          maxAgents: 2,
          maxConcurrency: 1,
          patterns: ['fan-out-and-synthesize'],
        },
        run: async (wf) => wf.runAgent({ name: 'looper', prompt: 'loop' }),
      },
      trust: 'trusted-local',
    });
    const done = await handle.done;
    await engine.close();
    expect(done).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_BUDGET_EXCEEDED' } });
    // It reserved the whole budget (its share at concurrency 1): calls 1 to 9 were within it
    // (9 x 120 = 1,080 once the 9th answered); the 10th request was never sent.
    expect(requests).toBe(9);
    expect(done.cost.tokenUsage.totalTokens).toBe(1_080);
    expect(hooks.listeners).toHaveLength(0);
  });
});
