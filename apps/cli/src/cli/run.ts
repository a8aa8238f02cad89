// `wf run` and `wf resume`: the sandbox's first worker thread starts before anything else, so it
// loads QuickJS on another core while this thread loads the engine, the catalog and the parser
// (run-verb.ts); the engine then runs the workflow in that sandbox. Before, the worker started only
// once all of that was loaded and the workflow preflighted, and this thread then sat idle waiting
// for it. Trusted-local and refused runs never use it: it is closed on every way out.
import type { SandboxLike } from '@wf/engine';
import type { CliContext } from './context.js';
import type { ExitCode } from './errors.js';
import type { ResumeVerbOptions, RunOptions } from './run-verb.js';

export type { ResumeVerbOptions, RunOptions } from './run-verb.js';

interface EarlySandbox {
  /** Hands runs to the sandbox once it is ready; closing it is left to `close` below. */
  readonly sandbox: SandboxLike;
  close(): Promise<void>;
}

function bootSandbox(): EarlySandbox {
  const created = import('@wf/sandbox').then((m) => m.createSandbox());
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
  const early = bootSandbox();
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
  const early = bootSandbox();
  try {
    return await (await import('./run-verb.js')).resumeCommand(ctx, target, options, early.sandbox);
  } finally {
    await early.close();
  }
}
