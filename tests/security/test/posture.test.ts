// Which build the suites attack: the sources (project tests/security) or the built packages
// (tests/security:built, vitest.config.ts). A mistake in the project's conditions would run the
// same sources twice and call it a test of the build. Stack traces cannot tell (dist's source maps
// point back at src/), so this asks which file the sandbox starts its worker threads from.
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';
import { expect, inject, it } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    built?: boolean;
  }
}

it('attacks the build it names', async () => {
  const started: string[] = [];
  const Real = workerThreads.Worker;
  workerThreads.Worker = class extends Real {
    constructor(file: string | URL, options?: workerThreads.WorkerOptions) {
      started.push(String(file).split('/').slice(-3).join('/'));
      super(file, options);
    }
  };
  syncBuiltinESMExports();
  try {
    const { createSandbox } = await import('@wf/sandbox');
    const sandbox = await createSandbox({ poolSize: 1 });
    await sandbox.close();
  } finally {
    workerThreads.Worker = Real;
    syncBuiltinESMExports();
  }
  expect(started[0]).toBe(
    inject('built') === true ? 'dist/internal/worker.cjs' : 'src/internal/worker.js',
  );
});

it('attacks the entry the package publishes when it attacks the build', async () => {
  // The built run resolves `@wf/sandbox` as the published package does: its publishConfig
  // exports the one-file bundle (vitest.config.ts). The source run resolves the sources.
  const suite = await import('@wf/sandbox');
  const expected =
    inject('built') === true
      ? await import('../../../packages/sandbox/dist/internal/sandbox.bundle.js')
      : await import('../../../packages/sandbox/src/index.js');
  expect(suite.createSandbox).toBe(expected.createSandbox);
});
