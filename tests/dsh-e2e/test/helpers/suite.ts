// What every e2e file sets up the same way: one scripted model server and one sandbox (DSH_HOME
// and working directory) for the file, and the patch that mounts our plugin beside the e2e helper.
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { HELPER_PLUGIN, makeSandbox, PLUGIN_ENTRY, type Sandbox, writePatch } from './host.js';
import { type ModelServer, startModelServer } from './model-server.js';

/** Starts the model server and makes the sandbox before the file's tests, removes both after. */
export function useHostSuite(
  prefix: string | undefined,
  set: (suite: { server: ModelServer; sandbox: Sandbox }) => void,
): void {
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    server = await startModelServer();
    sandbox = makeSandbox(prefix);
    set({ server, sandbox });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    sandbox?.cleanup();
  });
}

/** Writes `file` in the sandbox root: our plugin (with `config` when given) and the e2e helper. */
export function pluginPatch(
  sandbox: Sandbox,
  file: string,
  config?: Record<string, unknown>,
): string {
  return writePatch(join(sandbox.root, file), [
    { id: 'wf-workflows', name: PLUGIN_ENTRY, ...(config ? { config } : {}) },
    { id: 'wf-e2e-helper', name: HELPER_PLUGIN },
  ]);
}
