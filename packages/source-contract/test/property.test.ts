// Property-based tests (fast-check): the checker never throws, its positions are valid, and no
// program it accepts contains a forbidden name, member or statement in its AST.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkWorkflowSource, type CheckResult } from '../src/index.js';
import { goodFixtures } from './fixtures.js';
import { forbiddenInAst, mutatedFixture, program, tokenSoup } from './generators.js';

const RUNS = 400;

function assertWellFormed(source: string, result: CheckResult): void {
  const lines = source.split(/\r\n|\r|\n|\u2028|\u2029/);
  const all = result.ok ? result.warnings : [...result.errors, ...result.warnings];
  if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
  for (const d of all) {
    expect(Number.isInteger(d.line) && d.line >= 1 && d.line <= lines.length).toBe(true);
    expect(Number.isInteger(d.column) && d.column >= 1).toBe(true);
    expect(d.column).toBeLessThanOrEqual((lines[d.line - 1] ?? '').length + 1);
    expect(typeof d.hint === 'string' && d.hint.length > 0 && !d.hint.includes('\n')).toBe(true);
    expect(typeof d.message === 'string' && d.message.length > 0).toBe(true);
  }
}

const mutated = mutatedFixture(goodFixtures.map((f) => f.source));

describe('checkWorkflowSource properties', () => {
  it('never throws and reports valid positions on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        assertWellFormed(s, checkWorkflowSource(s));
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws and reports valid positions on token soup', () => {
    fc.assert(
      fc.property(tokenSoup, (s) => {
        assertWellFormed(s, checkWorkflowSource(s));
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws on mutated realistic workflows', () => {
    fc.assert(
      fc.property(mutated, (s) => {
        assertWellFormed(s, checkWorkflowSource(s, { profile: 'authoring' }));
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts no generated program that contains a forbidden name, member or statement', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(program, (s) => {
        const result = checkWorkflowSource(s);
        assertWellFormed(s, result);
        if (result.ok) {
          accepted++;
          expect(forbiddenInAst(s)).toEqual([]);
        } else refused++;
      }),
      { numRuns: 1500 },
    );
    // The generator must exercise both outcomes, or the property says nothing.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('refuses every generated program the oracle finds forbidden things in (no false negatives)', () => {
    fc.assert(
      fc.property(program, (s) => {
        const forbidden = forbiddenInAst(s);
        fc.pre(forbidden !== null && forbidden.length > 0);
        expect(checkWorkflowSource(s).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
