// Guest-supplied outputSchemas are compiled and run by ajv on the host's main thread. ajv treats
// schemas as trusted code; a hostile one must not stall the host: a catastrophic `pattern` checked
// against a child's answer (which the workflow steers through its prompt) would block the event
// loop of the whole host for minutes, with no wall limit able to interrupt it (invariant 6).
import { type AgentProvider, createSimulatedAgents } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, both, closeSandbox } from './harness.js';

afterAll(closeSandbox);

/** Longest event-loop stall seen while `work` runs. */
async function maxStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const t = performance.now();
    worst = Math.max(worst, t - last);
    last = t;
  }, 10);
  try {
    const value = await work();
    return { value, stallMs: Math.max(worst, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

/** Children that answer with `text` only (no provider-side structured output). */
function textOnly(text: string): AgentProvider {
  const inner = createSimulatedAgents({});
  return {
    name: 'text-only',
    capabilities: inner.capabilities,
    async start(request, signal) {
      const h = await inner.start(request, signal);
      return {
        id: h.id,
        result: h.result.then((res) => ({
          status: res.status,
          text,
          ...(res.usage ? { usage: res.usage } : {}),
        })),
        stop: (why) => h.stop(why),
        dispose: () => h.dispose(),
      };
    },
  };
}

// On a backtracking engine this pattern against 34 'a's and a '!' takes minutes.
const EVIL = '^(a|a)*$';
const ANSWER = `${'a'.repeat(34)}!`;

describe.each(both)('hostile outputSchema ($label)', ({ checker }) => {
  it.each([
    ['pattern', { type: 'object', properties: { s: { type: 'string', pattern: EVIL } } }],
    ['patternProperties', { type: 'object', patternProperties: { [EVIL]: { type: 'string' } } }],
  ])(
    'a catastrophic %s does not stall the host',
    async (_k, schema) => {
      const structured = _k === 'pattern' ? { s: ANSWER } : { [ANSWER]: 'x' };
      const { value: r, stallMs } = await maxStall(() =>
        attack(
          `const t = await wf.runAgent({ name: 'redos', prompt: 'answer ${ANSWER}', outputSchema: ${JSON.stringify(schema)} });
         return t === null ? wf.lastFailure().error.code : t.status;`,
          {
            checker,
            agents: { respond: () => ({ structured, text: JSON.stringify(structured) }) },
          },
        ),
      );
      expect(stallMs).toBeLessThan(3000);
      expect(['completed', 'failed']).toContain(r.done.status);
    },
    20_000,
  );

  it('a pattern the linear-time engine cannot run is refused before launch', async () => {
    const r = await attack(
      `return await wf.runAgent({ name: 'backref', prompt: 'p', outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)\\\\1$' } } } });`,
      { checker },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(r.done.error?.message).toContain('outputSchema');
    expect(r.agents?.stats().started).toBe(0);
  });

  it('a huge schema is refused before ajv compiles it on the host thread', async () => {
    // 2,000 object properties: about 200 KB, several seconds of ajv code generation.
    const { value: r, stallMs } = await maxStall(() =>
      attack(
        `const properties = {};
         for (let i = 0; i < 2000; i += 1) properties['p' + i] = { type: 'object', properties: { a: { type: 'string', minLength: 1 }, b: { type: 'number' } } };
         return await wf.runAgent({ name: 'wide', prompt: 'p', outputSchema: { type: 'object', properties } });`,
        { checker },
      ),
    );
    expect(stallMs).toBeLessThan(1500);
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(r.done.error?.message).toMatch(/outputSchema.*characters/);
    expect(r.agents?.stats().started).toBe(0);
  }, 20_000);

  it.each([
    ['unbalanced brackets', '{'.repeat(200_000)],
    ['a fence followed by newlines', `\`\`\`${'\n'.repeat(200_000)}`],
  ])(
    'an answer of %s is searched for JSON in linear time',
    async (_k, text) => {
      const { value: r, stallMs } = await maxStall(() =>
        attack(
          `const t = await wf.runAgent({ name: 'steered', prompt: 'p', outputSchema: { type: 'object' } });
         return t === null ? wf.lastFailure().error.code : t.status;`,
          { checker, provider: textOnly(text) },
        ),
      );
      expect(stallMs).toBeLessThan(1500);
      expect(r.done.status).toBe('completed');
      expect(r.done.result).toBe('WF_ENGINE_OUTPUT_INVALID');
    },
    30_000,
  );

  it('uniqueItems (a quadratic check on the host thread) is refused before launch', async () => {
    const items = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ a: i })));
    const { value: r, stallMs } = await maxStall(() =>
      attack(
        `const t = await wf.runAgent({ name: 'uniq', prompt: 'p', outputSchema: { type: 'object', properties: { list: { type: 'array', uniqueItems: true } } } });
         return t === null ? wf.lastFailure().error.code : t.status;`,
        { checker, provider: textOnly(`{"list":${items}}`) },
      ),
    );
    expect(stallMs).toBeLessThan(1500);
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(r.done.error?.message).toContain('uniqueItems');
  }, 30_000);
});
