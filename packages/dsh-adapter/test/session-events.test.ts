import { describe, expect, it } from 'vitest';
import { type HostSession, readSessionEvents, summarizeChildEvents } from '../src/index.js';
import { childTurn, realSession } from './helpers.js';

/** The later-DSH Session shape: `snapshotEvents()` and no `events` getter. */
function laterHostSession(real: ReturnType<typeof realSession>): HostSession {
  return {
    id: String(real.id),
    header: real.header,
    snapshotEvents: () => real.events,
    append: (...args: unknown[]) => (real.append as (...a: unknown[]) => unknown)(...args),
  };
}

describe('session events by feature detection', () => {
  it('reads rc.8 sessions through `events`', () => {
    const s = realSession();
    childTurn(s, { text: 'hello', usage: { inputTokens: 10, outputTokens: 5 } });
    const read = readSessionEvents(s);
    expect(read.accessor).toBe('events');
    expect(read.events.map((e) => e.type)).toContain('assistant/message');
  });

  it('reads later sessions through `snapshotEvents()` when `events` is gone', () => {
    const s = realSession();
    childTurn(s, { text: 'later host', usage: { inputTokens: 3, outputTokens: 4 } });
    const later = laterHostSession(s);
    expect('events' in later).toBe(false);
    const read = readSessionEvents(later);
    expect(read.accessor).toBe('snapshotEvents');
    expect(summarizeChildEvents(read).lastText).toBe('later host');
  });

  it('degrades to no events, never a throw, when neither accessor works', () => {
    const hostile = {
      id: 'x',
      header: {},
      get events(): never {
        throw new TypeError('agent.session.events is not iterable');
      },
      snapshotEvents: () => 42 as never,
      append() {},
    } satisfies HostSession;
    expect(readSessionEvents(hostile)).toEqual({ accessor: 'none', events: [] });
    expect(readSessionEvents(undefined).accessor).toBe('none');
    expect(summarizeChildEvents(readSessionEvents(hostile))).toMatchObject({
      usage: undefined,
      lastText: undefined,
      toolCalls: [],
    });
  });

  it('sums token usage over every assistant message and keeps the last non-empty text', () => {
    const s = realSession();
    childTurn(s, {
      text: 'first',
      usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 7 },
    });
    childTurn(s, { text: '   ', usage: { inputTokens: 50, outputTokens: 10 } });
    const summary = summarizeChildEvents(readSessionEvents(s));
    expect(summary.usage).toEqual({ inputTokens: 150, outputTokens: 30, cacheReadTokens: 7 });
    expect(summary.lastText).toBe('first');
    expect(summary.lastTurnEnd).toBe('completed');
  });

  it('pairs tool calls with their results and parses JSON arguments', () => {
    const s = realSession();
    childTurn(s, {
      text: 'done',
      calls: [
        { name: 'read', args: { path: 'src/a.ts' } },
        { name: 'write', args: { path: 'b.txt', content: 'x' }, ok: false },
      ],
    });
    const calls = summarizeChildEvents(readSessionEvents(s)).toolCalls;
    expect(calls.map((c) => [c.name, c.ok, c.completed])).toEqual([
      ['read', true, true],
      ['write', false, true],
    ]);
    expect(calls[0]?.arguments).toEqual({ path: 'src/a.ts' });
  });

  it('reports no usage when the adapter reported none', () => {
    const s = realSession();
    childTurn(s, { text: 'no usage' });
    expect(summarizeChildEvents(readSessionEvents(s)).usage).toBeUndefined();
  });
});
