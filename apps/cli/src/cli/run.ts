// `wf run` and `wf resume`: the sandbox's first worker thread starts before anything else, so it
// loads QuickJS on another core while this thread loads the engine, the catalog and the parser
// (run-verb.ts); the engine then runs the workflow in that sandbox. Before, the worker started only
// once all of that was loaded and the workflow preflighted, and this thread then sat idle waiting
// for it. Trusted-local and refused runs never use it: it is closed on every way out.
import type { SandboxLike } from '@wf/engine';
import type { Sandbox } from '@wf/sandbox';
import type { CliContext } from './context.js';
import type { ExitCode } from './errors.js';
import type { ResumeVerbOptions, RunOptions } from './run-verb.js';

export type { ResumeVerbOptions, RunOptions } from './run-verb.js';

interface EarlySandbox {
  /** Hands runs to the sandbox once it is ready; closing it is left to `close` below. */
  readonly sandbox: SandboxLike;
  close(): Promise<void>;
}

/**
 * Resolves once createSandbox() has been called, that is once its first worker thread was
 * spawned (it does so before its first await): what run-verb.ts loads next (the engine, the
 * workflows and the contract bundles, ~35 ms) then comes after the spawn by construction, not by
 * the order of microtasks. The sandbox is a bundle of its own (dist/cli/sandbox.cjs), so its
 * import compiles 38 KiB and nothing else.
 */
async function bootSandbox(): Promise<EarlySandbox> {
  let created: Promise<Sandbox>;
  try {
    // createSandbox spawns its first worker before it first awaits: called, not awaited, here.
    created = (await import('@wf/sandbox')).createSandbox();
  } catch (error) {
    created = Promise.reject(error);
  }
  // A sandbox that cannot start fails the run that needs it (through `run`), not this promise.
  created.catch(() => {});
  return {
    sandbox: {
      run: async (request) => (await created).run(request),
      close: async () => {},
    },
    close: async () => {
      const sb = await created.catch(() => undefined);
      await sb?.close();
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
    return await (await import('./run-verb.js')).runCommand(ctx, target, options, early.sandbox);
  } finally {
    await early.close();
  }
}

export async function resumeCommand(
  ctx: CliContext,
  target: string,
  options: ResumeVerbOptions,
): Promise<ExitCode> {
  const early = await bootSandbox();
  try {
    return await (await import('./run-verb.js')).resumeCommand(ctx, target, options, early.sandbox);
  } finally {
    await early.close();
  }
}
