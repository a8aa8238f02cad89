// Every error code has its page in docs/errors with the three sections the conventions ask for.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { SANDBOX_ERROR_CODES } from '../src/index.js';

const docs = fileURLToPath(new URL('../../../docs/errors/', import.meta.url));

it.each(Object.keys(SANDBOX_ERROR_CODES))('%s has a doc page', (code) => {
  const page = `${docs}${code}.md`;
  expect(existsSync(page)).toBe(true);
  const text = readFileSync(page, 'utf8');
  expect(text.startsWith(`# ${code}\n`)).toBe(true);
  for (const section of ['## What it means', '## When it happens', '## Mitigation'])
    expect(text).toContain(section);
});
