// Workflow scripts cannot import (the source contract forbids it), so small helpers (failureOf,
// lines, clampInt, ...) are repeated in each .workflow.js. This keeps the copies one definition:
// a top-level function declared under the same name in two scripts must be the same text.
// (Top-level consts such as CONCURRENCY or READ_ONLY are each workflow's own settings.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..', 'src', 'workflows');
const scripts = readdirSync(dir).filter((f) => f.endsWith('.workflow.js'));

/** Top-level helper declarations of one script: name -> text without comments. */
function helpersOf(file: string): Map<string, string> {
  const text = readFileSync(join(dir, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const out = new Map<string, string>();
  const printer = ts.createPrinter({ removeComments: true });
  for (const node of sf.statements) {
    if (!ts.isFunctionDeclaration(node)) continue;
    const name = node.name?.text;
    if (name === undefined || name === 'run') continue;
    out.set(name, printer.printNode(ts.EmitHint.Unspecified, node, sf));
  }
  return out;
}

const byName = new Map<string, { file: string; text: string }[]>();
for (const file of scripts) {
  for (const [name, text] of helpersOf(file)) {
    byName.set(name, [...(byName.get(name) ?? []), { file, text }]);
  }
}
const shared = [...byName].filter(([, copies]) => copies.length > 1);

describe('helpers repeated across workflow scripts', () => {
  it('finds the scripts and the shared helpers', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(8);
    expect(shared.map(([name]) => name)).toEqual(
      expect.arrayContaining(['failureOf', 'lines', 'clampInt']),
    );
  });

  it.each(shared)('%s is the same text in every script that declares it', (_name, copies) => {
    const [first, ...rest] = copies;
    for (const copy of rest) expect(copy.text, `${copy.file} vs ${first?.file}`).toBe(first?.text);
  });
});
