// One vitest run for the whole repo: every workspace folder with a test/ directory is a project.
// Tests read sources through the `@wf/source` export condition, so no build is needed to test.
// A project that spawns built output (the `wf` bin, the plugin bundle in DSH) has a
// test/global-setup.ts that builds it once, before its test files run.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

const conditions = ['@wf/source', ...defaultServerConditions];
const groups = ['packages', 'apps', 'tests', 'tooling'];
const projects = groups.flatMap((group) =>
  existsSync(group)
    ? readdirSync(group, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(group, d.name, 'test')))
        .map((d) => ({
          extends: true as const,
          resolve: { conditions },
          ssr: { resolve: { conditions, externalConditions: ['@wf/source'] } },
          test: {
            name: `${group}/${d.name}`,
            root: join(group, d.name),
            include: ['test/**/*.test.ts'],
            ...(existsSync(join(group, d.name, 'test', 'global-setup.ts'))
              ? { globalSetup: ['test/global-setup.ts'] }
              : {}),
          },
        }))
    : [],
);

// The hostile suites once more, on the built packages as users install them (dist/, the sandbox's
// bundled worker thread): a build step is one more place where a control could be lost. Only
// the source projects resolve `@wf/source` (Vite merges condition lists, so the root cannot).
// `@wf/sandbox` resolves to the entry its published package exports (publishConfig.exports: the
// one-file bundle), for the suites and for the built packages they load, which Vite also serves.
const SECURITY = 'tests/security';
const sandboxPackage = JSON.parse(readFileSync('packages/sandbox/package.json', 'utf8'));
const publishedSandbox = resolve(
  'packages/sandbox',
  sandboxPackage.publishConfig.exports['.'].default as string,
);
const securityOnBuild = {
  extends: true as const,
  resolve: { alias: [{ find: /^@wf\/sandbox$/, replacement: publishedSandbox }] },
  test: {
    name: `${SECURITY}:built`,
    root: SECURITY,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/built-setup.ts'],
    provide: { built: true },
  },
};

export default defineConfig({
  test: {
    projects: [...projects, securityOnBuild],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
