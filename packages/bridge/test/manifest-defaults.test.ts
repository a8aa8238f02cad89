// withManifestDefaults: an inline manifest's missing fields come from the caller's defaults;
// what is present is kept as given, so parseManifest still names a wrong value.
import { describe, expect, it } from 'vitest';
import { parseManifest, type WorkflowManifest, withManifestDefaults } from '../src/index.js';

const defaults: WorkflowManifest = {
  name: 'inline-workflow',
  description: 'Inline workflow',
  phases: ['main'],
  readOnly: false,
  maxAgents: 64,
  maxConcurrency: 8,
  patterns: ['fan-out-and-synthesize'],
};

describe('withManifestDefaults', () => {
  it('fills every missing field, and empty phases/patterns lists', () => {
    expect(withManifestDefaults({}, defaults)).toEqual(defaults);
    const out = withManifestDefaults({ name: 'my-flow', phases: [], patterns: [] }, defaults);
    expect(out).toEqual({ ...defaults, name: 'my-flow' });
    expect(parseManifest(out).ok).toBe(true);
  });

  it('keeps given values, and caps a defaulted maxConcurrency at the given maxAgents', () => {
    const out = withManifestDefaults(
      { name: 'x', readOnly: true, maxAgents: 3, phases: ['a', 'b'], tokenBudget: 9000 },
      defaults,
    );
    expect(out).toMatchObject({
      readOnly: true,
      maxAgents: 3,
      maxConcurrency: 3,
      phases: ['a', 'b'],
    });
    expect(out.tokenBudget).toBe(9000);
    // a given maxConcurrency is the author's: a conflict is reported, not silently fixed
    const conflict = parseManifest(
      withManifestDefaults({ maxAgents: 2, maxConcurrency: 5 }, defaults),
    );
    expect(conflict.ok || conflict.issues.map((i) => i.path)).toEqual(['manifest.maxConcurrency']);
  });

  it('does not hide a wrong value or an unknown key', () => {
    const r = parseManifest(
      withManifestDefaults({ patterns: ['map-reduce'], version: '1', name: 'Bad Name' }, defaults),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual([
      'manifest.name',
      'manifest.patterns[0]',
      'manifest.version',
    ]);
  });
});
