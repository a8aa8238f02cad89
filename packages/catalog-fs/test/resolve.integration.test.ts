// The one workflow resolver both apps use, on real directories: precedence built-in > pattern >
// project > personal, capsule beats source file, `.ts` > `.mjs` > `.js`, trusted-local entries
// never imported while resolving, the default manifest and the personal-root rule.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseCapsule, parseManifest, type WorkflowCapsule } from '@wf/bridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Catalog,
  createWorkflowResolver,
  defaultCatalogRoots,
  defaultManifest,
  openCatalog,
  personalCatalogRoot,
  type WorkflowResolver,
} from '../src/index.js';
import { makeCapsule, tempDir } from './helpers/fixtures.js';

function shippedCapsule(name: string, marker: string): WorkflowCapsule {
  const parsed = parseCapsule(makeCapsule(name, marker));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.capsule;
}

let tmp: ReturnType<typeof tempDir>;
let project: string;
let personal: string;
let catalog: Catalog;
let resolver: WorkflowResolver;

function put(root: string, file: string, content: string | object): string {
  mkdirSync(root, { recursive: true });
  const path = join(root, file);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

beforeEach(async () => {
  tmp = tempDir('wf-resolve-');
  project = join(tmp.dir, 'project', '.dsh', 'workflows');
  personal = join(tmp.dir, 'home', '.dsh', 'workflows');
  mkdirSync(project, { recursive: true });
  mkdirSync(personal, { recursive: true });
  catalog = await openCatalog({ project, personal });
  resolver = createWorkflowResolver({
    shipped: {
      builtIns: [shippedCapsule('shared', 'built-in'), shippedCapsule('only-built-in', 'b')],
      patterns: [shippedCapsule('shared', 'pattern'), shippedCapsule('only-pattern', 'p')],
    },
    catalog: async () => catalog,
  });
});

afterEach(() => tmp.cleanup());

const markerOf = async (name: string) => {
  const r = await resolver.resolve(name);
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.entry;
};

describe('createWorkflowResolver', () => {
  it('resolves built-in > pattern > project > personal', async () => {
    for (const root of [project, personal]) {
      for (const name of ['shared', 'only-built-in', 'only-pattern', 'in-both'])
        put(root, `${name}.workflow.json`, makeCapsule(name, root === project ? 'proj' : 'pers'));
    }
    put(personal, 'only-personal.workflow.json', makeCapsule('only-personal', 'pers'));

    const shared = await markerOf('shared');
    expect(shared).toMatchObject({ source: 'built-in', execution: 'trusted-package' });
    expect(shared.execution !== 'trusted-local' && shared.capsule.source).toContain('built-in');
    expect(await markerOf('only-built-in')).toMatchObject({ source: 'built-in' });
    expect(await markerOf('only-pattern')).toMatchObject({
      source: 'pattern',
      execution: 'trusted-package',
      location: '@wf/patterns',
    });
    const both = await markerOf('in-both');
    expect(both).toMatchObject({ source: 'project', execution: 'capability-generated' });
    expect(both.location).toBe(join(project, 'in-both.workflow.json'));
    expect(await markerOf('only-personal')).toMatchObject({ source: 'personal' });
  });

  it('within a directory: a capsule beats a source file, and .ts > .mjs > .js', async () => {
    const marker = join(tmp.dir, 'imported');
    const module = `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\nexport async function run() { return 1; }\n`;
    put(project, 'capsule-wins.workflow.json', makeCapsule('capsule-wins', 'c'));
    for (const ext of ['ts', 'mjs', 'js']) put(project, `capsule-wins.${ext}`, module);
    for (const ext of ['ts', 'mjs', 'js']) put(project, `ts-wins.${ext}`, module);
    for (const ext of ['mjs', 'js']) put(project, `mjs-wins.${ext}`, module);
    put(project, 'js-only.js', module);

    expect(await markerOf('capsule-wins')).toMatchObject({ execution: 'capability-generated' });
    for (const [name, ext] of [
      ['ts-wins', 'ts'],
      ['mjs-wins', 'mjs'],
      ['js-only', 'js'],
    ] as const) {
      const entry = await markerOf(name);
      expect(entry).toMatchObject({ source: 'project', execution: 'trusted-local' });
      expect(entry.execution === 'trusted-local' && entry.module).toBe(
        join(project, `${name}.${ext}`),
      );
    }
    // invariant 10: resolving (and listing) never imports trusted-local code
    await resolver.list();
    expect(existsSync(marker)).toBe(false);
  });

  it('nested lookups never return trusted-local workflows', async () => {
    put(project, 'local.mjs', 'export async function run() { return 1; }\n');
    put(project, 'saved.workflow.json', makeCapsule('saved', 's'));
    expect(await resolver.nested('local')).toBeUndefined();
    expect(await resolver.nested('saved')).toMatchObject({ trust: 'capability-generated' });
    expect(await resolver.nested('only-pattern')).toMatchObject({ trust: 'trusted-package' });
    expect(await resolver.nested('nowhere')).toBeUndefined();
  });

  it('refuses unknown names and invalid entries with the catalog code and the name', async () => {
    const missing = await resolver.resolve('nowhere');
    expect(missing).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_NOT_FOUND' } });
    put(project, 'broken.workflow.json', '{ "format": "dsh.workflow", ');
    const broken = await resolver.resolve('broken');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error.message).toContain('broken.workflow.json');

    const closed = createWorkflowResolver({
      shipped: { builtIns: [], patterns: [] },
      catalog: async () => undefined,
    });
    const r = await closed.resolve('saved');
    expect(r).toMatchObject({ ok: false, error: { code: 'WF_CATALOG_NOT_FOUND' } });
    expect(!r.ok && r.error.message).toContain('could not be opened');
  });

  it('lists shipped first, then catalog entries; a shadowed catalog name is marked', async () => {
    put(project, 'shared.workflow.json', makeCapsule('shared', 'proj'));
    put(personal, 'mine.workflow.json', makeCapsule('mine', 'pers'));
    const listing = await resolver.list();
    expect(listing.entries.map((e) => [e.name, e.source, e.shadowed ?? false])).toEqual([
      ['shared', 'built-in', false],
      ['only-built-in', 'built-in', false],
      ['shared', 'pattern', false],
      ['only-pattern', 'pattern', false],
      ['mine', 'personal', false],
      ['shared', 'project', true],
    ]);
  });
});

describe('defaultManifest', () => {
  it('is a valid manifest, and concurrency never exceeds the agent count', () => {
    const m = defaultManifest({
      name: 'inline-x',
      description: 'd',
      readOnly: true,
      maxAgents: 2,
      maxConcurrency: 8,
    });
    expect(parseManifest(m).ok).toBe(true);
    expect(m).toMatchObject({ phases: ['main'], maxAgents: 2, maxConcurrency: 2, readOnly: true });
  });
});

describe('the personal-root rule', () => {
  it('is $DSH_HOME/workflows, else $HOME/.dsh/workflows, else the OS home; empty counts as unset', () => {
    expect(personalCatalogRoot({ DSH_HOME: '/d', HOME: '/h' })).toBe('/d/workflows');
    expect(personalCatalogRoot({ HOME: '/h' })).toBe('/h/.dsh/workflows');
    expect(personalCatalogRoot({ DSH_HOME: '', HOME: '' })).toBe(
      join(homedir(), '.dsh', 'workflows'),
    );
    expect(defaultCatalogRoots('/p', { HOME: '/h' })).toEqual({
      project: '/p/.dsh/workflows',
      personal: '/h/.dsh/workflows',
    });
  });
});
