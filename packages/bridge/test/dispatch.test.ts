// createHostDispatch: every input validated before the handler runs (invariant 2); refusals are
// run-control errors carrying their issues; results come back in the state envelope.
import { describe, expect, it } from 'vitest';
import { createHostDispatch, HOST_CALLS, WF_HOST_CALLS } from '../src/index.js';

const ctx = { signal: new AbortController().signal, callId: 1, setNow: () => {} };

describe('createHostDispatch', () => {
  it('provides exactly the host calls WF_METHODS lists', () => {
    expect([...HOST_CALLS].sort()).toEqual([...WF_HOST_CALLS].sort());
  });

  it('refuses an invalid input before the handler sees it, as a run-control error naming the field', async () => {
    let calls = 0;
    const caps = createHostDispatch({
      runAgent: () => {
        calls += 1;
        return { ok: true };
      },
    });
    const error = await caps
      .runAgent({ name: 'x', prompt: 'p', modelHint: 'powerful' }, ctx)
      .catch((e: unknown) => e as { code: string; message: string; data: { runControl: boolean } });
    expect(calls).toBe(0);
    expect(error).toMatchObject({ code: 'WF_BRIDGE_CALL_INVALID', data: { runControl: true } });
    expect((error as { message: string }).message).toContain('modelHint');
    const extra = await caps
      .runAgent({ name: 'x', prompt: 'p', sneaky: 1 }, ctx)
      .catch((e: Error) => e.message);
    expect(extra).toContain('sneaky');
    expect(calls).toBe(0);
  });

  it('checks task_id evidence refs against the run, refuses missing handlers, wraps results', async () => {
    const caps = createHostDispatch(
      { spawnAgent: (input: { name: string }) => ({ taskId: 'task-2', name: input.name }) },
      { taskIds: new Set(['task-1']), state: () => ({ spent: 5, reserved: 1, agents: 2 }) },
    );
    await expect(
      caps.spawnAgent({ name: 'a', prompt: 'p', evidenceRefs: ['task_id:task-9'] }, ctx),
    ).rejects.toMatchObject({ code: 'WF_BRIDGE_CALL_INVALID' });
    await expect(
      caps.spawnAgent({ name: 'a', prompt: 'p', evidenceRefs: ['task_id:task-1'] }, ctx),
    ).resolves.toEqual({
      value: { taskId: 'task-2', name: 'a' },
      state: { spent: 5, reserved: 1, agents: 2 },
    });
    await expect(caps.wait({ taskId: 'task-1' }, ctx)).rejects.toMatchObject({
      code: 'WF_BRIDGE_UNKNOWN_METHOD',
      data: { runControl: true },
    });
  });
});
