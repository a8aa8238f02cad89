// Every shipped capsule is a valid dsh.workflow v1 capsule whose source passes the authoring
// source contract with no warnings, whose examples pass its own inputSchema, and whose embedded
// source is byte-identical to its src/workflows/*.workflow.js file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCapsule, PATTERN_IDS, validateArgs } from '@wf/bridge';
import { checkWorkflowSource } from '@wf/source-contract';
import { describe, expect, it } from 'vitest';
import { shippedIndex } from '../scripts/generate-index.mjs';
import { readSources, renderSources } from '../scripts/generate-sources.mjs';
import { BUILT_INS, findShippedWorkflow, PATTERNS, SHIPPED_WORKFLOWS } from '../src/index.js';
import { SHIPPED_INDEX } from '../src/shipped-index.js';

const workflowsDir = join(import.meta.dirname, '..', 'src', 'workflows');

describe('shipped capsules', () => {
  it('ship the six patterns, in PATTERN_IDS order, and the two built-ins', () => {
    expect(PATTERNS.map((c) => c.manifest.name)).toEqual([...PATTERN_IDS]);
    expect(BUILT_INS.map((c) => c.manifest.name)).toEqual([
      'parallel-investigation',
      'scoped-review',
    ]);
    expect(SHIPPED_WORKFLOWS).toHaveLength(8);
    expect(findShippedWorkflow('tournament')?.manifest.name).toBe('tournament');
    expect(findShippedWorkflow('nope')).toBeUndefined();
    // Each pattern names itself as its pattern.
    for (const c of PATTERNS) expect(c.manifest.patterns).toEqual([c.manifest.name]);
  });

  for (const capsule of SHIPPED_WORKFLOWS) {
    const name = capsule.manifest.name;
    describe(name, () => {
      it('passes parseCapsule', () => {
        const parsed = parseCapsule(JSON.parse(JSON.stringify(capsule)));
        expect(parsed.ok ? [] : parsed.issues).toEqual([]);
      });

      it('passes the authoring source contract with no warnings', () => {
        const result = checkWorkflowSource(capsule.source, {
          profile: 'authoring',
          filename: `${name}.workflow.js`,
        });
        expect(result).toEqual({ ok: true, warnings: [] });
      });

      it('is read-only with bounded concurrency and a documented intent', () => {
        expect(capsule.manifest.readOnly).toBe(true);
        expect(capsule.manifest.maxConcurrency).toBeLessThanOrEqual(4);
        expect(capsule.manifest.maxConcurrency).toBeLessThanOrEqual(capsule.manifest.maxAgents);
        expect(capsule.intent?.taskClass).toBeTruthy();
        expect(capsule.inputs?.examples?.length).toBeGreaterThanOrEqual(2);
        expect(Object.isFrozen(capsule.manifest)).toBe(true);
      });

      it('accepts its own examples and refuses unknown args', () => {
        for (const example of capsule.inputs?.examples ?? []) {
          const checked = validateArgs(capsule.manifest, example);
          expect(checked.ok ? [] : checked.issues).toEqual([]);
        }
        const bad = validateArgs(capsule.manifest, { surprise: true });
        expect(bad.ok).toBe(false);
      });

      it('embeds its .workflow.js byte for byte', () => {
        expect(capsule.source).toBe(
          readFileSync(join(workflowsDir, `${name}.workflow.js`), 'utf8'),
        );
      });
    });
  }

  it('has a capsule for every .workflow.js and a fresh generated sources module', () => {
    const files = readdirSync(workflowsDir).filter((f) => f.endsWith('.workflow.js'));
    expect(files.map((f) => f.replace('.workflow.js', '')).sort()).toEqual(
      SHIPPED_WORKFLOWS.map((c) => c.manifest.name).sort(),
    );
    const generated = readFileSync(
      join(import.meta.dirname, '..', 'src', 'internal', 'workflow-sources.generated.ts'),
      'utf8',
    );
    // Stale means someone edited a .workflow.js without `pnpm --filter @wf/patterns generate`.
    expect(generated).toBe(renderSources(readSources()));
  });

  it('ships a fresh listing index (@wf/patterns/shipped-index, what `wf list` reads)', () => {
    // Stale means a capsule changed without `pnpm --filter @wf/patterns generate`: `wf list`
    // would show an old description, schema or example, or call an invalid capsule valid.
    expect(SHIPPED_INDEX).toEqual(shippedIndex(BUILT_INS, PATTERNS, parseCapsule));
    expect(SHIPPED_INDEX.every((e) => e.valid)).toBe(true);
  });
});
