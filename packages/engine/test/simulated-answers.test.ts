// The simulated provider's generated answers are clamped (invariant 6): a schema cannot make the host
// build a huge value (minLength 1.5e8 padded 150 MB on the host thread: 7.2 s, +469 MiB).
import { describe, expect, it } from 'vitest';
import { SIMULATED_ANSWER_LIMITS, sampleFromSchema } from '../src/index.js';

describe('sampleFromSchema bounds', () => {
  it('clamps minLength, minItems and the whole answer', () => {
    const t0 = process.cpuUsage();
    const value = sampleFromSchema(
      {
        type: 'object',
        properties: {
          s: { type: 'string', minLength: 150_000_000 },
          l: { type: 'array', minItems: 100_000_000, items: { type: 'string', minLength: 1e9 } },
        },
      },
      'answer',
    ) as { s: string; l: string[] };
    const used = process.cpuUsage(t0);
    expect(value.s).toHaveLength(SIMULATED_ANSWER_LIMITS.maxStringChars);
    expect(value.l).toHaveLength(SIMULATED_ANSWER_LIMITS.maxItems);
    expect(JSON.stringify(value).length).toBeLessThan(
      SIMULATED_ANSWER_LIMITS.maxAnswerChars + 1_000,
    );
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  });

  it('still satisfies ordinary schemas', () => {
    expect(
      sampleFromSchema(
        { type: 'object', properties: { a: { type: 'string', minLength: 20, maxLength: 30 } } },
        'k',
      ),
    ).toMatchObject({ a: expect.stringMatching(/^.{20,30}$/) });
  });
});
