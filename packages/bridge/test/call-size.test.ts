// Host work per call is bounded (invariant 6): validateCall inspects at most CALL_LIMITS.maxNodes
// JSON values and refuses a larger input with WF_BRIDGE_CALL_TOO_LARGE; the dispatcher throws it
// as run control. Costs are compared in CPU time against JSON.parse of the same input.
import { describe, expect, it } from 'vitest';
import { CALL_LIMITS, createHostDispatch, validateCall } from '../src/index.js';

/** `count` objects of five JSON values each: `{ a: [1, { b: 2 }] }`. */
const objects = (count: number) =>
  JSON.parse(JSON.stringify(Array.from({ length: count }, () => ({ a: [1, { b: 2 }] }))));

function cpuMs(work: () => unknown): number {
  const t0 = process.cpuUsage();
  work();
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / 1000;
}

describe('call input size', () => {
  it('refuses an input over maxNodes with WF_BRIDGE_CALL_TOO_LARGE and one issue naming the bound', () => {
    const r = validateCall('workflow', { name: 'child', args: objects(5_000) });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe('WF_BRIDGE_CALL_TOO_LARGE');
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]?.message).toBe(
      `wf.workflow: input has more than ${CALL_LIMITS.maxNodes} JSON values (objects, arrays, strings, numbers...)`,
    );
  });

  it('accepts an input just under the bound, and other failures keep WF_BRIDGE_CALL_INVALID', () => {
    // 1 (input) + 1 (name) + 1 (args) + 3,999 x 5 = 19,998 values.
    expect(validateCall('workflow', { name: 'child', args: objects(3_999) }).ok).toBe(true);
    const bad = validateCall('workflow', { name: 'Child', args: 1 });
    expect(bad.ok === false && bad.code).toBeUndefined();
  });

  it('refuses a long array before listing its keys: far cheaper than parsing it', () => {
    const huge = JSON.parse(`[${'1,'.repeat(999_999)}1]`);
    const parse = cpuMs(() => JSON.parse(`[${'1,'.repeat(999_999)}1]`));
    const refuse = cpuMs(() => validateCall('log', { message: 'm', data: huge }));
    expect(validateCall('log', { message: 'm', data: huge })).toMatchObject({
      ok: false,
      code: 'WF_BRIDGE_CALL_TOO_LARGE',
    });
    // Walking a million values (the old path) costs many times the parse; refusing costs ~0.
    expect(refuse).toBeLessThan(Math.max(parse, 20));
  });

  it('the dispatcher throws the refusal as run control with its own code', async () => {
    const caps = createHostDispatch({ log: () => null });
    const ctx = { signal: new AbortController().signal, callId: 1, setNow() {} };
    await expect(caps.log({ message: 'm', data: objects(5_000) }, ctx)).rejects.toMatchObject({
      code: 'WF_BRIDGE_CALL_TOO_LARGE',
      data: { runControl: true, method: 'log' },
    });
  });
});
