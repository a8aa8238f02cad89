// The run records' schemas: a stored record fits, and a damaged one is refused at its first bad
// field, named by path, with what it should have been.
import { describe, expect, it } from 'vitest';
import {
  checkRecord,
  JOURNAL_ENTRY_SCHEMA,
  RUN_EVENT_SCHEMA,
  RUN_FINISH_RECORD_SCHEMA,
  RUN_START_RECORD_SCHEMA,
} from '../src/index.js';
import { listOf, optional, shape, text } from '../src/run-records.js';

const cost = {
  wallClockDurationMs: 5,
  agentsStarted: 1,
  agentsCompleted: 1,
  cacheHits: 0,
  tokenUsage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
  peakConcurrency: 1,
};
const start = {
  runId: 'run-1',
  workflow: 'review',
  trust: 'capability-generated',
  manifest: { name: 'review' },
  source: 'async function run() {}',
  args: {},
  seed: 1,
  startTime: 0,
  startedAt: 1,
  resumedFrom: { runId: 'run-0', at: 1 },
};

describe('checkRecord', () => {
  it('accepts what the engine records', () => {
    expect(checkRecord(RUN_START_RECORD_SCHEMA, start)).toBeUndefined();
    expect(
      checkRecord(RUN_EVENT_SCHEMA, { seq: 1, runId: 'r', type: 'x', time: 1, data: {} }),
    ).toBeUndefined();
    for (const outcome of [
      { ok: true, value: 1 },
      { ok: true },
      { ok: false, error: { code: 'C', message: 'm' } },
    ]) {
      expect(
        checkRecord(JOURNAL_ENTRY_SCHEMA, {
          seq: 1,
          settleSeq: 1,
          method: 'runAgent',
          input: {},
          outcome,
          settledAt: 0,
        }),
      ).toBeUndefined();
    }
    expect(
      checkRecord(RUN_FINISH_RECORD_SCHEMA, { status: 'completed', cost, endedAt: 2, result: 1 }),
    ).toBeUndefined();
  });

  it('names the first field that does not fit, with its path', () => {
    expect(checkRecord(RUN_START_RECORD_SCHEMA, { ...start, workflow: 42 })).toEqual({
      field: 'workflow',
      expected: 'a string',
    });
    expect(checkRecord(RUN_START_RECORD_SCHEMA, { ...start, trust: 'root' })).toMatchObject({
      field: 'trust',
      expected: expect.stringContaining('one of trusted-package'),
    });
    expect(
      checkRecord(RUN_START_RECORD_SCHEMA, { ...start, resumedFrom: { runId: 'x', at: 'now' } }),
    ).toEqual({ field: 'resumedFrom.at', expected: 'a finite number' });
    const { seed: _, ...noSeed } = start;
    expect(checkRecord(RUN_START_RECORD_SCHEMA, noSeed)).toEqual({
      field: 'seed',
      expected: 'present',
    });
    expect(
      checkRecord(RUN_FINISH_RECORD_SCHEMA, {
        status: 'completed',
        endedAt: 1,
        cost: { ...cost, tokenUsage: { ...cost.tokenUsage, totalTokens: '3' } },
      }),
    ).toEqual({ field: 'cost.tokenUsage.totalTokens', expected: 'a finite number' });
    expect(
      checkRecord(RUN_FINISH_RECORD_SCHEMA, { status: 'running', cost, endedAt: 1 }),
    ).toMatchObject({ field: 'status' });
    expect(
      checkRecord(JOURNAL_ENTRY_SCHEMA, {
        seq: 1,
        settleSeq: 1,
        method: 'x',
        outcome: { ok: false, error: { code: 1 } },
        settledAt: 0,
      }),
    ).toEqual({ field: 'outcome.error.code', expected: 'a string' });
    expect(checkRecord(RUN_EVENT_SCHEMA, [])).toEqual({ field: '', expected: 'a JSON object' });
    expect(checkRecord(RUN_EVENT_SCHEMA, null)).toEqual({ field: '', expected: 'a JSON object' });
  });

  it('builds further schemas: lists by index, optional fields only when present', () => {
    const schema = { items: listOf(shape({ name: text })), note: optional(text) };
    expect(checkRecord(schema, { items: [{ name: 'a' }] })).toBeUndefined();
    expect(checkRecord(schema, { items: [{ name: 'a' }, { name: 2 }] })).toEqual({
      field: 'items[1].name',
      expected: 'a string',
    });
    expect(checkRecord(schema, { items: [], note: null })).toEqual({
      field: 'note',
      expected: 'a string',
    });
    // An inherited property is not a field: a record is checked on its own keys only.
    expect(checkRecord({ toString: text }, {})).toEqual({ field: 'toString', expected: 'present' });
  });
});
