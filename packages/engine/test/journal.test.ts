// The journal in isolation: live calls are recorded in delivery order with the logical time;
// on replay, journaled answers are released strictly in recorded delivery order (whatever order
// the calls arrive in), live answers wait until the journal is drained, and divergence is named.
import { describe, expect, it } from 'vitest';
import type { EngineError, JournalEntry } from '../src/index.js';
import { genuineAfterHalt } from '../src/internal/execute.js';
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

describe('wait answers that repeat a child-result record', () => {
  // A spawned child's TaskResult is journaled once: a wf.wait answer identical to the record
  // already journaled for that child stores a reference ({ childResultOf: taskId }) instead.
  const result = (taskId: string, text: string) => ({
    taskId,
    name: taskId,
    kind: 'task',
    status: 'completed',
    finalText: text,
    text,
  });
  const answer = (r: unknown) => ({ value: r, state: { spent: 3, reserved: 0, agents: 1 } });
  /** A journaled wf.wait answer for task-1: `value` is its TaskResult or a reference. */
  const waitEntry = (settleSeq: number, value: unknown): JournalEntry => ({
    seq: 1,
    settleSeq,
    method: 'wait',
    input: { taskId: 'task-1' },
    outcome: { ok: true, value: answer(value) },
    settledAt: 10,
  });

  it('a live wait answer identical to the record is stored as a reference; a different one in full', async () => {
    const recorded: JournalEntry[] = [];
    const j = new Journal({ record: (e) => recorded.push(e), onDiverged: () => {}, stallMs: 1000 });
    j.recordChild('task-1', 'task-1', result('task-1', 'answer'));
    const wait = j.wrap('wait', async (input) =>
      answer(
        (input as { taskId: string }).taskId === 'task-1'
          ? result('task-1', 'answer')
          : result('task-2', 'other'),
      ),
    );
    // the guest gets the full result, finalText included
    expect(await wait({ taskId: 'task-1' }, ctx([]))).toEqual(answer(result('task-1', 'answer')));
    await wait({ taskId: 'task-1' }, ctx([])); // waited twice: two references
    await wait({ taskId: 'task-2' }, ctx([])); // no record for it: in full
    // a result that differs from the record (another text) is stored in full
    j.recordChild('task-3', 'task-3', result('task-3', 'first'));
    await j.wrap('wait', async () => answer(result('task-3', 'second')))(
      { taskId: 'task-3' },
      ctx([]),
    );
    // only wait answers refer: runAgent's answer holds the same result in full
    await j.wrap('runAgent', async () => answer(result('task-1', 'answer')))({}, ctx([]));
    expect(
      recorded.map((e) => [e.method, (e.outcome as { value: { value: unknown } }).value.value]),
    ).toEqual([
      [
        'child-result',
        { taskId: 'task-1', name: 'task-1', kind: 'task', status: 'completed', text: 'answer' },
      ],
      ['wait', { childResultOf: 'task-1' }],
      ['wait', { childResultOf: 'task-1' }],
      [
        'wait',
        { taskId: 'task-2', name: 'task-2', kind: 'task', status: 'completed', text: 'other' },
      ],
      [
        'child-result',
        { taskId: 'task-3', name: 'task-3', kind: 'task', status: 'completed', text: 'first' },
      ],
      [
        'wait',
        { taskId: 'task-3', name: 'task-3', kind: 'task', status: 'completed', text: 'second' },
      ],
      [
        'runAgent',
        { taskId: 'task-1', name: 'task-1', kind: 'task', status: 'completed', text: 'answer' },
      ],
    ]);
    // the envelope keeps its keys in place
    expect(
      Object.keys((recorded[1]?.outcome as { value: object } | undefined)?.value ?? {}),
    ).toEqual(['value', 'state']);
  });

  it('after a halt, a wait answer stored as a reference is genuine when its record completed', () => {
    const wait = (value: unknown): JournalEntry => ({
      seq: 4,
      settleSeq: 9,
      method: 'wait',
      input: { taskId: 'task-1' },
      outcome: { ok: true, value: answer(value) },
      settledAt: 10,
    });
    const status = (s: string) => (id: string) => (id === 'task-1' ? s : undefined);
    expect(genuineAfterHalt(wait({ childResultOf: 'task-1' }), status('completed'))).toBe(true);
    expect(genuineAfterHalt(wait({ childResultOf: 'task-1' }), status('stopped'))).toBe(false);
    expect(genuineAfterHalt(wait({ childResultOf: 'task-2' }), status('completed'))).toBe(false);
    expect(genuineAfterHalt(wait(result('task-1', 'a')), status('stopped'))).toBe(true);
  });

  it("replay gives the guest the record's result for a reference, and the re-recorded journal refers again", async () => {
    const recorded: JournalEntry[] = [];
    const j = new Journal({
      record: (e) => recorded.push(e),
      replay: [
        {
          seq: 0,
          settleSeq: 1,
          method: 'child-result',
          input: { taskId: 'task-1', name: 'task-1' },
          outcome: {
            ok: true,
            value: {
              value: {
                taskId: 'task-1',
                name: 'task-1',
                kind: 'task',
                status: 'completed',
                text: 'answer',
              },
            },
          },
          settledAt: 5,
        },
        waitEntry(2, { childResultOf: 'task-1' }),
      ],
      onDiverged: () => {},
      stallMs: 1000,
    });
    const got = await j.wrap('wait', async () => 'live')({ taskId: 'task-1' }, ctx([]));
    expect(JSON.stringify(got)).toBe(JSON.stringify(answer(result('task-1', 'answer'))));
    expect(recorded.map((e) => (e.outcome as { value: { value: unknown } }).value.value)).toEqual([
      { taskId: 'task-1', name: 'task-1', kind: 'task', status: 'completed', text: 'answer' },
      { childResultOf: 'task-1' },
    ]);
  });

  it('a reference whose record is missing fails the resume with WF_ENGINE_REPLAY_DIVERGED, never an undefined answer', async () => {
    let diverged: EngineError | undefined;
    const j = new Journal({
      record: () => {},
      replay: [waitEntry(2, { childResultOf: 'task-1' })],
      onDiverged: (e) => {
        diverged = e;
      },
      stallMs: 1000,
    });
    expect(diverged?.code).toBe('WF_ENGINE_REPLAY_DIVERGED');
    expect(diverged?.message).toContain('refers to the child-result record of task-1');
    expect(j.replaying).toBe(false);
    // the run has failed; the journal no longer answers the call
    expect(await j.wrap('wait', async () => 'live')({ taskId: 'task-1' }, ctx([]))).toBe('live');
  });

  it('a journal written before references (full wait answers, no records) reads unchanged', async () => {
    const j = new Journal({
      record: () => {},
      replay: [
        // both finalText and text, as journals before the finalText compaction
        waitEntry(1, result('task-1', 'answer')),
      ],
      onDiverged: () => {},
      stallMs: 1000,
    });
    const got = await j.wrap('wait', async () => 'live')({ taskId: 'task-1' }, ctx([]));
    expect(JSON.stringify(got)).toBe(JSON.stringify(answer(result('task-1', 'answer'))));
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
