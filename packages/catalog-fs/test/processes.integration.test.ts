// Behaviour that needs a real second process: a run owned by a live process can never be deleted,
// and becomes `interrupted` once that process dies; trusted-local import under plain Node 20.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openRunStore } from '../src/index.js';
import { bundleChild, startChild } from './helpers/bundle.js';
import { tempDir } from './helpers/fixtures.js';

let dir: string;
let cleanup: () => void;
let bundle: string;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('wf-processes-'));
  bundle = await bundleChild(join(dir, 'child.mjs'));
});
afterAll(() => cleanup());

it('a run held by a live process is never deleted, even with force; after SIGKILL it is interrupted', async () => {
  const runsProject = join(dir, 'runs');
  mkdirSync(runsProject);
  const config = join(dir, 'hold.json');
  writeFileSync(
    config,
    JSON.stringify({ runsProject, name: 'run-held', opsLog: join(dir, 'unused.log') }),
  );
  const child = startChild(bundle, 'hold', config);
  await child.ready;
  const store = await openRunStore({ project: runsProject });
  expect((await store.recover()).interrupted).toEqual([]);
  const shown = await store.show('run-held');
  expect(shown.ok && shown.run).toMatchObject({
    active: true,
    snapshot: { status: 'running', owner: { pid: child.pid } },
  });
  expect(await store.delete('run-held', { force: true })).toMatchObject({
    ok: false,
    error: { code: 'WF_CATALOG_RUN_ACTIVE' },
  });
  expect((await store.prune({ keep: 0 })).pruned).toEqual([]);
  child.kill('SIGKILL');
  await child.exited;
  expect((await store.recover()).interrupted).toEqual(['run-held']);
  const after = await store.show('run-held');
  expect(after.ok && after.run.snapshot).toMatchObject({
    status: 'interrupted',
    error: { code: 'WF_CATALOG_RUN_INTERRUPTED' },
  });
  expect(await store.delete('run-held')).toMatchObject({ ok: true });
});

it('imports an edited .mjs afresh under plain Node; .ts on Node 20 fails with a clear reason', async () => {
  const project = join(dir, 'catalog');
  mkdirSync(project);
  const mjs = join(project, 'local.mjs');
  writeFileSync(mjs, 'export async function run() { return "original"; }\n');
  const config = join(dir, 'import.json');
  writeFileSync(
    config,
    JSON.stringify({
      project,
      entry: { name: 'local', scope: 'project', kind: 'mjs' },
      file: mjs,
      opsLog: join(dir, 'unused.log'),
    }),
  );
  const child = startChild(bundle, 'import', config);
  await child.exited;
  expect(JSON.parse(child.stdout())).toEqual({ a: 'original', b: 'edited' });

  const ts = join(project, 'typed.ts');
  writeFileSync(ts, 'export async function run(): Promise<string> { return "typed"; }\n');
  writeFileSync(
    config,
    JSON.stringify({
      project,
      entry: { name: 'typed', scope: 'project', kind: 'ts' },
      file: ts,
      opsLog: join(dir, 'unused.log'),
    }),
  );
  const tsChild = startChild(bundle, 'import', config);
  await tsChild.exited;
  const out = JSON.parse(tsChild.stdout()) as {
    a: { error?: { code: string; message: string } } | string;
    b: unknown;
  };
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) {
    expect(out.a).toMatchObject({ error: { code: 'WF_CATALOG_IMPORT_FAILED' } });
    expect(typeof out.a === 'object' && out.a.error?.message).toMatch(/cannot import \.ts files/);
  } else {
    expect(out.b).toBe('edited');
  }
});
