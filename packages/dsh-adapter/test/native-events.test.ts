import { describe, expect, it } from 'vitest';
import {
  createNativeRunEvents,
  NATIVE_EVENT_FIELDS,
  nativeStopReason,
  readSessionEvents,
} from '../src/index.js';
import { realSession } from './helpers.js';

const workflowEvents = (s: ReturnType<typeof realSession>) =>
  readSessionEvents(s).events.filter((e) => e.type.startsWith('tool-workflow/'));

describe('native tool-workflow events (invariant 11)', () => {
  it('appends exactly the host schema fields, in a real rc.8 Session', () => {
    const s = realSession();
    const w = createNativeRunEvents(s);
    w.runStart('run-1', 'fan-out');
    const a = w.agentStart({ runId: 'run-1', label: 'alpha', phase: 'fan', childId: 'session-c1' });
    const b = w.agentStart({ runId: 'run-1', label: 'beta', childId: 'session-c2' });
    w.agentEnd('run-1', a, 'completed');
    w.agentEnd('run-1', b, 'failed');
    w.runEnd('run-1', 'completed');
    const events = workflowEvents(s);
    expect(events.map((e) => e.type)).toEqual([
      'tool-workflow/run-start',
      'tool-workflow/agent-start',
      'tool-workflow/agent-start',
      'tool-workflow/agent-end',
      'tool-workflow/agent-end',
      'tool-workflow/run-end',
    ]);
    for (const e of events) {
      const allowed: readonly string[] =
        NATIVE_EVENT_FIELDS[e.type as keyof typeof NATIVE_EVENT_FIELDS];
      for (const key of Object.keys(e.data as object)) expect(allowed).toContain(key);
    }
    expect(events[1]?.data).toEqual({
      runId: 'run-1',
      seq: 1,
      label: 'alpha',
      phase: 'fan',
      childId: 'session-c1',
    });
    expect(events[2]?.data).toEqual({
      runId: 'run-1',
      seq: 2,
      label: 'beta',
      childId: 'session-c2',
    });
    expect(events[5]?.data).toEqual({ runId: 'run-1', stopReason: 'completed' });
    expect(w.failures).toEqual([]);
  });

  it('closes open members as cancelled before run-end, and writes each edge once', () => {
    const s = realSession();
    const w = createNativeRunEvents(s);
    w.runStart('r', 'x');
    w.runStart('r', 'x');
    const a = w.agentStart({ runId: 'r', label: 'a', childId: 'c' });
    w.agentStart({ runId: 'r', label: 'b', childId: 'd' });
    w.agentEnd('r', a, 'completed');
    w.agentEnd('r', a, 'failed');
    w.runEnd('r', 'cancelled');
    w.runEnd('r', 'error');
    w.agentEnd('r', 2, 'completed');
    const data = workflowEvents(s).map((e) => [e.type.slice('tool-workflow/'.length), e.data]);
    expect(data).toEqual([
      ['run-start', { runId: 'r', name: 'x' }],
      ['agent-start', { runId: 'r', seq: 1, label: 'a', childId: 'c' }],
      ['agent-start', { runId: 'r', seq: 2, label: 'b', childId: 'd' }],
      ['agent-end', { runId: 'r', seq: 1, outcome: 'completed' }],
      ['agent-end', { runId: 'r', seq: 2, outcome: 'cancelled' }],
      ['run-end', { runId: 'r', stopReason: 'cancelled' }],
    ]);
  });

  it('records a refused append instead of throwing into the run', () => {
    const w = createNativeRunEvents({
      id: 's',
      header: {},
      append() {
        throw new Error('session is closed');
      },
    });
    expect(() => w.runStart('r', 'x')).not.toThrow();
    expect(w.failures).toEqual([{ type: 'tool-workflow/run-start', message: 'session is closed' }]);
  });

  it('maps run statuses onto the host stop reasons', () => {
    expect(nativeStopReason('completed')).toBe('completed');
    expect(nativeStopReason('stopped')).toBe('cancelled');
    expect(nativeStopReason('interrupted')).toBe('cancelled');
    expect(nativeStopReason('failed')).toBe('error');
  });
});
