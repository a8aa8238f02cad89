// The kit's identity, data form and failure shape, including copies from another realm.
import { runInNewContext } from 'node:vm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ERROR_BRAND, failure, isCodeTable, WfError } from '../src/index.js';

const CODES = { WF_DEMO_BROKEN: 'WF_DEMO_BROKEN' } as const;

class DemoError extends WfError<keyof typeof CODES> {
  static override readonly brand = '@wf/demo';
}
class OtherError extends WfError {
  static override readonly brand = '@wf/other';
}

/** A copy of `value` whose object and prototype come from a fresh realm (own symbols included). */
function realmCopy(value: object): object {
  const copy = runInNewContext('new Error("copy")') as object;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(value));
  return copy;
}

describe('WfError', () => {
  it('carries code, message, cause and hint, and names itself after its class', () => {
    const cause = new Error('disk');
    const e = new DemoError('WF_DEMO_BROKEN', 'it broke', { cause, hint: 'fix it' });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('DemoError');
    expect(e.code).toBe('WF_DEMO_BROKEN');
    expect(e.cause).toBe(cause);
    expect(e.hint).toBe('fix it');
    expect(e.toInfo()).toEqual({ code: 'WF_DEMO_BROKEN', message: 'it broke', hint: 'fix it' });
  });

  it('leaves absent cause and hint absent (not own properties set to undefined)', () => {
    const e = new DemoError('WF_DEMO_BROKEN', 'x');
    expect(Object.hasOwn(e, 'cause')).toBe(false);
    expect(Object.hasOwn(e, 'hint')).toBe(false);
    expect(e.toInfo()).toEqual({ code: 'WF_DEMO_BROKEN', message: 'x' });
  });

  it('recognises its own class across a realm copy where instanceof fails', () => {
    const copy = realmCopy(new DemoError('WF_DEMO_BROKEN', 'x'));
    expect(copy instanceof DemoError).toBe(false);
    expect(DemoError.is(copy)).toBe(true);
    expect(WfError.is(copy)).toBe(true);
    expect(OtherError.is(copy)).toBe(false);
  });

  it('is() tells subclasses apart and refuses look-alikes', () => {
    const other = new OtherError('WF_OTHER_X', 'y');
    expect(OtherError.is(other)).toBe(true);
    expect(DemoError.is(other)).toBe(false);
    expect(WfError.is(other)).toBe(true);
    expect(DemoError.is({ code: 'WF_DEMO_BROKEN', message: 'x' })).toBe(false);
    expect(DemoError.is(new Error('x'))).toBe(false);
    expect(DemoError.is(null)).toBe(false);
    expect(DemoError.is('WF_DEMO_BROKEN')).toBe(false);
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(DemoError.is(hostile)).toBe(false);
  });

  it('is() inherited from the kit narrows to the class it is called on, and refuses to run detached', () => {
    const value: unknown = new DemoError('WF_DEMO_BROKEN', 'x');
    if (!DemoError.is(value)) throw new Error('expected a DemoError');
    expectTypeOf(value).toEqualTypeOf<DemoError>();
    expectTypeOf(value.code).toEqualTypeOf<'WF_DEMO_BROKEN'>();
    // TypeScript already refuses a detached call (its `this` is void); plain JS gets a TypeError
    const detached = DemoError.is as unknown as (v: unknown) => boolean;
    expect(() => detached(value)).toThrow(/call it on the error class/);
  });

  it('keeps the brand out of JSON and structured clones (data crosses as code + message)', () => {
    const e = new DemoError('WF_DEMO_BROKEN', 'x');
    expect(Object.keys(e)).not.toContain(String(ERROR_BRAND));
    const cloned = structuredClone(e);
    expect(DemoError.is(cloned)).toBe(false);
    expect(JSON.parse(JSON.stringify(e.toInfo()))).toEqual({
      code: 'WF_DEMO_BROKEN',
      message: 'x',
    });
  });
});

describe('failure and code tables', () => {
  it('builds the one failure shape, hint only when given', () => {
    expect(failure('WF_DEMO_BROKEN', 'm')).toEqual({
      ok: false,
      error: { code: 'WF_DEMO_BROKEN', message: 'm' },
    });
    expect(failure('WF_DEMO_BROKEN', 'm', 'h').error).toEqual({
      code: 'WF_DEMO_BROKEN',
      message: 'm',
      hint: 'h',
    });
  });

  it('accepts CODE -> CODE tables with one prefix and refuses the rest', () => {
    expect(isCodeTable(CODES, 'WF_DEMO_')).toBe(true);
    expect(isCodeTable({ BROKEN: 'WF_DEMO_BROKEN' }, 'WF_DEMO_')).toBe(false);
    expect(isCodeTable({ WF_DEMO_A: 'a description' }, 'WF_DEMO_')).toBe(false);
    expect(isCodeTable({ WF_DEMO_A: 'WF_DEMO_A', WF_LINT_B: 'WF_SOURCE_LINT_B' }, 'WF_DEMO_')).toBe(
      false,
    );
    expect(isCodeTable({}, 'WF_DEMO_')).toBe(false);
  });
});
