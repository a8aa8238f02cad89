// A failing tool call throws a PluginError whose code is always one of the plugin's: a refusal
// from a package below (the catalog, the engine, the run store) is WF_PLUGIN_UPSTREAM with that
// package's code and message kept in `upstream` and at the head of the message DSH shows.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLUGIN_ERROR_CODES, PluginError } from '../src/plugin/errors.js';
import { createTestHost } from './helpers/host.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-plugin-error-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('PluginError', () => {
  it('keeps its own codes, and wraps any other under WF_PLUGIN_UPSTREAM', () => {
    const own = PluginError.fromFailure({ code: 'WF_PLUGIN_NOT_FOUND', message: 'no such run' });
    expect(own).toMatchObject({
      code: 'WF_PLUGIN_NOT_FOUND',
      message: 'WF_PLUGIN_NOT_FOUND: no such run',
    });
    expect(own.upstream).toBeUndefined();
    const other = PluginError.fromFailure({ code: 'WF_ENGINE_BUDGET_EXCEEDED', message: 'over' });
    expect(other).toMatchObject({
      code: 'WF_PLUGIN_UPSTREAM',
      message: 'WF_ENGINE_BUDGET_EXCEEDED: over',
      upstream: { code: 'WF_ENGINE_BUDGET_EXCEEDED', message: 'over' },
    });
  });

  it('a tool refused by the catalog throws WF_PLUGIN_UPSTREAM naming the catalog code', async () => {
    // A catalog that exists, so the name is looked up there and the catalog says it is not found.
    mkdirSync(join(dir, '.dsh', 'workflows'), { recursive: true });
    writeFileSync(join(dir, '.dsh', 'workflows', '.keep'), '');
    const host = createTestHost({ cwd: dir });
    const run = host.tools.get('run_workflow');
    if (!run) throw new Error('the plugin registered no run tool');
    const refused = await run
      .execute(
        { name: 'no-such-workflow' },
        { agent: host.parent, signal: new AbortController().signal },
      )
      .catch((e: unknown) => e);
    await host.unload();
    expect(PluginError.is(refused)).toBe(true);
    const error = refused as PluginError;
    expect(Object.keys(PLUGIN_ERROR_CODES)).toContain(error.code);
    expect(error).toMatchObject({
      code: 'WF_PLUGIN_UPSTREAM',
      upstream: { code: 'WF_CATALOG_NOT_FOUND' },
    });
    expect(error.message.startsWith('WF_CATALOG_NOT_FOUND: ')).toBe(true);
  });
});
