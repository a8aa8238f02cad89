// One vitest run for the whole repo: every workspace folder with a test/ directory is a project.
// Tests read sources through the `@wf/source` export condition, so no build is needed to test.
// A project that spawns built output (the `wf` bin, the plugin bundle in DSH) has a
// test/global-setup.ts that builds it once, before its test files run.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

const groups = ['packages', 'apps', 'tests', 'tooling'];
const projects = groups.flatMap((group) =>
  existsSync(group)
    ? readdirSync(group, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(group, d.name, 'test')))
        .map((d) => ({
          extends: true as const,
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

const conditions = ['@wf/source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@wf/source'] } },
  test: {
    projects,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
