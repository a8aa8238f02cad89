// The README cannot drift from what runs: every shell and YAML block under "Quick start" and "Use
// it in DSH" is marked `<!-- readme-test: <id> -->`, and some test runs it verbatim through
// `readmeBlock('<id>')` (tests/dsh-e2e/test/helpers/readme.ts). A block added without a marker,
// or with an id no test runs, fails here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../dsh-e2e/test/helpers/host.js';
import { readmeBlock, readmeBlocks, readmeText } from '../../dsh-e2e/test/helpers/readme.js';

/** Test code of every workspace (each `test/` tree under packages, apps, tests, tooling). */
function testFiles(): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'fixtures') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name)) out.push({ path: p, text: readFileSync(p, 'utf8') });
    }
  };
  for (const group of ['packages', 'apps', 'tests', 'tooling']) {
    const root = join(REPO_ROOT, group);
    if (!existsSync(root)) continue;
    for (const name of readdirSync(root)) {
      const test = join(root, name, 'test');
      if (existsSync(test)) walk(test);
    }
  }
  return out;
}

/** What keeps a README from being covered: blocks without a marker, twice-used ids, untested ids. */
export function coverageProblems(
  readme: string,
  tests: readonly { path: string; text: string }[],
): string[] {
  const problems: string[] = [];
  const blocks = readmeBlocks(readme);
  const run = new Map<string, string[]>();
  for (const t of tests)
    for (const m of t.text.matchAll(/readmeBlock\(\s*'([a-z0-9-]+)'\s*\)/g)) {
      const id = m[1] as string;
      run.set(id, [...(run.get(id) ?? []), relative(REPO_ROOT, t.path)]);
    }
  const seen = new Set<string>();
  for (const b of blocks) {
    const where = `README.md line ${b.line} (${b.section}, \`\`\`${b.lang})`;
    if (!b.id) {
      problems.push(`${where}: no <!-- readme-test: <id> --> marker before the block`);
      continue;
    }
    if (seen.has(b.id)) problems.push(`${where}: the id ${b.id} marks two blocks`);
    seen.add(b.id);
    if (!run.has(b.id)) problems.push(`${where}: no test calls readmeBlock('${b.id}')`);
  }
  return problems;
}

describe('README coverage', () => {
  it('every block under Quick start and Use it in DSH is run verbatim by a test', () => {
    const blocks = readmeBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    expect(blocks.map((b) => b.lang).every((l) => l === 'sh' || l === 'yaml')).toBe(true);
    expect(coverageProblems(readmeText(), testFiles())).toEqual([]);
  });

  it('is red for a block added without a marker, or with an id no test runs', () => {
    const readme = readmeText();
    // a test tree that runs every block the README has now
    const ids = readmeBlocks(readme).map((b) => b.id);
    const tests = [
      {
        path: join(REPO_ROOT, 'x.test.ts'),
        text: ids.map((id) => `readmeBlock('${id}')`).join('\n'),
      },
    ];
    expect(coverageProblems(readme, tests)).toEqual([]);
    const added = readme.replace(
      '## Use it in DSH\n',
      '## Use it in DSH\n\n```sh\ndsh --profile web\n```\n\n<!-- readme-test: nobody-runs-this -->\n```yaml\n- id: x\n```\n',
    );
    const problems = coverageProblems(added, tests);
    expect(problems).toEqual([
      expect.stringMatching(/\(Use it in DSH, ```sh\): no <!-- readme-test: <id> --> marker/),
      expect.stringMatching(/no test calls readmeBlock\('nobody-runs-this'\)/),
    ]);
    // a block outside the covered sections is not the README's promise of a command
    expect(
      coverageProblems(`${readme}\n## Elsewhere\n\n\`\`\`sh\nrm -rf /\n\`\`\`\n`, tests),
    ).toEqual([]);
  });

  it('the whole-suite block is what .ci/run runs, verbatim', () => {
    const commands = readmeBlock('test-suite')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
    const ci = readFileSync(join(REPO_ROOT, '.ci/run'), 'utf8').split('\n');
    expect(commands.length).toBeGreaterThan(0);
    for (const c of commands) expect(ci).toContain(c);
  });
});
