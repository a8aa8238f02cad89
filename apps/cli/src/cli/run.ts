// `wf run` and `wf resume`: the sandbox's first worker thread starts before anything else (the
// bin's loader starts it before it loads this bundle: ../startup/early-sandbox.cjs), so it loads
// QuickJS on another core while this thread loads the engine, the catalog and the parser
// (run-verb.ts); the engine then runs the workflow in that sandbox, and this thread never sits
// idle waiting for a worker that starts only once all of that is loaded. Trusted-local and
// refused runs never use it: it is closed on every way out.
import { createRequire } from 'node:module';
import type { createSandbox, Sandbox } from '@wf/sandbox';
import type { CliContext } from './context.js';
import type { ExitCode } from './errors.js';
import type { ResumeVerbOptions, RunOptions, VerbSandbox } from './run-verb.js';

export type { ResumeVerbOptions, RunOptions } from './run-verb.js';

// From src/cli/ and from dist/cli/ (and the bundle there) alike: the start-up modules are
// CommonJS files that stay in src/startup/, the same instances the bin loaded.
const requireStartup = createRequire(import.meta.url);
/** The bin's loader of the bundles (precompileBundles is a no-op where it compiled none). */
const { precompileBundles } = requireStartup('../../src/startup/loader.cjs') as {
  precompileBundles(): void;
};
/** The sandbox the bin's loader started before it loaded this bundle, if any. */
const { takeSandbox, createRunSandbox } = requireStartup('../../src/startup/early-sandbox.cjs') as {
  takeSandbox(): Promise<Sandbox> | undefined;
  createRunSandbox(create: typeof createSandbox): Promise<Sandbox>;
};

/**
 * Resolves once createSandbox() has been called, that is once its first worker thread was
 * spawned (it does so before its first await): what run-verb.ts loads next (the engine, the
 * workflows and the contract bundles) then comes after the spawn by construction, not by the
 * order of microtasks. The bin has usually started it already, before it loaded this bundle;
 * otherwise (WF_STARTUP=off, or wf's main() called by another program) it starts here, with the
 * same options (../startup/early-sandbox.cjs). The sandbox is a bundle of its own
 * (dist/cli/sandbox.cjs), so its import compiles the sandbox and nothing else.
 */
async function bootSandbox(): Promise<VerbSandbox> {
  let created = takeSandbox();
  if (created === undefined) {
    try {
      created = createRunSandbox((await import('@wf/sandbox')).createSandbox);
    } catch (error) {
      created = Promise.reject(error);
      created.catch(() => {});
    }
  }
  const sandbox = created;
  // Now, before that worker thread sets the flag: V8 takes a bundle's code cache only under the
  // flags it was made with (../startup/loader.cjs). A no-op when the bin did it already.
  precompileBundles();
  let closed: Promise<void> | undefined;
  return {
    // A sandbox that cannot start fails the run that needs it, not bootSandbox. Its closing is
    // release's, not the engine's.
    sandbox: {
      run: async (request) => (await sandbox).run(request),
      close: async () => {},
    },
    release: () => {
      closed ??= sandbox.then(
        (sb) => sb.close(),
        () => {},
      );
      return closed;
    },
  };
}

export async function runCommand(
  ctx: CliContext,
  target: string,
  options: RunOptions,
): Promise<ExitCode> {
  const early = await bootSandbox();
  try {
    return await (await import('./run-verb.js')).runCommand(ctx, target, options, early);
  } finally {
    await early.release();
  }
}

export async function resumeCommand(
  ctx: CliContext,
  target: string,
  options: ResumeVerbOptions,
): Promise<ExitCode> {
  const early = await bootSandbox();
  try {
    return await (await import('./run-verb.js')).resumeCommand(ctx, target, options, early);
  } finally {
    await early.release();
  }
}
