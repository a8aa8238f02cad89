// Capsules: realistic fixtures in the earlier plugin's format parse unchanged; every section's rules refuse with paths.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CAPSULE_FORMAT,
  CAPSULE_VERSION,
  createCapsule,
  parseCapsule,
  WORKFLOW_API_VERSION,
} from '../src/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const files = readdirSync(fixtures).filter((f) => f.endsWith('.workflow.json'));
const load = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(fixtures, file), 'utf8'));
const minimal = load('single-question.workflow.json');

function issues(input: unknown) {
  const result = parseCapsule(input);
  if (result.ok) throw new Error('expected the capsule to be refused');
  return result.issues;
}

describe('parseCapsule: fixtures from the earlier plugin', () => {
  it('has the fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it.each(files)('parses %s unchanged', (file) => {
    const json = load(file);
    const result = parseCapsule(json);
    expect(result).toEqual({ ok: true, capsule: json });
    if (result.ok) {
      expect(Object.isFrozen(result.capsule.manifest)).toBe(true);
      expect(result.capsule.format).toBe(CAPSULE_FORMAT);
    }
  });

  it('parses a capsule from its JSON text as well as from an object', () => {
    const text = readFileSync(join(fixtures, 'review-verify-synthesize.workflow.json'), 'utf8');
    expect(parseCapsule(JSON.parse(text)).ok).toBe(true);
  });
});

describe('parseCapsule: refused', () => {
  it('refuses another format, version or API version', () => {
    expect(
      issues({ ...minimal, format: 'kodax.workflow', version: 2, workflowApiVersion: 0 }),
    ).toEqual([
      { path: 'format', message: 'format must be "dsh.workflow" (got "kodax.workflow")' },
      { path: 'version', message: 'version must be 1 (the only supported version) (got 2)' },
      {
        path: 'workflowApiVersion',
        message: 'workflowApiVersion must be 1 (the only supported wf API version) (got 0)',
      },
    ]);
  });

  it('refuses a missing source, a blank source and a blank minDshVersion', () => {
    const { source: _, ...rest } = minimal;
    expect(issues(rest)).toEqual([{ path: 'source', message: 'source is required' }]);
    expect(issues({ ...minimal, source: '', minDshVersion: ' ' })).toEqual([
      { path: 'minDshVersion', message: 'minDshVersion must not be empty or blank' },
      { path: 'source', message: 'source must not be empty or blank' },
    ]);
  });

  it('refuses a source above the size bound', () => {
    expect(issues({ ...minimal, source: 'x'.repeat(1_048_577) })).toEqual([
      { path: 'source', message: 'source must be at most 1048576 characters (got 1048577)' },
    ]);
  });

  it('refuses unknown top-level and nested keys with their paths', () => {
    const result = issues({
      ...minimal,
      signature: 'abc',
      intent: { taskClass: 'x', priority: 1 },
      provenance: { createdAt: 'now', dshVersion: '0.1', pluginVersion: '0.1', author: 'me' },
    });
    expect(result).toEqual([
      {
        path: 'intent.priority',
        message:
          'intent.priority is not a known field (allowed: taskClass, patterns, originalRequest, reusableFor, notFor)',
      },
      {
        path: 'provenance.author',
        message:
          'provenance.author is not a known field (allowed: fromRunId, fromWorkflowName, revisionOf, replacesWorkflowName, createdAt, dshVersion, pluginVersion)',
      },
      {
        path: 'signature',
        message:
          'signature is not a known field (allowed: format, version, workflowApiVersion, minDshVersion, manifest, source, intent, inputs, requires, provenance)',
      },
    ]);
  });

  it('reports manifest issues under manifest.*', () => {
    const manifest = { ...(minimal.manifest as object), maxConcurrency: 4 };
    expect(issues({ ...minimal, manifest })).toEqual([
      {
        path: 'manifest.maxConcurrency',
        message: 'manifest.maxConcurrency must not exceed maxAgents (1) (got 4)',
      },
    ]);
  });

  it('checks intent', () => {
    expect(issues({ ...minimal, intent: {} })).toEqual([
      { path: 'intent.taskClass', message: 'intent.taskClass is required' },
    ]);
    expect(
      issues({ ...minimal, intent: { taskClass: 'x', reusableFor: 'all', notFor: [''] } }),
    ).toEqual([
      { path: 'intent.reusableFor', message: 'intent.reusableFor must be an array (got "all")' },
      { path: 'intent.notFor[0]', message: 'intent.notFor[0] must not be empty or blank' },
    ]);
    expect(issues({ ...minimal, intent: 'review' })).toEqual([
      { path: 'intent', message: 'intent must be an object (got "review")' },
    ]);
  });

  it('checks inputs, including that examples are plain JSON', () => {
    expect(issues({ ...minimal, inputs: { examples: [] } })).toEqual([
      { path: 'inputs.description', message: 'inputs.description is required' },
    ]);
    expect(issues({ ...minimal, inputs: { description: 'd', examples: {} } })).toEqual([
      { path: 'inputs.examples', message: 'inputs.examples must be an array (got an object)' },
    ]);
    expect(
      issues({ ...minimal, inputs: { description: 'd', examples: [{ n: Number.NaN }] } }),
    ).toEqual([
      {
        path: 'inputs.examples[0].n',
        message: 'inputs.examples[0].n must be a finite number (got NaN)',
      },
    ]);
  });

  it('checks requires', () => {
    expect(
      issues({
        ...minimal,
        requires: {
          environment: ['git-repo', 'docker'],
          modelTiers: ['huge'],
          userInteraction: 'yes',
          tools: [1],
        },
      }),
    ).toEqual([
      {
        path: 'requires.environment[1]',
        message: 'requires.environment[1] must be one of git-repo, worktree-capable (got "docker")',
      },
      { path: 'requires.tools[0]', message: 'requires.tools[0] must be a string (got 1)' },
      {
        path: 'requires.modelTiers[0]',
        message: 'requires.modelTiers[0] must be one of fast, balanced, deep (got "huge")',
      },
      {
        path: 'requires.userInteraction',
        message: 'requires.userInteraction must be a boolean (got "yes")',
      },
    ]);
  });

  it('checks provenance', () => {
    expect(issues({ ...minimal, provenance: { createdAt: '2026-01-01', fromRunId: '' } })).toEqual([
      { path: 'provenance.fromRunId', message: 'provenance.fromRunId must not be empty or blank' },
      { path: 'provenance.dshVersion', message: 'provenance.dshVersion is required' },
      { path: 'provenance.pluginVersion', message: 'provenance.pluginVersion is required' },
    ]);
  });

  it('refuses a root that is not an object', () => {
    expect(issues('{"format":"dsh.workflow"}')).toEqual([
      {
        path: 'capsule',
        message:
          'capsule must be a workflow capsule object (got "{\\"format\\":\\"dsh.workflow\\"}")',
      },
    ]);
    expect(issues([minimal])).toEqual([
      { path: 'capsule', message: 'capsule must be a workflow capsule object (got an array of 1)' },
    ]);
  });

  it('refuses documents nested beyond the depth bound without recursing into them', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const result = issues({ ...minimal, inputs: { description: 'd', examples: [deep] } });
    expect(result).toEqual([
      {
        path: `inputs.examples${'[0]'.repeat(62)}`,
        message: `inputs.examples${'[0]'.repeat(62)} nests deeper than 64 levels`,
      },
    ]);
  });

  it('caps the number of issues reported', () => {
    const phases = Array.from({ length: 250 }, () => '');
    const result = issues({ ...minimal, manifest: { ...(minimal.manifest as object), phases } });
    expect(result).toHaveLength(100);
    expect(result[99]).toEqual({
      path: 'capsule',
      message: 'capsule: 151 more issues were left off',
    });
  });

  it('applies deployment ceilings to the manifest', () => {
    const manifest = { ...(minimal.manifest as object), maxAgents: 9, maxConcurrency: 1 };
    const result = parseCapsule({ ...minimal, manifest }, { limits: { maxAgents: 8 } });
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: 'manifest.maxAgents',
          message:
            'manifest.maxAgents must not exceed the deployment ceiling for maxAgents (8) (got 9)',
        },
      ],
    });
  });
});

describe('createCapsule', () => {
  it('fills in format and versions and validates the rest', () => {
    const { format: _f, version: _v, workflowApiVersion: _a, ...draft } = minimal;
    const result = createCapsule(draft as Parameters<typeof createCapsule>[0]);
    expect(result).toEqual({
      ok: true,
      capsule: {
        ...draft,
        format: CAPSULE_FORMAT,
        version: CAPSULE_VERSION,
        workflowApiVersion: WORKFLOW_API_VERSION,
      },
    });
    const bad = createCapsule({ ...(draft as Parameters<typeof createCapsule>[0]), source: '' });
    expect(bad).toEqual({
      ok: false,
      issues: [{ path: 'source', message: 'source must not be empty or blank' }],
    });
  });
});

describe('issue cap across both checks', () => {
  it('counts JSON-walk and schema issues together in one cap', () => {
    const phases = Array.from({ length: 80 }, () => '');
    const examples = Array.from({ length: 80 }, () => Number.NaN);
    const result = parseCapsule({
      ...minimal,
      manifest: { ...(minimal.manifest as object), phases },
      inputs: { description: 'd', examples },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(100);
    expect(result.issues.filter((i) => i.message.includes('left off'))).toEqual([
      { path: 'capsule', message: 'capsule: 61 more issues were left off' },
    ]);
    expect(result.issues.some((i) => i.path === 'manifest.phases[0]')).toBe(true);
  });
});

describe('reserved and inherited key names', () => {
  it('refuses __proto__, constructor and prototype keys anywhere in a capsule, never drops them', () => {
    const doc = JSON.parse(
      JSON.stringify({
        ...minimal,
        manifest: { ...(minimal.manifest as object), PROTO: 1 },
      }).replace('"PROTO"', '"__proto__"'),
    );
    expect(Object.hasOwn(doc.manifest, '__proto__')).toBe(true);
    expect(issues(doc)).toEqual([
      {
        path: 'manifest.__proto__',
        message:
          'manifest.__proto__ is a reserved key (__proto__, constructor and prototype are never accepted)',
      },
    ]);
    expect(issues({ ...minimal, constructor: 'x' })).toEqual([
      {
        path: 'constructor',
        message:
          'constructor is a reserved key (__proto__, constructor and prototype are never accepted)',
      },
    ]);
    const schema = { type: 'object', properties: { prototype: { type: 'string' } } };
    expect(
      issues({ ...minimal, manifest: { ...(minimal.manifest as object), inputSchema: schema } }),
    ).toEqual([
      {
        path: 'manifest.inputSchema.properties.prototype',
        message:
          'manifest.inputSchema.properties.prototype is a reserved key (__proto__, constructor and prototype are never accepted)',
      },
    ]);
  });

  it('refuses input-schema properties named like Object.prototype members', () => {
    const schema = {
      type: 'object',
      properties: { toString: { type: 'string' }, ok: { type: 'string' }, valueOf: { type: 'x' } },
    };
    expect(
      issues({ ...minimal, manifest: { ...(minimal.manifest as object), inputSchema: schema } }),
    ).toEqual([
      {
        path: 'manifest.inputSchema.properties.valueOf.type',
        message:
          'manifest.inputSchema.properties.valueOf.type must be one of object, array, string, number, integer, boolean, json (got "x")',
      },
      {
        path: 'manifest.inputSchema.properties.toString',
        message:
          'manifest.inputSchema.properties.toString is not allowed as a property name (it names an Object.prototype member)',
      },
      {
        path: 'manifest.inputSchema.properties.valueOf',
        message:
          'manifest.inputSchema.properties.valueOf is not allowed as a property name (it names an Object.prototype member)',
      },
    ]);
  });
});
