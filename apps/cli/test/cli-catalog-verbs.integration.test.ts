// The saved-workflow verbs on the real bin, catalog and filesystem: a saved run keeps its args as
// the capsule's example (so `wf run <name>` with no args runs it as it ran), rename, delete,
// archived and restore, each leaving only whole capsules on disk (no temp file, nothing lost).
import { lstatSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCapsule, json, type Project, tempProject, wf } from './helpers/wf-cli.js';

let p: Project;

beforeAll(() => {
  p = tempProject();
  const capsule = demoCapsule();
  // No examples of its own: only the saved run's args can make `wf run <name>` work.
  (capsule as { inputs?: unknown }).inputs = undefined;
  p.file('angles.workflow.json', capsule);
});
afterAll(() => p?.cleanup());

const catalogFiles = () => readdirSync(join(p.dir, '.dsh', 'workflows')).sort();
const archivedFiles = () => readdirSync(join(p.dir, '.dsh', 'workflows', '.archive')).sort();

describe('saved-workflow verbs', () => {
  it('save keeps the run args as the example; rename, delete, archived and restore round-trip', async () => {
    const ran = await wf(
      [
        'run',
        'angles.workflow.json',
        '--args',
        '{"question":"why is it slow?"}',
        '--delay-ms',
        '0',
        '--json',
      ],
      p,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const saved = await wf(['save', 'last', 'my-angles', '--json'], p);
    expect(saved.code, saved.stderr).toBe(0);
    const listed = json(await wf(['list', '--json'], p)) as {
      workflows: { name: string; example?: unknown }[];
    };
    expect(listed.workflows.find((w) => w.name === 'my-angles')?.example).toEqual({
      question: 'why is it slow?',
    });
    // Runs with no --args: the example is the saved run's args.
    const again = await wf(['run', 'my-angles', '--delay-ms', '0', '--json'], p);
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toMatchObject({ status: 'completed', result: { angles: 4 } });

    const renamed = await wf(['rename', 'my-angles', 'renamed-angles', '--json'], p);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(json(renamed)).toMatchObject({ ok: true, renamed: 'my-angles', to: 'renamed-angles' });
    expect(catalogFiles()).toEqual(['.archive', 'renamed-angles.workflow.json']);
    expect((await wf(['run', 'renamed-angles', '--delay-ms', '0'], p)).code).toBe(0);
    const gone = await wf(['run', 'my-angles', '--json'], p);
    expect(gone.code).toBe(3);

    const deleted = json(await wf(['delete', 'renamed-angles', '--json'], p)) as {
      archived: string;
    };
    expect(deleted.archived).toMatch(/renamed-angles/);
    expect(catalogFiles()).toEqual(['.archive']);
    const missing = await wf(['delete', 'renamed-angles', '--json'], p);
    expect(missing.code).toBe(3);
    expect(json(missing)).toMatchObject({
      ok: false,
      error: { code: 'WF_CLI_WORKFLOW_NOT_FOUND' },
    });

    const archived = json(await wf(['archived', '--json'], p)) as {
      archived: { id: string; name: string; valid: boolean }[];
    };
    expect(archived.archived.map((a) => a.name).sort()).toEqual(['my-angles', 'renamed-angles']);
    expect(archived.archived.every((a) => a.valid)).toBe(true);
    expect(archived.archived.map((a) => `${a.id}.workflow.json`).sort()).toEqual(archivedFiles());
    const onlyMine = json(await wf(['archived', 'my-angles', '--json'], p)) as {
      archived: { name: string }[];
    };
    expect(onlyMine.archived.map((a) => a.name)).toEqual(['my-angles']);
    expect((await wf(['archived', 'my-angles'], p)).stdout).toContain('wf restore <id>');

    const restored = await wf(['restore', deleted.archived, '--json'], p);
    expect(restored.code, restored.stderr).toBe(0);
    expect(json(restored)).toMatchObject({ ok: true, name: 'renamed-angles', scope: 'project' });
    const rerun = await wf(['run', 'renamed-angles', '--delay-ms', '0', '--json'], p);
    expect(rerun.code, rerun.stderr).toBe(0);
    // The archive keeps its copy; restoring over a current workflow needs --replace.
    const clash = await wf(['restore', deleted.archived, '--json'], p);
    expect(clash.code).toBe(4);
    expect(json(clash)).toMatchObject({ error: { code: 'WF_CLI_NAME_TAKEN' } });
    const replaced = await wf(['restore', deleted.archived, '--replace', '--json'], p);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(json(replaced)).toHaveProperty('archived');
    const older = onlyMine.archived[0] as { name: string; id?: string };
    const asOther = await wf(
      [
        'restore',
        String((archived.archived.find((a) => a.name === 'my-angles') as { id: string }).id),
        '--as',
        'older-angles',
        '--json',
      ],
      p,
    );
    expect(asOther.code, asOther.stderr).toBe(0);
    expect(older.name).toBe('my-angles');
    expect(catalogFiles()).toEqual([
      '.archive',
      'older-angles.workflow.json',
      'renamed-angles.workflow.json',
    ]);
    // No temp file or partial capsule anywhere in the catalog.
    expect(archivedFiles().every((f) => f.endsWith('.workflow.json'))).toBe(true);
  }, 180_000);

  it('bad input is named: unknown archive id, bad scope, built-in name', async () => {
    const unknown = await wf(['restore', 'nope', '--json'], p);
    expect(unknown.code).toBe(3);
    expect(json(unknown)).toMatchObject({ error: { code: 'WF_CLI_WORKFLOW_NOT_FOUND' } });
    const scope = await wf(['delete', 'x', '--scope', 'team', '--json'], p);
    expect(scope.code).toBe(2);
    expect(json(scope)).toMatchObject({
      error: { code: 'WF_CLI_USAGE', message: expect.stringContaining('--scope') },
    });
    const builtIn = await wf(['rename', 'renamed-angles', 'fan-out-and-synthesize', '--json'], p);
    expect(builtIn.code).toBe(4);
    expect(json(builtIn)).toMatchObject({ error: { code: 'WF_CLI_NAME_TAKEN' } });
  }, 60_000);

  it('a symlinked catalog entry is refused as bad input (exit 2), never as a bug in wf (70)', async () => {
    const outside = tempProject();
    try {
      outside.file('planted.workflow.json', demoCapsule());
      const entry = join(p.dir, '.dsh', 'workflows', 'planted.workflow.json');
      symlinkSync(join(outside.dir, 'planted.workflow.json'), entry);
      for (const argv of [
        ['rename', 'planted', 'moved'],
        ['delete', 'planted'],
      ]) {
        const out = await wf([...argv, '--json'], p);
        expect(out.code, `${argv[0]}: ${out.stdout}${out.stderr}`).toBe(2);
        expect(json(out)).toMatchObject({
          error: {
            code: 'WF_CLI_WORKFLOW_INVALID',
            message: expect.stringMatching(
              /planted\.workflow\.json is (a symbolic link|not a regular file)/,
            ),
            hint: expect.stringContaining('symbolic link'),
          },
        });
      }
      // Nothing was followed: the link and its target are untouched.
      expect(lstatSync(entry).isSymbolicLink()).toBe(true);
      rmSync(entry);
    } finally {
      outside.cleanup();
    }
  }, 60_000);
});
