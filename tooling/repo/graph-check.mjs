#!/usr/bin/env node
// The dependency-graph check (docs/design.md#layers). Fails when a workspace package depends on or
// imports an internal package the layering does not allow below it, when package.json and
// tsconfig references disagree, when src/ imports an undeclared package or reaches into another
// package's files, when src/index.ts uses `export *`, when a bench runs a package's sources
// instead of its build, or when the graph has a cycle.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const rootArg = process.argv.indexOf('--root');
const root =
  rootArg > 0
    ? resolve(process.argv[rootArg + 1])
    : resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// docs/design.md#layers, as data. Runtime imports (`dependencies` and src/) may only go to these.
// @wf/errors is the leaf every layer may import (the error kit); it imports nothing itself.
const KIT = '@wf/errors';
// The two apps are separate top-layer nodes: each may use any package, never the other app.
const PACKAGES = [
  KIT,
  '@wf/source-contract',
  '@wf/sandbox',
  '@wf/bridge',
  '@wf/engine',
  '@wf/catalog-fs',
  '@wf/patterns',
  '@wf/report',
  '@wf/dsh-adapter',
  '@wf/restate',
];
export const ALLOWED = {
  '@wf/errors': [],
  '@wf/source-contract': [KIT],
  '@wf/sandbox': [KIT],
  '@wf/bridge': [KIT],
  '@wf/catalog-fs': [KIT, '@wf/bridge'],
  '@wf/engine': [KIT, '@wf/source-contract', '@wf/sandbox', '@wf/bridge'],
  '@wf/patterns': [KIT, '@wf/bridge'],
  '@wf/report': [KIT, '@wf/bridge'],
  '@wf/dsh-adapter': [KIT, '@wf/engine', '@wf/bridge'],
  '@wf/restate': [KIT, '@wf/engine', '@wf/sandbox', '@wf/bridge'],
  '@wf/plugin': PACKAGES,
  '@wf/cli': PACKAGES,
};
// Private workspaces (tests/*, tooling/*) may use anything; they are never imported.
const PRIVATE_GROUPS = ['tests', 'tooling'];

// `--layers`: print the allowed imports as JSON and stop, without checking anything: the layer
// table in docs/ is generated from them (tooling/repo/gen-layers.mjs).
if (process.argv.includes('--layers')) {
  process.stdout.write(`${JSON.stringify(ALLOWED)}\n`);
  process.exit(0);
}

const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));
const problems = [];
const fail = (where, msg) => problems.push(`${where}: ${msg}`);

function workspaces() {
  const out = [];
  for (const group of ['packages', 'apps', 'tests', 'tooling']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const pj = join(dir, name, 'package.json');
      if (existsSync(pj)) out.push({ group, dir: join(dir, name), pkg: readJson(pj) });
    }
  }
  return out;
}

function* sourceFiles(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(c|m)?(t|j)s$/.test(entry) && !entry.endsWith('.d.ts')) yield p;
  }
}

// Module specifiers in import/export-from/dynamic import/require. Comments are stripped first so a
// commented-out import does not count; string contents are not otherwise interpreted.
function specifiers(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1');
  const found = new Set();
  const patterns = [
    /\bimport\s+(?:type\s+)?(?:[\w*{}\s,$]+\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bexport\s+(?:type\s+)?[\w*{}\s,$]*\s+from\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  // A `${...}` placeholder is text a script generates (a bundle entry), not an import of its own.
  for (const re of patterns)
    for (const m of code.matchAll(re)) if (!m[1].includes('${')) found.add(m[1]);
  return [...found];
}

const packageName = (spec) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];

const all = workspaces();
const byName = new Map(all.map((w) => [w.pkg.name, w]));
const internal = (n) => byName.has(n);

for (const w of all) {
  const where = relative(root, w.dir);
  const name = w.pkg.name;
  const isPrivateGroup = PRIVATE_GROUPS.includes(w.group);
  if (!isPrivateGroup && !(name in ALLOWED)) {
    fail(where, `${name} is not in the layering (docs/design.md#layers); add it to ALLOWED first`);
    continue;
  }
  const deps = Object.keys(w.pkg.dependencies ?? {}).filter(internal);
  const devDeps = Object.keys(w.pkg.devDependencies ?? {}).filter(internal);
  const allowed = isPrivateGroup ? null : new Set(ALLOWED[name]);

  for (const d of [...deps, ...devDeps]) {
    const spec = w.pkg.dependencies?.[d] ?? w.pkg.devDependencies?.[d];
    if (spec !== 'workspace:^')
      fail(where, `internal dependency ${d} must be "workspace:^" (is "${spec}")`);
  }
  if (allowed) {
    for (const d of deps) {
      if (!allowed.has(d))
        fail(
          where,
          `depends on ${d}, which the layering (docs/design.md#layers) does not allow below ${name}`,
        );
    }
  }

  // tsconfig references must match the runtime internal dependencies exactly.
  const tsPath = join(w.dir, 'tsconfig.json');
  if (!isPrivateGroup && existsSync(tsPath)) {
    const refs = (readJson(tsPath).references ?? []).map((r) => resolve(w.dir, r.path));
    const refNames = new Set(
      refs.map((r) => {
        const pj = join(r, 'package.json');
        return existsSync(pj) ? readJson(pj).name : `<missing ${relative(root, r)}>`;
      }),
    );
    for (const d of deps)
      if (!refNames.has(d)) fail(where, `tsconfig.json lacks a reference to ${d}`);
    for (const r of refNames) {
      if (!deps.includes(r))
        fail(where, `tsconfig.json references ${r}, which is not a dependency`);
    }
  }

  // src/ imports: declared, allowed, no deep imports, no reaching into another package's files.
  const declared = new Set([
    ...Object.keys(w.pkg.dependencies ?? {}),
    ...Object.keys(w.pkg.peerDependencies ?? {}),
  ]);
  for (const file of sourceFiles(join(w.dir, 'src'))) {
    const rel = relative(root, file);
    const text = readFileSync(file, 'utf8');
    for (const spec of specifiers(text)) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(w.dir + '/')) fail(rel, `imports ${spec}, outside its own package`);
        continue;
      }
      if (spec.startsWith('node:')) continue;
      const pkgName = packageName(spec);
      if (internal(pkgName)) {
        // A subpath is allowed only where the package declares it in `exports` (a light entry
        // such as @wf/bridge/run-span); anything else reaches into the package's files.
        const subpath = spec === pkgName ? '.' : `./${spec.slice(pkgName.length + 1)}`;
        const target = all.find((x) => x.pkg.name === pkgName);
        const exported = subpath === '.' || Object.hasOwn(target?.pkg.exports ?? {}, subpath);
        if (!exported) fail(rel, `deep import ${spec}: import the package entry ${pkgName}`);
        if (allowed && !allowed.has(pkgName))
          fail(rel, `imports ${pkgName}, not allowed below ${name}`);
        if (!declared.has(pkgName))
          fail(rel, `imports ${pkgName}, not in package.json dependencies`);
      } else if (!declared.has(pkgName) && !isPrivateGroup) {
        // Type-only imports of devDependencies are allowed (e.g. host types).
        const typeOnly = new RegExp(
          `import\\s+type\\s[^;]*['"]${spec.replace(/[/.*+?^${}()|[\]\\]/g, '\\$&')}['"]`,
        );
        const devDeclared = Object.keys(w.pkg.devDependencies ?? {}).includes(pkgName);
        if (!(devDeclared && typeOnly.test(text)))
          fail(rel, `imports ${pkgName}, not in package.json dependencies`);
      }
    }
    if (file.endsWith(join('src', 'index.ts')) && /\bexport\s*\*/.test(text)) {
      fail(rel, 'uses `export *`; export by name so index.ts stays the table of contents');
    }
  }

  // Benches measure what users run: the built packages, never the TypeScript sources.
  for (const [script, command] of Object.entries(w.pkg.scripts ?? {})) {
    if (script.startsWith('bench') && /(--conditions[= ]|-C\s*)@wf\/source\b/.test(command))
      fail(where, `script "${script}" runs the sources (@wf/source condition); benches run dist/`);
  }
  for (const file of sourceFiles(join(w.dir, 'bench'))) {
    const rel = relative(root, file);
    // Types may come from the sources; code may not (`import type`, `typeof import(...)`).
    const text = readFileSync(file, 'utf8')
      .replace(/\bimport\s+type\s[^;]*;/g, '')
      .replace(/\btypeof\s+import\s*\([^)]*\)/g, '');
    for (const spec of specifiers(text)) {
      if (spec.startsWith('.') && resolve(dirname(file), spec).startsWith(join(w.dir, 'src') + '/'))
        fail(
          rel,
          `imports ${spec}, the package's sources: a bench imports ${name} by name (dist/)`,
        );
    }
  }
}

// Cycles over all internal edges (dependencies and devDependencies).
const edges = new Map(
  all.map((w) => [
    w.pkg.name,
    [...Object.keys(w.pkg.dependencies ?? {}), ...Object.keys(w.pkg.devDependencies ?? {})].filter(
      internal,
    ),
  ]),
);
const state = new Map();
const stack = [];
function visit(n) {
  if (state.get(n) === 'done') return;
  if (state.get(n) === 'active') {
    fail('graph', `cycle: ${[...stack.slice(stack.indexOf(n)), n].join(' -> ')}`);
    return;
  }
  state.set(n, 'active');
  stack.push(n);
  for (const m of edges.get(n) ?? []) visit(m);
  stack.pop();
  state.set(n, 'done');
}
for (const n of edges.keys()) visit(n);

// The solution tsconfig must list every published-layer package.
const solution = readJson(join(root, 'tsconfig.json'));
const solutionRefs = new Set((solution.references ?? []).map((r) => resolve(root, r.path)));
for (const w of all) {
  if (PRIVATE_GROUPS.includes(w.group)) continue;
  if (!solutionRefs.has(w.dir))
    fail('tsconfig.json', `solution lacks a reference to ${relative(root, w.dir)}`);
}

if (problems.length) {
  console.error(`graph check: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`graph check: ${all.length} workspaces, layering as docs/design.md#layers`);
