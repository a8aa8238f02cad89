// The published build runs from dist/ under plain Node (no tsx, no source condition): compile the
// package to a scratch directory and run a real sandbox from it in a child process, so the
// worker entry (plain ESM JavaScript, located with import.meta.url) is proven to load there too.
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const exec = promisify(execFile);
const pkg = fileURLToPath(new URL('..', import.meta.url));
// Inside node_modules (git-ignored) so the build's bare imports resolve from this package.
const out = `${pkg}node_modules/.wf-dist-test`;
const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

it('runs from the compiled output under plain node', async () => {
  rmSync(out, { recursive: true, force: true });
  await exec(
    process.execPath,
    [tsc, '-p', `${pkg}tsconfig.json`, '--outDir', out, '--tsBuildInfoFile', `${out}/tsbuildinfo`],
    {
      timeout: 120_000,
    },
  );
  const script = `${out}/smoke.mjs`;
  writeFileSync(
    script,
    `import { createSandbox } from './index.js';
const sb = await createSandbox({ poolSize: 1 });
const o = await sb.run({ source: 'async function run(api) { return (await api.x(20)) + 22; }', capabilities: { x: (v) => v } });
await sb.close();
console.log(JSON.stringify({ status: o.status, value: o.value }));`,
  );
  const { stdout } = await exec(process.execPath, [script], { timeout: 60_000 });
  expect(JSON.parse(stdout.trim())).toEqual({ status: 'completed', value: 42 });
}, 180_000);
