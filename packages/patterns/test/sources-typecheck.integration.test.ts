// The shipped sources are typed examples: a real `tsc` checks every .workflow.js (checkJs, with
// its JSDoc) against the author types in @wf/bridge's workflow.d.ts, so a misused wf method, a
// task field that does not exist or a wrong modelHint fails here, before any run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const workflows = join(import.meta.dirname, '..', 'src', 'workflows');
// The workspace link to @wf/bridge (its package exports only `.`, so no subpath resolve).
const dts = join(import.meta.dirname, '..', 'node_modules', '@wf', 'bridge', 'workflow.d.ts');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe('workflow sources against workflow.d.ts', () => {
  it('type-check without errors', () => {
    const files = readdirSync(workflows).filter((f) => f.endsWith('.workflow.js'));
    expect(files).toHaveLength(8);
    const dir = mkdtempSync(join(tmpdir(), 'wf-patterns-tsc-'));
    const config = join(dir, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          noEmit: true,
          allowJs: true,
          checkJs: true,
          // Each workflow is its own script scope, as in the sandbox.
          moduleDetection: 'force',
          target: 'es2022',
          lib: ['es2023'],
          types: [],
          pretty: false,
        },
        files: [dts, ...files.map((f) => join(workflows, f))],
      }),
    );
    let out = '';
    try {
      out = execFileSync(process.execPath, [tsc, '-p', config], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(out.replaceAll(workflows, '')).toBe('');
  });
});
