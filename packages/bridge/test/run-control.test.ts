// The run-control marker has one definition: the host predicate and the text the prelude embeds
// must agree on every case, and the dispatch's marking must be what both read.
import { describe, expect, it } from 'vitest';
import {
  BridgeError,
  createGuestPrelude,
  isRunControlError,
  RUN_CONTROL_CHECK_SOURCE,
  withRunControlData,
} from '../src/index.js';

const guestForm = new Function(`return ${RUN_CONTROL_CHECK_SOURCE};`)() as (e: unknown) => boolean;

const marked = Object.assign(new Error('x'), { data: { runControl: true } });
const CASES: [string, unknown, boolean][] = [
  ['null', null, false],
  ['undefined', undefined, false],
  ['a string', 'WF_ENGINE_AGENT_LIMIT', false],
  ['a plain error', new Error('x'), false],
  ['data: null', { data: null }, false],
  ['data.runControl false', { data: { runControl: false } }, false],
  ['data.runControl "true"', { data: { runControl: 'true' } }, false],
  ['data as a string', { data: 'runControl' }, false],
  ['a marked error', marked, true],
  ['a marked plain object (guest-rebuilt)', { code: 'X', data: { runControl: true } }, true],
  ['a marked error from withRunControlData', withRunControlData(new Error('y'), true), true],
  ['withRunControlData(false)', withRunControlData(new Error('y'), false), false],
];

describe('the run-control marker', () => {
  it.each(CASES)('%s: host and guest forms agree', (_name, value, expected) => {
    expect(isRunControlError(value)).toBe(expected);
    expect(guestForm(value)).toBe(expected);
  });

  it('is the predicate the prelude embeds', () => {
    expect(createGuestPrelude()).toContain(RUN_CONTROL_CHECK_SOURCE);
  });

  it('withRunControlData keeps the extra data, enumerable, so the sandbox copies it', () => {
    const e = withRunControlData(new BridgeError('WF_BRIDGE_CALL_INVALID', 'bad'), true, {
      method: 'runAgent',
    });
    expect(e.data).toEqual({ method: 'runAgent', runControl: true });
    expect(Object.keys(e)).toContain('data');
    expect(JSON.parse(JSON.stringify({ data: e.data }))).toEqual({
      data: { method: 'runAgent', runControl: true },
    });
  });

  it('run data that spells a placeholder never reaches the prelude code', () => {
    const text = createGuestPrelude({ args: { a: '__IS_RUN_CONTROL__', b: '__INIT__' } });
    const wf = (new Function(`return ${text};`)() as (c: unknown, m: unknown) => { args: unknown })(
      {},
      {},
    );
    expect(wf.args).toEqual({ a: '__IS_RUN_CONTROL__', b: '__INIT__' });
  });
});
