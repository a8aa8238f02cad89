// The README's own commands, for the tests that run them verbatim. Every fenced block under the
// covered sections carries a marker on the line before it, `<!-- readme-test: <id> -->`; a test
// runs a block by calling `readmeBlock('<id>')`, and the coverage test (tests/install) fails when a
// block has no marker or no test calls `readmeBlock` with its id.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './host.js';

/** The README sections whose every shell and YAML block a test must run as written. */
export const COVERED_SECTIONS = ['Quick start', 'Use it in DSH'] as const;

export interface ReadmeBlock {
  /** From the marker line; undefined when the block has none. */
  readonly id: string | undefined;
  readonly lang: string;
  /** The block's text exactly as written, with its final newline. */
  readonly body: string;
  readonly section: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

const MARKER = /^<!-- readme-test: ([a-z0-9-]+) -->$/;

export function readmeText(): string {
  return readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
}

/** Every fenced block of the covered sections of `text`, in order. */
export function readmeBlocks(text: string = readmeText()): ReadmeBlock[] {
  const lines = text.split('\n');
  const blocks: ReadmeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    const heading = /^## (.+)$/.exec(line);
    if (heading?.[1]) section = heading[1].trim();
    const fence = /^(\s*)```(\S*)\s*$/.exec(line);
    if (!fence) continue;
    const indent = fence[1] ?? '';
    const close = lines.findIndex((l, j) => j > i && l === `${indent}\`\`\``);
    if (close < 0) throw new Error(`README.md line ${i + 1}: a code fence that never closes`);
    if ((COVERED_SECTIONS as readonly string[]).includes(section)) {
      let k = i - 1;
      while (k >= 0 && (lines[k] ?? '').trim() === '') k -= 1;
      const marker = MARKER.exec((lines[k] ?? '').trim());
      const body = lines
        .slice(i + 1, close)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n');
      blocks.push({
        id: marker?.[1],
        lang: fence[2] ?? '',
        body: `${body}\n`,
        section,
        line: i + 1,
      });
    }
    i = close;
  }
  return blocks;
}

/** The README block with this marker id, as written; throws when there is none. */
export function readmeBlock(id: string): string {
  const found = readmeBlocks().filter((b) => b.id === id);
  if (found.length !== 1)
    throw new Error(`README.md: ${found.length} blocks marked readme-test: ${id} (want 1)`);
  return (found[0] as ReadmeBlock).body;
}
