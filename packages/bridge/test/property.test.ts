// Properties over generated input: the parsers never throw, every refusal names a path and a rule,
// and what they accept is stable (parsing a parsed capsule gives the same capsule).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseCapsule,
  parseManifest,
  validateArgs,
  validateCall,
  WF_HOST_CALLS,
} from '../src/index.js';

const fixture = JSON.parse(
  readFileSync(
    join(import.meta.dirname, 'fixtures', 'review-verify-synthesize.workflow.json'),
    'utf8',
  ),
) as Record<string, unknown>;
const parsed = parseCapsule(fixture);
if (!parsed.ok) throw new Error('fixture must parse');
const manifest = parsed.capsule.manifest;

function wellFormed(result: { ok: boolean; issues?: { path: string; message: string }[] }): void {
  if (result.ok) return;
  expect(result.issues?.length).toBeGreaterThan(0);
  expect(result.issues?.length).toBeLessThanOrEqual(100);
  for (const issue of result.issues ?? []) {
    expect(issue.path.length).toBeGreaterThan(0);
    expect(issue.message.length).toBeGreaterThan(issue.path.length);
  }
}

/** Replaces the value at a random path of a JSON document with another generated value. */
function mutate(doc: unknown, choices: number[], replacement: unknown): unknown {
  if (choices.length === 0 || doc === null || typeof doc !== 'object') return replacement;
  const [pick = 0, ...rest] = choices;
  if (Array.isArray(doc)) {
    if (doc.length === 0) return replacement;
    const i = pick % doc.length;
    return doc.map((x, j) => (j === i ? mutate(x, rest, replacement) : x));
  }
  const keys = Object.keys(doc);
  if (keys.length === 0) return replacement;
  const key = keys[pick % keys.length]!;
  return {
    ...(doc as object),
    [key]: mutate((doc as Record<string, unknown>)[key], rest, replacement),
  };
}

describe('parsers on generated input', () => {
  it('never throw on anything and report well-formed issues', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
        }),
        (value) => {
          wellFormed(parseCapsule(value));
          wellFormed(parseManifest(value));
          wellFormed(validateArgs(manifest, value));
          for (const method of WF_HOST_CALLS) wellFormed(validateCall(method, value));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a mutated capsule is either accepted and stable, or refused with paths', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.jsonValue({ maxDepth: 3 }),
        (choices, replacement) => {
          const doc = mutate(fixture, choices, replacement);
          const result = parseCapsule(doc);
          wellFormed(result);
          if (result.ok) {
            expect(parseCapsule(JSON.parse(JSON.stringify(result.capsule)))).toEqual(result);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('args that pass validation survive a JSON round trip unchanged', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const result = validateArgs({ ...manifest, inputSchema: { type: 'json' } }, value);
        if (result.ok) expect(JSON.parse(JSON.stringify(result.args))).toEqual(result.args);
        else wellFormed(result);
      }),
      { numRuns: 300 },
    );
  });
});

describe('hostile host objects', () => {
  it('a proxy that throws while inspected is reported, not rethrown', () => {
    const trap = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom');
        },
      },
    );
    expect(validateCall('artifact', { name: 'a', value: { nested: trap } })).toEqual({
      ok: false,
      issues: [
        {
          path: 'input.value.nested',
          message: 'wf.artifact: input.value.nested could not be read (inspecting it threw)',
        },
      ],
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(parseCapsule(proxy)).toEqual({
      ok: false,
      issues: [{ path: 'capsule', message: 'capsule could not be read (inspecting it threw)' }],
    });
  });

  it('a proxy that lies consistently is validated by the copy it yields, never by its getters', () => {
    let gets = 0;
    const lying = new Proxy(
      { taskId: 'task-1' },
      {
        get(target, key) {
          gets++;
          return key === 'taskId' ? 42 : Reflect.get(target, key);
        },
      },
    );
    const result = validateCall('wait', lying);
    expect(result).toEqual({ ok: true, value: { taskId: 'task-1' } });
    expect(gets).toBe(0);
  });
});
