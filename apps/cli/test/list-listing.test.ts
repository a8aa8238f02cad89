// One listing for both apps: `wf list` shows the resolver's own listing (`listWorkflows` in
// @wf/catalog-fs) over @wf/patterns' light index, and the DSH plugin the same function over the
// shipped capsules (`resolver.list()`): same names, order, scopes and metadata, no precedence of
// its own in either app.
import { createWorkflowResolver, listWorkflows } from '@wf/catalog-fs';
import { BUILT_INS, PATTERNS } from '@wf/patterns';
import { SHIPPED_INDEX } from '@wf/patterns/shipped-index';
import { describe, expect, it } from 'vitest';

describe('the shipped part of the listing', () => {
  it('is the same from the light index (wf list) and from the capsules (the plugin)', async () => {
    const fromIndex = await listWorkflows(SHIPPED_INDEX, undefined);
    const resolver = createWorkflowResolver({
      shipped: { builtIns: BUILT_INS, patterns: PATTERNS },
      catalog: async () => undefined,
    });
    const fromCapsules = await resolver.list();
    expect(fromIndex).toEqual(fromCapsules);
    expect(fromIndex.entries.map((e) => e.source)).toEqual([
      ...BUILT_INS.map(() => 'built-in'),
      ...PATTERNS.map(() => 'pattern'),
    ]);
    expect(fromIndex.entries.every((e) => typeof e.description === 'string')).toBe(true);
  });
});
