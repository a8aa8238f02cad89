// The fixture corpora: >= 40 hostile programs refused with their codes, >= 15 realistic
// workflows accepted with no finding at all, even under the authoring profile.
import { describe, expect, it } from 'vitest';
import { checkWorkflowSource } from '../src/index.js';
import { beyondStaticFixtures, goodFixtures, hostileFixtures } from './fixtures.js';

describe('hostile corpus', () => {
  it('has at least 40 fixtures', () => {
    expect(hostileFixtures.length).toBeGreaterThanOrEqual(40);
  });

  it.each(hostileFixtures.map((f) => [f.name, f] as const))('refuses %s', (_name, fixture) => {
    const result = checkWorkflowSource(fixture.source);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const codes = result.errors.map((e) => e.code);
    for (const code of fixture.expect) expect(codes).toContain(code);
    const lines = fixture.source.split(/\r\n|\n/);
    for (const e of result.errors) {
      expect(e.line).toBeGreaterThanOrEqual(1);
      expect(e.line).toBeLessThanOrEqual(lines.length);
      expect(e.column).toBeLessThanOrEqual((lines[e.line - 1] ?? '').length + 1);
      expect(e.hint).not.toBe('');
    }
  });
});

describe('realistic corpus', () => {
  it('has at least 15 fixtures', () => {
    expect(goodFixtures.length).toBeGreaterThanOrEqual(15);
  });

  it.each(goodFixtures.map((f) => [f.name, f] as const))('accepts %s cleanly', (_name, fixture) => {
    expect(checkWorkflowSource(fixture.source, { profile: 'authoring' })).toEqual({
      ok: true,
      warnings: [],
    });
  });
});

describe('beyond-static corpus (documented non-guarantees)', () => {
  // These attacks are invisible to a static check; asserting that they pass keeps the README's
  // Non-guarantees honest, and hands the sandbox a ready list of what it alone must contain.
  it.each(beyondStaticFixtures.map((f) => [f.name, f] as const))(
    'is accepted: %s',
    (_name, fixture) => {
      const result = checkWorkflowSource(fixture.source);
      expect(result.ok ? [] : result.errors).toEqual([]);
    },
  );
});
