// `wf run` and `wf resume`: the sandbox's first worker thread starts before anything else, so it
// loads QuickJS on another core while this thread loads the engine, the catalog and the parser
// (run-verb.ts); the engine then runs the workflow in that sandbox. Before, the worker started only
// once all of that was loaded and the workflow preflighted, and this thread then sat idle waiting
// for it. Trusted-local and refused runs never use it: it is closed on every way out.
import { createRequire } from 'node:module';
import type { SandboxLike } from '@wf/engine';
import type { Sandbox } from '@wf/sandbox';
import type { CliContext } from './context.js';
import type { ExitCode } from './errors.js';
import type { ResumeVerbOptions, RunOptions } from './run-verb.js';

export type { ResumeVerbOptions, RunOptions } from './run-verb.js';

/** bin/code-cache.cjs, the bin's loader of the bundles (a no-op where it compiled none). */
const { precompileBundles } = createRequire(import.meta.url)('../../bin/code-cache.cjs') as {
  precompileBundles(): void;
};

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
    // wasmTierUp false: a short-lived process, where V8's optimizing compiler is still compiling
    // QuickJS when the run ends and the exit waits for it (measured 2026-12-04, `wf run` of five
    // instant agents 184 ms longer with V8's default tiering). The cost: CPU-heavy guests run
    // ~1.7x slower once warm (their CPU limits are unchanged). `wf worker` (long-lived), the
    // restate verbs and the plugin keep V8's default. So does the training of the code caches
    // (scripts/code-cache.mjs): a cache made after a flag changed carries the new flags' hash,
    // and V8 rejects it in every `wf`, which starts with the default flags.
    const training = process.env.WF_WRITE_CODE_CACHE !== undefined;
    created = (await import('@wf/sandbox')).createSandbox({ wasmTierUp: training });
  } catch (error) {
    created = Promise.reject(error);
  }
  // Now, before that worker thread sets the flag: V8 takes a bundle's code cache only under the
  // flags it was made with (bin/code-cache.cjs).
  precompileBundles();
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
