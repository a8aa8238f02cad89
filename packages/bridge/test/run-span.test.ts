// runSpan: the one duration definition every surface uses. The snapshot's times win; without
// them the event log's start and terminal events, and for a run that ended without a terminal
// event (interrupted) its last recorded event, never "now".
import { describe, expect, it } from 'vitest';
import { isTerminalEventType, runSpan } from '../src/index.js';

const ev = (seq: number, type: string, time: number) => ({ seq, type, time, data: {} });

describe('runSpan', () => {
  it('reads started and ended from the snapshot', () => {
    expect(runSpan({ startedAt: 1000, endedAt: 3160, status: 'completed' })).toEqual({
      startedAt: 1000,
      endedAt: 3160,
      durationMs: 2160,
    });
  });

  it('falls back to the start and terminal events', () => {
    const events = [
      ev(1, 'workflow-started', 500),
      ev(2, 'agent-started', 600),
      ev(3, 'workflow-failed', 576),
    ];
    expect(runSpan({ status: 'failed' }, events)).toEqual({
      startedAt: 500,
      endedAt: 576,
      durationMs: 76,
    });
  });

  it('an interrupted run without endedAt ends at its last recorded event', () => {
    const events = [ev(1, 'workflow-started', 100), ev(2, 'agent-started', 900)];
    expect(runSpan({ startedAt: 100, status: 'interrupted' }, events).durationMs).toBe(800);
  });

  it('a running run has no duration yet; malformed events are skipped', () => {
    const events = [ev(1, 'workflow-started', 100), null, { type: 'x', time: 'soon' }];
    expect(runSpan({ startedAt: 100, status: 'running' }, events).durationMs).toBeUndefined();
  });
});

describe('isTerminalEventType', () => {
  it('is true for the three events that end a run, and for nothing else', () => {
    for (const type of ['workflow-completed', 'workflow-failed', 'workflow-stopped'])
      expect(isTerminalEventType(type), type).toBe(true);
    for (const type of ['workflow-started', 'workflow-paused', 'task-completed', '', 42, undefined])
      expect(isTerminalEventType(type), String(type)).toBe(false);
  });
});
