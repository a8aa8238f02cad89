// What every e2e file sets up the same way: one scripted model server and one sandbox (DSH_HOME
// and working directory) for the file, and the patch that mounts our plugin beside the e2e helper.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import {
  HELPER_PLUGIN,
  makeSandbox,
  PLUGIN_DIR,
  PLUGIN_ENTRY,
  type Sandbox,
  writePatch,
} from './host.js';
import { type ModelServer, startModelServer } from './model-server.js';
import { readmeBlock } from './readme.js';

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

/** Each profile's own bundles, as DSH writes them when it initialises the profile. */
const PROFILE_BUNDLES = {
  headless: ['@deepseek-ai/dsh-base', '@deepseek-ai/dsh-headless'],
  web: ['@deepseek-ai/dsh-base', '@deepseek-ai/dsh-web-app'],
} as const;

/**
 * The profile as `dsh plugin --profile <p> add` leaves it: the package under the profile's
 * node_modules (linked here: the install itself needs a registry, which tests/install has) and
 * listed in `bundles`, so its `dsh.bundle` patch mounts it. Then the README's rows for that
 * profile, verbatim, replace the profile's cordis.patch.yml as the README says.
 */
export function installAsReadmeSays(sandbox: Sandbox, profile: 'headless' | 'web'): string {
  const dir = join(sandbox.dshHome, 'profiles', profile);
  mkdirSync(join(dir, 'node_modules', '@wf'), { recursive: true });
  symlinkSync(PLUGIN_DIR, join(dir, 'node_modules', '@wf', 'plugin'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: `dsh-profile-${profile}`,
      private: true,
      dependencies: {},
      dsh: { profile: { bundles: [...PROFILE_BUNDLES[profile], '@wf/plugin'] } },
    }),
  );
  writeFileSync(join(dir, 'cordis.patch.yml'), readmeRows(profile));
  return dir;
}

/** The README's rows for a profile, verbatim (each id written out: the coverage test reads them). */
export function readmeRows(profile: 'headless' | 'web'): string {
  return profile === 'web' ? readmeBlock('web-rows') : readmeBlock('headless-rows');
}

/** A patch mounting only the e2e helper (slash commands, approvals, questions in headless). */
export function helperPatch(sandbox: Sandbox, file = 'helper.yml'): string {
  return writePatch(join(sandbox.root, file), [{ id: 'wf-e2e-helper', name: HELPER_PLUGIN }]);
}
