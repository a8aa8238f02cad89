// Cost guards: the per-child model-call cap (a child stuck in a structured-output retry loop is
// stopped) and host feature detection for the engine's `requires` preflight, on real rc.8
// Sessions and the real rc.8 user-questions service.
import { Context } from '@deepseek-ai/cordis';
import { UserQuestionService } from '@deepseek-ai/dsh-user-questions';
import type { AgentRequest } from '@wf/engine';
import { describe, expect, it } from 'vitest';
import {
  countModelCalls,
  createDshAgentProvider,
  detectHostFacts,
  detectUserInteraction,
  type HostUserQuestions,
} from '../src/index.js';
import {
  childTurn,
  FULL_CAPS,
  fakeAgent,
  fakeSubagents,
  fakeTools,
  realSession,
} from './helpers.js';

const task = (over: Partial<AgentRequest> = {}): AgentRequest => ({
  runId: 'run-1',
  taskId: 'task-1',
  kind: 'task',
  name: 'looper',
  prompt: 'Return {"word": ...}',
  readOnly: false,
  ...over,
});

/** A child that retries structured_output for ever (one model call per round) until aborted. */
const retriesForever = async (
  agent: ReturnType<typeof fakeAgent>,
  request: { signal: AbortSignal },
) => {
  while (!request.signal.aborted) {
    childTurn(agent.session, {
      text: 'retrying',
      usage: { inputTokens: 100, outputTokens: 20 },
      calls: [{ name: 'structured_output', args: { wrong: true }, ok: false }],
    });
    await new Promise((r) => setTimeout(r, 2));
  }
  return { output: [], stopReason: 'aborted' as const };
};

describe('per-child model-call cap', () => {
  it('stops a child in a structured-output retry loop and fails it WF_DSH_CHILD_LIMIT', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, retriesForever);
    const provider = createDshAgentProvider({
      subagents,
      parent: fakeAgent(),
      maxChildModelCalls: 25,
      childWatchMs: 20,
    });
    const handle = await provider.start(
      task({ outputSchema: { type: 'object' } }),
      new AbortController().signal,
    );
    const result = await handle.result;
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('WF_DSH_CHILD_LIMIT');
    expect(result.error?.message).toContain('per-child cap of 25');
    const child = subagents.children[0];
    const calls = countModelCalls(child?.session);
    expect(calls).toBeGreaterThan(25);
    // stopped promptly: within a few watch intervals of crossing the cap, not minutes later
    expect(calls).toBeLessThan(25 + 200);
    expect(child?.cancelled).toBeGreaterThanOrEqual(1);
    expect(result.usage?.inputTokens).toBe(calls * 100);
    await handle.dispose();
  });

  it('without a cap (or under it) the child is left alone', async () => {
    const subagents = fakeSubagents({ spawn: FULL_CAPS }, (agent) => {
      for (let i = 0; i < 5; i += 1) childTurn(agent.session, { text: `step ${i}` });
      return { output: [{ type: 'text', text: 'done' }], stopReason: 'completed' };
    });
    const provider = createDshAgentProvider({
      subagents,
      parent: fakeAgent(),
      maxChildModelCalls: 5,
      childWatchMs: 10,
    });
    const result = await (await provider.start(task(), new AbortController().signal)).result;
    expect(result.status).toBe('completed');
  });
});

describe('host facts for requires', () => {
  it('tools are what the parent sees, minus our own tools and run_code', () => {
    const facts = detectHostFacts({
      tools: fakeTools(['read', 'bash', 'run_workflow', 'run_code']),
      parent: fakeAgent(),
      ownToolNames: ['run_workflow'],
      tiers: { deep: { model: 'deep-model' }, fast: {} },
    });
    expect(facts.tools).toEqual(['read', 'bash']);
    expect(facts.modelTiers).toEqual(['deep']);
  });

  it('an unreadable tool list is unknown, not empty', () => {
    const facts = detectHostFacts({
      tools: {
        schemas() {
          throw new Error('no scope');
        },
      },
      parent: fakeAgent(),
    });
    expect(facts.tools).toBeUndefined();
  });

  it('user interaction follows the real rc.8 userQuestions service: none until a provider registers', () => {
    const questions = new UserQuestionService(new Context()) as unknown as HostUserQuestions & {
      registerProvider(p: unknown): () => void;
    };
    const parent = fakeAgent();
    expect(detectUserInteraction(questions, parent)).toMatchObject({
      available: false,
      why: expect.stringContaining('no user-questions provider'),
    });
    const dispose = questions.registerProvider({ ask: async () => ({ answers: [] }) });
    expect(detectUserInteraction(questions, parent)).toEqual({ available: true });
    dispose();
    expect(detectUserInteraction(questions, parent).available).toBe(false);
    expect(detectUserInteraction(undefined, parent).why).toContain('no userQuestions service');
  });

  it('a subagent caller can never interact with the user', () => {
    const session = realSession();
    const child = fakeAgent(session);
    Object.defineProperty(child, 'session', {
      value: { ...session, header: { ...session.header, origin: 'subagent' } },
    });
    const questions = { provider: {}, ask: async () => ({ answers: [] }) };
    expect(detectUserInteraction(questions, child)).toMatchObject({
      available: false,
      why: expect.stringContaining('subagent'),
    });
  });
});
