// Loads the fixture corpora: test/fixtures/good (realistic workflows that must pass cleanly),
// test/fixtures/hostile (each names the codes it must produce in a `// expect:` line) and
// test/fixtures/beyond-static (attacks a static check cannot see: the sandbox must contain them).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Fixture {
  name: string;
  source: string;
}

function load(dir: string): Fixture[] {
  return readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => ({ name: f, source: readFileSync(join(root, dir, f), 'utf8') }));
}

export const goodFixtures: Fixture[] = load('good');

export const hostileFixtures: (Fixture & { expect: string[] })[] = load('hostile').map((f) => {
  const line = /^\/\/ expect: (.+)$/m.exec(f.source);
  if (!line?.[1]) throw new Error(`fixture ${f.name} has no "// expect:" line`);
  return { ...f, expect: line[1].trim().split(/\s+/) };
});

/** Hostile programs the contract accepts by design (README: Non-guarantees), for sandbox tests. */
export const beyondStaticFixtures: Fixture[] = load('beyond-static');
