// The journal in isolation: live calls are recorded in delivery order with the logical time;
// on replay, journaled answers are released strictly in recorded delivery order (whatever order
// the calls arrive in), live answers wait until the journal is drained, and divergence is named.
import { describe, expect, it } from 'vitest';
import type { EngineError, JournalEntry } from '../src/index.js';
import { Journal } from '../src/internal/journal.js';
import { createGate, createSemaphore } from '../src/internal/semaphore.js';

const ctx = (clock: number[]) => ({
  signal: new AbortController().signal,
  callId: 0,
  setNow: (t: number) => clock.push(t),
});
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('Journal', () => {
  it('records live calls with issue seq, delivery settleSeq and the delivery time', async () => {
    const recorded: JournalEntry[] = [];
    const j = new Journal({ record: (e) => recorded.push(e), onDiverged: () => {}, stallMs: 1000 });
    let releaseFirst!: (v: unknown) => void;
    const first = j.wrap('a', () => new Promise((r) => (releaseFirst = r)));
    const second = j.wrap('b', async () => 'b-value');
    const clock: number[] = [];
    const p1 = first({ n: 1 }, ctx(clock));
    const p2 = second({ n: 2 }, ctx(clock));
    await p2;
    releaseFirst('a-value');
    await p1;
    expect(recorded.map((e) => [e.seq, e.settleSeq, e.method])).toEqual([
      [2, 1, 'b'],
      [1, 2, 'a'],
    ]);
    expect(clock).toEqual(recorded.map((e) => e.settledAt));
  });

  it('replays journaled answers in recorded delivery order, whatever order calls arrive in', async () => {
    const journal: JournalEntry[] = [
      {
        seq: 1,
        settleSeq: 2,
        method: 'a',
        input: { n: 1 },
        outcome: { ok: true, value: 'A' },
        settledAt: 200,
      },
      {
        seq: 2,
        settleSeq: 1,
        method: 'b',
        input: { n: 2 },
        outcome: { ok: true, value: 'B' },
        settledAt: 100,
      },
    ];
    const replayed: number[] = [];
    const j = new Journal({
      record: () => {},
      replay: journal,
      onReplay: (e) => replayed.push(e.seq),
      onDiverged: () => {},
      stallMs: 1000,
    });
    const never = async () => {
      throw new Error('a journaled call must not run live');
    };
    const order: string[] = [];
    const clock: number[] = [];
    const a = j
      .wrap('a', never)({ n: 1 }, ctx(clock))
      .then((v) => order.push(`a=${v}`));
    await tick();
    expect(order).toEqual([]); // a was delivered second: it waits for b
    const b = j
      .wrap('b', never)({ n: 2 }, ctx(clock))
      .then((v) => order.push(`b=${v}`));
    await Promise.all([a, b]);
    expect(order).toEqual(['b=B', 'a=A']);
    expect(clock).toEqual([100, 200]);
    expect(replayed).toEqual([2, 1]);
    expect(j.replaying).toBe(false);
  });

  it('holds a live answer until the journal is drained, then records it after the journaled ones', async () => {
    // seq 3 was in flight when the recorded run died: not journaled, so it runs live
    const journal: JournalEntry[] = [
      {
        seq: 1,
        settleSeq: 1,
        method: 'a',
        input: {},
        outcome: { ok: true, value: 1 },
        settledAt: 10,
      },
      {
        seq: 2,
        settleSeq: 2,
        method: 'a',
        input: {},
        outcome: { ok: true, value: 2 },
        settledAt: 20,
      },
      {
        seq: 4,
        settleSeq: 3,
        method: 'a',
        input: {},
        outcome: { ok: false, error: { code: 'X', message: 'recorded failure' } },
        settledAt: 30,
      },
    ];
    const recorded: JournalEntry[] = [];
    let drained = 0;
    const j = new Journal({
      record: (e) => recorded.push(e),
      replay: journal,
      onDrained: () => {
        drained += 1;
      },
      onDiverged: () => {},
      stallMs: 1000,
    });
    const clock: number[] = [];
    const cap = j.wrap('a', async () => 'live');
    await cap({}, ctx(clock));
    await cap({}, ctx(clock));
    const events: string[] = [];
    const live = cap({}, ctx(clock)).then((v) => events.push(`live=${v}`));
    await tick();
    expect(events).toEqual([]); // held: seq 4 was delivered before it in the recorded run
    const last = cap({}, ctx(clock)).catch((e: { code: string; message: string }) =>
      events.push(`err=${e.code}`),
    );
    await Promise.all([live, last]);
    expect(events).toEqual(['err=X', 'live=live']);
    expect(drained).toBe(1);
    expect(recorded.map((e) => [e.seq, e.settleSeq])).toEqual([
      [1, 1],
      [2, 2],
      [4, 3],
      [3, 4],
    ]);
  });

  it('a call that differs from the journal diverges with a message naming both calls', async () => {
    let diverged: EngineError | undefined;
    const j = new Journal({
      record: () => {},
      replay: [
        {
          seq: 1,
          settleSeq: 1,
          method: 'runAgent',
          input: { name: 'x' },
          outcome: { ok: true, value: 1 },
          settledAt: 1,
        },
      ],
      onDiverged: (e) => {
        diverged = e;
      },
      stallMs: 1000,
    });
    const error = await j
      .wrap('runAgent', async () => 1)({ name: 'y' }, ctx([]))
      .catch((e: EngineError) => e);
    expect(error).toBe(diverged);
    expect(diverged?.code).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(diverged?.message).toContain('{"name":"x"}');
    expect(diverged?.message).toContain('{"name":"y"}');
  });

  it('a journaled call that never comes stalls replay into a divergence', async () => {
    let diverged: EngineError | undefined;
    const j = new Journal({
      record: () => {},
      replay: [
        {
          seq: 1,
          settleSeq: 2,
          method: 'a',
          input: {},
          outcome: { ok: true, value: 1 },
          settledAt: 1,
        },
        {
          seq: 2,
          settleSeq: 1,
          method: 'b',
          input: {},
          outcome: { ok: true, value: 2 },
          settledAt: 1,
        },
      ],
      onDiverged: (e) => {
        diverged = e;
      },
      stallMs: 30,
    });
    const waiting = j
      .wrap('a', async () => 1)({}, ctx([]))
      .catch((e: EngineError) => e.code);
    expect(await waiting).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(diverged?.message).toContain('never issued');
  });
});

describe('child-result records', () => {
  const child = (settleSeq: number, taskId: string): JournalEntry => ({
    seq: 0,
    settleSeq,
    method: 'child-result',
    input: { taskId, name: taskId },
    outcome: {
      ok: true,
      value: { value: { taskId, kind: 'task', text: 'done', status: 'completed' } },
    },
    settledAt: 5,
  });
  const call = (seq: number, settleSeq: number): JournalEntry => ({
    seq,
    settleSeq,
    method: 'a',
    input: {},
    outcome: { ok: true, value: seq },
    settledAt: 10 * seq,
  });

  it('a live child result takes the next settleSeq, stores its answer once and sets no clock', async () => {
    const recorded: JournalEntry[] = [];
    const j = new Journal({ record: (e) => recorded.push(e), onDiverged: () => {}, stallMs: 1000 });
    const clock: number[] = [];
    await j.wrap('a', async () => 'x')({}, ctx(clock));
    j.recordChild('task-1', 'quick', {
      taskId: 'task-1',
      kind: 'task',
      finalText: 'answer',
      text: 'answer',
    });
    await j.wrap('a', async () => 'y')({}, ctx(clock));
    expect(recorded.map((e) => [e.seq, e.settleSeq, e.method])).toEqual([
      [1, 1, 'a'],
      [0, 2, 'child-result'],
      [2, 3, 'a'],
    ]);
    expect(recorded[1]?.input).toEqual({ taskId: 'task-1', name: 'quick' });
    // compacted like any task result: `finalText` is put back when the entry is read
    expect(recorded[1]?.outcome).toEqual({
      ok: true,
      value: { value: { taskId: 'task-1', kind: 'task', text: 'answer' } },
    });
    expect(clock).toHaveLength(2);
  });

  it('replays child results in their place in the sequence without a waiting call, and re-records them', async () => {
    const recorded: JournalEntry[] = [];
    const replayed: string[] = [];
    let drained = false;
    const j = new Journal({
      record: (e, again) => {
        if (again) recorded.push(e);
      },
      // a leading record (no call before it) and one between two calls
      replay: [child(1, 'task-1'), call(1, 2), child(3, 'task-2'), call(2, 4)],
      onReplay: (e) => replayed.push(`${e.method}:${e.settleSeq}`),
      onDrained: () => {
        drained = true;
      },
      onDiverged: () => {},
      stallMs: 1000,
    });
    const cap = j.wrap('a', async () => 'live');
    expect(await cap({}, ctx([]))).toBe(1);
    expect(await cap({}, ctx([]))).toBe(2);
    await tick();
    expect(drained).toBe(true);
    expect(replayed).toEqual(['child-result:1', 'a:2', 'child-result:3', 'a:4']);
    expect(recorded.map((e) => e.settleSeq)).toEqual([1, 2, 3, 4]);
    expect(j.replaying).toBe(false);
  });

  it('a journal of child results only drains without any call', async () => {
    let drained = false;
    new Journal({
      record: () => {},
      replay: [child(1, 'task-1')],
      onDrained: () => {
        drained = true;
      },
      onDiverged: () => {},
      stallMs: 1000,
    });
    await tick();
    expect(drained).toBe(true);
  });

  it('a child settling live during replay is recorded after the journaled entries', async () => {
    const recorded: JournalEntry[] = [];
    const j = new Journal({
      record: (e) => recorded.push(e),
      replay: [call(1, 1)],
      onDiverged: () => {},
      stallMs: 1000,
    });
    j.recordChild('task-9', 'late', { taskId: 'task-9', kind: 'task', text: 't' });
    expect(recorded).toEqual([]);
    await j.wrap('a', async () => 'live')({}, ctx([]));
    expect(recorded.map((e) => [e.settleSeq, e.method])).toEqual([
      [1, 'a'],
      [2, 'child-result'],
    ]);
  });
});

describe('semaphore and pause gate', () => {
  it('grants FIFO up to capacity, releases once, and drops aborted waiters', async () => {
    const sem = createSemaphore(2);
    const r1 = await sem.acquire();
    await sem.acquire();
    const order: string[] = [];
    const ac = new AbortController();
    const cancelled = sem.acquire(ac.signal).catch(() => order.push('cancelled'));
    const third = sem.acquire().then((r) => {
      order.push('third');
      return r;
    });
    expect(sem.queued()).toBe(2);
    ac.abort();
    await cancelled;
    r1();
    r1(); // a second release is a no-op
    await third;
    expect(order).toEqual(['cancelled', 'third']);
    expect(sem.active()).toBe(2);
    expect(() => createSemaphore(0)).toThrow(RangeError);
  });

  it('the gate blocks while paused and releases every waiter on resume', async () => {
    const gate = createGate();
    gate.pause();
    let passed = 0;
    const waiters = [gate.wait(), gate.wait()].map((p) => p.then(() => (passed += 1)));
    await tick();
    expect(passed).toBe(0);
    gate.resume();
    await Promise.all(waiters);
    expect(passed).toBe(2);
  });
});
