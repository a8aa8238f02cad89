import type { ApprovalRequest } from '@wf/engine';
import { describe, expect, it } from 'vitest';
import {
  askUser,
  confirmWithUser,
  createDshApprover,
  type HostApproval,
  type HostApprovalOutcome,
  needsApproval,
  resolveSandboxMode,
  startJob,
} from '../src/index.js';
import { fakeAgent } from './helpers.js';

const req = (trust: ApprovalRequest['trust']): ApprovalRequest => ({
  runId: 'run-1',
  workflow: 'x',
  trust,
  summary: 'capability-generated workflow "x"; max 3 agents / 3 concurrent; read-only',
});

/** A host-shaped error, as DSH's UserQuestionError carries a string `code`. */
const hostError = (code: string, message: string) => Object.assign(new Error(message), { code });

const approvalAnswering = (outcome: HostApprovalOutcome) => {
  const calls: { toolName: string; reason?: string }[] = [];
  const approval: HostApproval = {
    async request(r) {
      calls.push({ toolName: r.toolName, ...(r.reason ? { reason: r.reason } : {}) });
      return outcome;
    },
  };
  return { approval, calls };
};

describe('approval gate', () => {
  it('needs a gate per mode, and never under danger-full-access', () => {
    expect(needsApproval('generated-and-local', 'trusted-package', 'workspace-write')).toBe(false);
    expect(needsApproval('generated-and-local', 'capability-generated', 'workspace-write')).toBe(
      true,
    );
    expect(needsApproval('generated-and-local', 'trusted-local', 'read-only')).toBe(true);
    expect(needsApproval('always', 'trusted-package', 'unavailable')).toBe(true);
    expect(needsApproval('never', 'capability-generated', 'workspace-write')).toBe(false);
    for (const mode of ['always', 'generated-and-local'] as const)
      expect(needsApproval(mode, 'capability-generated', 'danger-full-access')).toBe(false);
  });

  it('full access runs without asking (DSH would auto-reject there)', async () => {
    const { approval, calls } = approvalAnswering('rejected');
    const approver = createDshApprover({
      approval,
      sandboxPolicy: { resolve: () => ({ mode: 'danger-full-access', workspaceRoot: '/w' }) },
      agent: fakeAgent(),
      mode: 'always',
      toolName: 'run_workflow',
    });
    expect(await approver.request(req('capability-generated'), new AbortController().signal)).toBe(
      'allowed',
    );
    expect(calls).toEqual([]);
  });

  it('asks DSH otherwise, passing the summary, and maps each outcome', async () => {
    const expected = {
      'allowed-once': 'allowed',
      rejected: 'rejected',
      cancelled: 'cancelled',
      unavailable: 'unavailable',
    } as const;
    for (const [outcome, decision] of Object.entries(expected)) {
      const { approval, calls } = approvalAnswering(outcome as HostApprovalOutcome);
      const approver = createDshApprover({
        approval,
        sandboxPolicy: { resolve: () => ({ mode: 'workspace-write' }) },
        agent: fakeAgent(),
        mode: 'generated-and-local',
        toolName: 'run_workflow',
      });
      expect(
        await approver.request(req('capability-generated'), new AbortController().signal),
      ).toBe(decision);
      expect(calls).toEqual([
        { toolName: 'run_workflow', reason: req('capability-generated').summary },
      ]);
    }
  });

  it('reports unavailable when the service is missing or throws', async () => {
    const agent = fakeAgent();
    const none = createDshApprover({ approval: undefined, agent, mode: 'always', toolName: 't' });
    expect(await none.request(req('trusted-package'), new AbortController().signal)).toBe(
      'unavailable',
    );
    const throwing = createDshApprover({
      approval: {
        request: async () => {
          throw new Error('no open turn');
        },
      },
      agent,
      mode: 'always',
      toolName: 't',
    });
    expect(await throwing.request(req('trusted-package'), new AbortController().signal)).toBe(
      'unavailable',
    );
  });
});

describe('sandbox mode', () => {
  it('reads the mode for the agent session, or unavailable', () => {
    const agent = fakeAgent();
    let seen: unknown;
    const mode = resolveSandboxMode(
      {
        resolve: (r) => {
          seen = r?.session;
          return { mode: 'read-only', workspaceRoot: '/w' };
        },
      },
      agent,
    );
    expect(mode).toEqual({ mode: 'read-only', workspaceRoot: '/w' });
    expect(seen).toBe(agent.session);
    expect(resolveSandboxMode(undefined, agent)).toEqual({ mode: 'unavailable' });
    expect(resolveSandboxMode({ resolve: () => ({ mode: 'yolo' }) }, agent)).toEqual({
      mode: 'unavailable',
    });
    expect(
      resolveSandboxMode(
        {
          resolve: () => {
            throw new Error('x');
          },
        },
        agent,
      ),
    ).toEqual({ mode: 'unavailable' });
  });
});

describe('user questions', () => {
  it('headless NO_PROVIDER and a child caller are data, not throws', async () => {
    const noProvider = {
      ask: async () => Promise.reject(hostError('NO_PROVIDER', 'no user-questions provider')),
    };
    expect(await askUser(noProvider, { questions: [{ id: 'q', question: '?' }] })).toMatchObject({
      ok: false,
      error: { code: 'WF_DSH_SERVICE_UNAVAILABLE', message: 'no user-questions provider' },
    });
    const delegated = { ask: async () => Promise.reject(hostError('DELEGATED_CALLER', 'child')) };
    expect(await askUser(delegated, { questions: [{ id: 'q', question: '?' }] })).toMatchObject({
      ok: false,
      error: { code: 'WF_DSH_QUESTION_DELEGATED' },
    });
    expect(await askUser(undefined, { questions: [] })).toMatchObject({
      ok: false,
      error: { code: 'WF_DSH_SERVICE_UNAVAILABLE' },
    });
    const ac = new AbortController();
    ac.abort();
    const cancelled = await askUser(
      { ask: async () => Promise.reject(new Error('aborted')) },
      { questions: [{ id: 'q', question: '?' }], signal: ac.signal },
    );
    expect(cancelled).toMatchObject({ ok: false, error: { code: 'WF_DSH_QUESTION_CANCELLED' } });
  });

  it('confirms only on the yes label', async () => {
    const answering = (selected: string[]) => ({
      ask: async (r: { questions: { id: string; options?: { label: string }[] }[] }) => {
        expect(r.questions[0]?.options?.map((o) => o.label)).toEqual(['Run', 'Cancel']);
        return { answers: [{ id: r.questions[0]?.id ?? '', selected }] };
      },
    });
    const input = {
      id: 'c',
      header: 'Workflow',
      question: 'Run it?',
      yesLabel: 'Run',
      noLabel: 'Cancel',
    };
    expect(await confirmWithUser(answering(['Run']), input)).toEqual({ confirmed: true });
    expect(await confirmWithUser(answering(['Cancel']), input)).toMatchObject({
      confirmed: false,
      reason: 'declined',
    });
    expect(await confirmWithUser(undefined, input)).toMatchObject({
      confirmed: false,
      reason: 'unavailable',
    });
  });
});

describe('jobs', () => {
  it('hands the work to ctx.jobs and reports its id', async () => {
    let cancelled: string | undefined;
    let hooks: { cancel(r?: string): void; done: Promise<unknown> } | undefined;
    const owner = fakeAgent();
    let seenOwner: unknown;
    const out = startJob(
      {
        start(spec) {
          seenOwner = spec.owner;
          hooks = spec.run();
          return `${spec.kind}-1`;
        },
      },
      {
        kind: 'workflow',
        label: 'run x',
        owner,
        cancel: (r) => {
          cancelled = r;
        },
        done: Promise.resolve({ status: 'completed' }),
      },
    );
    expect(out).toEqual({ ok: true, jobId: 'workflow-1' });
    expect(seenOwner).toBe(owner);
    hooks?.cancel('killed by user');
    expect(cancelled).toBe('killed by user');
    await expect(hooks?.done).resolves.toEqual({ status: 'completed' });
  });

  it('reports unavailable or failed instead of throwing', () => {
    const spec = {
      kind: 'workflow',
      label: 'x',
      cancel() {},
      done: Promise.resolve({ status: 'completed' as const }),
    };
    expect(startJob(undefined, spec)).toMatchObject({
      ok: false,
      error: { code: 'WF_DSH_SERVICE_UNAVAILABLE', message: 'no jobs service is mounted' },
    });
    expect(
      startJob(
        {
          start() {
            throw new Error('unknown job kind');
          },
        },
        spec,
      ),
    ).toEqual({
      ok: false,
      error: { code: 'WF_DSH_SERVICE_FAILED', message: 'unknown job kind' },
    });
  });
});
