// Every WF_CLI_* code has its documentation page (what it means, when it happens, Mitigation) that
// states the exit code the table gives it, and docs/cli.md links it under that exit code.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLI_EXIT_CODES,
  CliError,
  EXIT,
  EXIT_TABLE,
  exitCodeTable,
  exitCodesHelp,
} from '../src/cli/errors.js';
import { EXIT_CODES_HELP } from '../src/cli/verbs.js';

const docs = join(import.meta.dirname, '..', '..', '..', 'docs');

describe('WF_CLI_* codes', () => {
  for (const [code, exit] of Object.entries(CLI_EXIT_CODES)) {
    it(`${code} has a page with its exit code ${exit}`, () => {
      const page = join(docs, 'errors', `${code}.md`);
      expect(existsSync(page), page).toBe(true);
      const text = readFileSync(page, 'utf8');
      expect(text.startsWith(`# ${code}\n`)).toBe(true);
      expect(text).toContain(`Exit code **${exit}**`);
      for (const heading of ['## What it means', '## When it happens', '## Mitigation'])
        expect(text).toContain(heading);
      const row = readFileSync(join(docs, 'cli.md'), 'utf8')
        .split('\n')
        .find((l) => l.includes(`(errors/${code}.md)`));
      expect(row, `docs/cli.md links ${code}`).toMatch(new RegExp(`^\\| ${exit} \\|`));
    });
  }

  it("docs/cli.md's exit-code table is the one table (EXIT_TABLE and CLI_EXIT_CODES)", () => {
    const doc = readFileSync(join(docs, 'cli.md'), 'utf8');
    const at = doc.indexOf('| code | meaning | error codes |');
    const table = doc
      .slice(at)
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .join('\n');
    // On a difference, paste exitCodeTable() (apps/cli/src/cli/errors.ts) into docs/cli.md.
    expect(table).toBe(exitCodeTable());
  });

  it('every exit code has one row, and `wf --help` lists each', () => {
    expect(EXIT_TABLE.map((r) => r.exit)).toEqual(Object.values(EXIT));
    expect(EXIT_CODES_HELP).toContain(exitCodesHelp());
    for (const { exit } of EXIT_TABLE)
      expect(EXIT_CODES_HELP).toMatch(new RegExp(`\\n  ${exit} +\\S`));
  });

  it('CliError carries code, hint, details and its exit code, branded across realms', () => {
    const e = new CliError('WF_CLI_RUN_ACTIVE', 'busy', { hint: 'wait', details: { id: 1 } });
    expect([e.code, e.hint, e.details, e.exitCode]).toEqual([
      'WF_CLI_RUN_ACTIVE',
      'wait',
      { id: 1 },
      EXIT.conflict,
    ]);
    expect(CliError.is(e)).toBe(true);
    expect(CliError.is(new Error('x'))).toBe(false);
    expect(CliError.is({ code: 'WF_CLI_USAGE' })).toBe(false);
  });
});
