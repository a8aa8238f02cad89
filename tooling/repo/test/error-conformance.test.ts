// Repo-level error conformance: every package listed in error-surfaces.json exports
// code tables keyed CODE -> CODE under one WF_<AREA>_ prefix, an error class on the @wf/errors kit
// whose `is` survives a realm copy and tells packages apart, and a three-section docs/errors page
// plus a README line for every code. Every code literal in a package's src/ must be declared.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_BRAND, WfError } from '../../../packages/errors/src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface Surface {
  readonly dir: string;
  readonly tables: Readonly<Record<string, string>>;
  readonly errorClass: string;
}
type ErrorClass = (new (
  code: string,
  message: string,
  options?: { cause?: unknown },
) => Error) & {
  is(value: unknown): boolean;
};

const { surfaces } = JSON.parse(
  readFileSync(join(root, 'tooling/repo/error-surfaces.json'), 'utf8'),
) as { surfaces: Surface[] };

const loaded = new Map<string, Record<string, unknown>>();
beforeAll(async () => {
  for (const s of surfaces)
    loaded.set(s.dir, (await import(join(root, s.dir, 'src/index.ts'))) as Record<string, unknown>);
});

const tableOf = (s: Surface, name: string) => loaded.get(s.dir)?.[name] as Record<string, string>;
const classOf = (s: Surface) => loaded.get(s.dir)?.[s.errorClass] as ErrorClass;
const codesOf = (s: Surface) => Object.keys(s.tables).flatMap((t) => Object.keys(tableOf(s, t)));

/** A copy whose object and prototype come from a fresh realm, own symbol properties included. */
function realmCopy(value: object): object {
  const copy = runInNewContext('new Error("copy")') as object;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(value));
  return copy;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(c|m)?(t|j)s$/.test(entry) && !entry.endsWith('.generated.ts')) yield p;
  }
}

describe('the surface list', () => {
  it('covers every package under packages/ that exports an error class', () => {
    const listed = new Set(surfaces.map((s) => s.dir));
    for (const name of readdirSync(join(root, 'packages'))) {
      const errors = join(root, 'packages', name, 'src', 'errors.ts');
      if (existsSync(errors)) expect(listed, `packages/${name}`).toContain(`packages/${name}`);
    }
  });

  it('gives each package one prefix for its error class codes, and no prefix to two packages', () => {
    const owner = new Map<string, string>();
    for (const s of surfaces) {
      for (const prefix of new Set(Object.values(s.tables))) {
        expect(prefix).toMatch(/^WF_[A-Z]+_$/);
        expect(owner.get(prefix) ?? s.dir, `${prefix} is used by two packages`).toBe(s.dir);
        owner.set(prefix, s.dir);
      }
    }
  });
});

describe.each(surfaces)('$dir', (s) => {
  it('exports code tables keyed CODE -> CODE, each code under the table prefix', () => {
    for (const [name, prefix] of Object.entries(s.tables)) {
      const table = tableOf(s, name);
      expect(table, `${s.dir} exports ${name}`).toBeTypeOf('object');
      expect(Object.keys(table).length).toBeGreaterThan(0);
      for (const [key, value] of Object.entries(table)) {
        expect(value, `${name}.${key}`).toBe(key);
        expect(key.startsWith(prefix), `${key} starts with ${prefix}`).toBe(true);
        expect(key).toMatch(/^WF_[A-Z0-9_]*[A-Z0-9]$/);
      }
    }
  });

  it('has an error class on the @wf/errors kit: code, cause, brand, data form', () => {
    const Cls = classOf(s);
    expect(Cls.prototype, `${s.errorClass} extends WfError`).toBeInstanceOf(WfError);
    const code = codesOf(s)[0] as string;
    const cause = new Error('root cause');
    const e = new Cls(code, 'it failed', { cause }) as WfError;
    expect(e.name).toBe(s.errorClass);
    expect(e.code).toBe(code);
    expect(e.cause).toBe(cause);
    expect(typeof (e as unknown as Record<symbol, unknown>)[ERROR_BRAND]).toBe('string');
    expect(e.toInfo()).toEqual({ code, message: 'it failed' });
    expect(structuredClone(e.toInfo())).toEqual(e.toInfo());
  });

  it('recognises its errors across a realm copy, and only its own', () => {
    const Cls = classOf(s);
    const e = new Cls(codesOf(s)[0] as string, 'x');
    const copy = realmCopy(e);
    expect(copy instanceof Cls).toBe(false);
    expect(Cls.is(copy)).toBe(true);
    expect(WfError.is(copy)).toBe(true);
    expect(Cls.is({ code: codesOf(s)[0], message: 'x' })).toBe(false);
    expect(Cls.is(new Error('x'))).toBe(false);
    for (const other of surfaces) {
      if (other.dir === s.dir) continue;
      expect(classOf(other).is(e), `${other.errorClass}.is(${s.errorClass})`).toBe(false);
    }
  });

  it('has a three-section docs/errors page for every code, linked from the README', () => {
    const readme = readFileSync(join(root, s.dir, 'README.md'), 'utf8');
    for (const code of codesOf(s)) {
      const page = join(root, 'docs', 'errors', `${code}.md`);
      expect(existsSync(page), `docs/errors/${code}.md`).toBe(true);
      const text = readFileSync(page, 'utf8');
      expect(text.startsWith(`# ${code}\n`), `${code}.md title`).toBe(true);
      for (const section of ['## What it means', '## When it happens', '## Mitigation'])
        expect(text, `${code}.md ${section}`).toContain(section);
      expect(readme, `${s.dir}/README.md lists ${code}`).toContain(code);
    }
  });
});

describe('code literals', () => {
  it('every WF_* code a package writes in its source is declared in some table', () => {
    const declared = new Set(surfaces.flatMap(codesOf));
    const undeclared: string[] = [];
    for (const s of surfaces) {
      for (const file of sourceFiles(join(root, s.dir, 'src'))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/['"`](WF_[A-Z0-9_]*[A-Z0-9])['"`]/g)) {
          const code = m[1] as string;
          if (!declared.has(code) && code !== 'WF_METHODS')
            undeclared.push(`${file.slice(root.length + 1)}: ${code}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });
});
