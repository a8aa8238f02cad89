// The README's example, run verbatim: the ```ts block under "## Example" is written to a file
// inside this package (so `@wf/sandbox` resolves through the package's own exports) and executed
// by a real Node process. Fails when the example stops compiling, running or printing a result.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const pkg = fileURLToPath(new URL('..', import.meta.url));

it('the README example runs as written and prints a completed outcome', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const example = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example, 'README has a ts block under ## Example').toBeDefined();
  const file = `${pkg}.readme-example-${process.pid}.mts`;
  writeFileSync(file, example as string);
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', '--conditions=@wf/source', file],
      { cwd: pkg, timeout: 60_000 },
    );
    expect(stderr).toBe('');
    // console.log(outcome.value, outcome.stats): the guest counted the words of the host's page.
    expect(stdout).toContain('words: 5');
    expect(stdout).toMatch(/at: '\d{4}-\d\d-\d\dT/);
  } finally {
    rmSync(file, { force: true });
  }
});
