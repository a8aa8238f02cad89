// workflow_manage's catalog verbs and run targets on a host-shaped context: the real @wf engine,
// sandbox, catalog and run store on disk and real rc.8 `Session`s; only the DSH subagent transport
// is scripted (tests/dsh-e2e runs the real host). `last` names the latest run; a saved DSH run
// keeps its args as the capsule's example and records the host's real DSH version; deleted or
// replaced capsules are listed by `archived` and brought back by `restore`.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostDshVersion } from '../src/plugin/host-version.js';
import { createTestHost } from './helpers/host.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-plugin-manage-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The plugin applied to a host-shaped context whose subagents answer `done: <label>`. */
function host() {
  const { tools, parent } = createTestHost({ cwd: dir, hostTools: ['read', 'grep', 'glob'] });
  const call = (name: string, args: Record<string, unknown>) => {
    const t = tools.get(name);
    if (!t) throw new Error(`tool ${name} is not registered`);
    return t.execute(args, { agent: parent, signal: new AbortController().signal }) as Promise<
      Record<string, unknown>
    >;
  };
  return { call, manage: (args: Record<string, unknown>) => call('workflow_manage', args) };
}

const FAN = `async function run(wf, args) {
  const r = await wf.parallel(args.names.map((n) => () => wf.runAgent({ name: n, prompt: 'go ' + n, readOnly: true })));
  return r.map((x) => (x ? x.finalText : null));
}`;
const MANIFEST = {
  name: 'unit-fan',
  description: 'unit fan-out',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 4,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
  inputSchema: {
    type: 'object',
    properties: { names: { type: 'array', items: { type: 'string' } } },
    required: ['names'],
  },
};

/** A DSH install of `version` under `root`; returns its bin, as `process.argv[1]` would be. */
function fakeHost(root: string, version: string): string {
  const pkg = join(root, 'node_modules', '@deepseek-ai', 'dsh');
  mkdirSync(join(pkg, 'lib'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@deepseek-ai/dsh', version }));
  writeFileSync(join(pkg, 'lib', 'bin.js'), '');
  return join(pkg, 'lib', 'bin.js');
}

const installedDsh = (): string => {
  const path = createRequire(import.meta.url).resolve('@deepseek-ai/dsh/package.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
};

describe('workflow_manage: run targets and catalog verbs', () => {
  it('`show last` is the latest run; save keeps args and the host DSH version; the saved run runs by name', async () => {
    const h = host();
    expect(
      await h.manage({ action: 'show', target: 'last' }).catch((e: Error) => e.message),
    ).toMatch(/WF_PLUGIN_NOT_FOUND.*no runs yet/);
    await h.call('run_workflow', { source: FAN, manifest: MANIFEST, args: { names: ['x'] } });
    const second = await h.call('run_workflow', {
      source: FAN,
      manifest: MANIFEST,
      args: { names: ['a', 'b'] },
    });
    expect(second).toMatchObject({ status: 'completed' });
    expect(await h.manage({ action: 'show', target: 'last' })).toMatchObject({
      runId: second.runId,
      result: ['done: a', 'done: b'],
    });
    // The duration shown is the run's own record's, as the CLI prints it.
    const shown = (await h.manage({ action: 'show', target: 'last' })) as {
      startedAt: string;
      endedAt: string;
      durationMs: number;
    };
    const record = JSON.parse(
      readFileSync(join(dir, '.dsh', 'workflow-runs', String(second.runId), 'run.json'), 'utf8'),
    ) as { startedAt: number; endedAt: number };
    expect(shown.durationMs).toBe(record.endedAt - record.startedAt);
    expect(Date.parse(shown.startedAt)).toBe(record.startedAt);
    expect(Date.parse(shown.endedAt)).toBe(record.endedAt);
    expect(await h.manage({ action: 'events', target: 'last' })).toMatchObject({
      runId: second.runId,
    });

    // The host program is a DSH of another version than the one installed for the tests.
    const bin = fakeHost(join(dir, 'host'), '0.1.9-test.3');
    const argv1 = process.argv[1];
    process.argv[1] = bin;
    try {
      expect(await h.manage({ action: 'save', target: 'last', name: 'saved-fan' })).toMatchObject({
        saved: 'saved-fan',
      });
    } finally {
      process.argv[1] = argv1 as string;
    }
    const file = join(dir, '.dsh', 'workflows', 'saved-fan.workflow.json');
    const capsule = JSON.parse(readFileSync(file, 'utf8')) as {
      inputs: { examples: unknown[] };
      provenance: { dshVersion: string; fromRunId: string };
    };
    expect(capsule.provenance).toMatchObject({
      fromRunId: second.runId,
      dshVersion: '0.1.9-test.3',
    });
    expect(capsule.inputs.examples[0]).toEqual({ names: ['a', 'b'] });
    // By name with no args: the saved run's args are its example.
    const byName = await h.call('run_workflow', { name: 'saved-fan' });
    expect(byName).toMatchObject({ status: 'completed', result: ['done: a', 'done: b'] });
  }, 60_000);

  it('archived lists deleted and replaced versions; restore brings one back', async () => {
    const h = host();
    const ran = await h.call('run_workflow', {
      source: FAN,
      manifest: MANIFEST,
      args: { names: ['r'] },
    });
    await h.manage({ action: 'save', target: String(ran.runId), name: 'keep-fan' });
    const deleted = (await h.manage({
      action: 'delete',
      target: 'keep-fan',
      scope: 'project',
    })) as {
      archived: string;
    };
    await expect(h.call('run_workflow', { name: 'keep-fan' })).rejects.toThrow(/keep-fan/);
    const listed = (await h.manage({ action: 'archived' })) as {
      archived: { id: string; name: string; valid: boolean }[];
    };
    expect(listed.archived).toEqual([
      expect.objectContaining({ id: deleted.archived, name: 'keep-fan', valid: true }),
    ]);
    expect(await h.manage({ action: 'archived', target: 'other' })).toEqual({ archived: [] });

    expect(await h.manage({ action: 'restore', target: deleted.archived })).toMatchObject({
      restored: deleted.archived,
      name: 'keep-fan',
      scope: 'project',
    });
    expect(await h.call('run_workflow', { name: 'keep-fan' })).toMatchObject({
      status: 'completed',
      result: ['done: r'],
    });
    // The archive keeps its copy: restoring over the current capsule needs replace.
    await expect(h.manage({ action: 'restore', target: deleted.archived })).rejects.toThrow(
      /WF_CATALOG_EXISTS/,
    );
    const replaced = await h.manage({ action: 'restore', target: deleted.archived, replace: true });
    expect(replaced).toHaveProperty('archived');
    expect(
      await h.manage({ action: 'restore', target: deleted.archived, name: 'copy-fan' }),
    ).toMatchObject({ name: 'copy-fan' });
    await expect(h.manage({ action: 'restore' })).rejects.toThrow(/restore needs target/);
    await expect(h.manage({ action: 'restore', target: 'no-such-id' })).rejects.toThrow(
      /WF_CATALOG_NOT_FOUND/,
    );
  }, 60_000);
});

describe('hostDshVersion', () => {
  it('reads the version of the package that owns the running host program', () => {
    const bin = fakeHost(join(dir, 'host'), '0.1.9-test.3');
    expect(hostDshVersion({ entry: bin, resolveFrom: join(dir, 'x.js') })).toBe('0.1.9-test.3');
  });

  it('falls back to the host package the plugin resolves', () => {
    const peer = join(dir, 'app', 'node_modules', '@deepseek-ai', 'dsh');
    mkdirSync(peer, { recursive: true });
    writeFileSync(
      join(peer, 'package.json'),
      JSON.stringify({ name: '@deepseek-ai/dsh', version: '0.2.0-peer' }),
    );
    const from = join(dir, 'app', 'plugin.js');
    expect(hostDshVersion({ entry: join(dir, 'nowhere.js'), resolveFrom: from })).toBe(
      '0.2.0-peer',
    );
    expect(hostDshVersion()).toBe(installedDsh());
  });
});
