#!/usr/bin/env node
// Generates the layer table of docs/architecture.md and docs/design.md from the allowed imports
// of tooling/repo/graph-check.mjs (its `--layers` output), so the documents show the layering the
// check enforces and never drift from it. Each package's description is its package.json's.
// The block between the BEGIN/END generated:layers markers is replaced; the rest of each file is
// left alone. `--check` compares instead of writing and fails on a difference.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TARGETS = ['docs/architecture.md', 'docs/design.md'];
export const BEGIN = '<!-- BEGIN generated:layers (tooling/repo/gen-layers.mjs) -->';
export const END = '<!-- END generated:layers -->';

/** The allowed runtime imports per package, as graph-check.mjs under `root` declares them. */
export function readAllowed(root) {
  const out = execFileSync(
    process.execPath,
    [join(root, 'tooling', 'repo', 'graph-check.mjs'), '--layers'],
    { encoding: 'utf8' },
  );
  return JSON.parse(out);
}

/** Workspace folder and description of each package name under packages/ and apps/. */
export function readWorkspaces(root) {
  const found = new Map();
  for (const group of ['packages', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const manifest = join(dir, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      found.set(pkg.name, { dir: `${group}/${name}`, description: pkg.description ?? '' });
    }
  }
  return found;
}

/** Longest path from each package down to a package that imports nothing. */
function heights(allowed) {
  const memo = new Map();
  const height = (name, seen = new Set()) => {
    if (memo.has(name)) return memo.get(name);
    if (seen.has(name)) throw new Error(`gen-layers: the allowed imports have a cycle at ${name}`);
    seen.add(name);
    const below = (allowed[name] ?? []).map((d) => height(d, seen) + 1);
    const h = Math.max(0, ...below);
    memo.set(name, h);
    return h;
  };
  for (const name of Object.keys(allowed)) height(name);
  return memo;
}

/** Edges a -> b of the allowed graph that no longer path a -> ... -> b implies. */
function reduction(allowed, skip) {
  const reach = (from, to, first) => {
    const stack = (allowed[from] ?? []).filter((d) => d !== first);
    const seen = new Set();
    while (stack.length > 0) {
      const n = stack.pop();
      if (n === to) return true;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(allowed[n] ?? []));
    }
    return false;
  };
  const edges = [];
  for (const [from, tos] of Object.entries(allowed))
    for (const to of tos) if (!skip.has(to) && !reach(from, to, to)) edges.push([from, to]);
  return edges;
}

const code = (name) => `\`${name}\``;
const nodeId = (name) => name.replace(/^@/, '').replace(/[^a-zA-Z0-9]/g, '_');

/** The generated block (markers included), the same for every target file in docs/. */
export function render(allowed, workspaces) {
  const names = Object.keys(allowed);
  for (const name of names)
    if (!workspaces.has(name))
      throw new Error(`gen-layers: ${name} is in graph-check.mjs but has no package.json`);
  // Packages that import nothing and that every other package may import (the error kit):
  // named once above the table instead of in every row.
  const leaves = new Set(
    names.filter(
      (n) => allowed[n].length === 0 && names.every((m) => m === n || allowed[m].includes(n)),
    ),
  );
  const height = heights(allowed);
  const order = [...names].sort((a, b) => height.get(b) - height.get(a) || a.localeCompare(b));
  const lines = [BEGIN, ''];
  if (leaves.size > 0)
    lines.push(
      `Every package may import ${[...leaves].map(code).join(', ')}, which imports nothing.`,
      '',
    );
  lines.push('| package | what it is | may import |', '| --- | --- | --- |');
  for (const name of order) {
    const { dir, description } = workspaces.get(name);
    const below = allowed[name].filter((d) => !leaves.has(d));
    const may = leaves.has(name)
      ? 'nothing'
      : below.length === 0
        ? '—'
        : below.map(code).join(', ');
    lines.push(
      `| [${code(name)}](../${dir}/README.md) | ${description.replace(/\|/g, '\\|')} | ${may} |`,
    );
  }
  lines.push('', 'The same graph without the edges another path implies:', '', '```mermaid');
  lines.push('flowchart TD');
  for (const name of order) if (!leaves.has(name)) lines.push(`  ${nodeId(name)}["${name}"]`);
  for (const [from, to] of reduction(allowed, leaves))
    lines.push(`  ${nodeId(from)} --> ${nodeId(to)}`);
  lines.push('```', '', END);
  return lines.join('\n');
}

/** `text` with its generated block replaced by `block`; throws when the markers are missing. */
export function splice(text, block, file) {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin)
    throw new Error(`gen-layers: ${file} lacks the generated:layers markers`);
  return text.slice(0, begin) + block + text.slice(end + END.length);
}

function main() {
  const argv = process.argv.slice(2);
  const rootArg = argv.indexOf('--root');
  const root =
    rootArg >= 0
      ? resolve(argv[rootArg + 1])
      : resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const check = argv.includes('--check');
  try {
    const block = render(readAllowed(root), readWorkspaces(root));
    const stale = [];
    for (const file of TARGETS) {
      const path = join(root, file);
      const text = readFileSync(path, 'utf8');
      const next = splice(text, block, file);
      if (next === text) continue;
      if (check) stale.push(file);
      else writeFileSync(path, next);
    }
    if (stale.length > 0) {
      process.stderr.write(
        `gen-layers: ${stale.join(', ')} ${stale.length === 1 ? 'is' : 'are'} stale: run \`node tooling/repo/gen-layers.mjs\`\n`,
      );
      process.exit(1);
    }
    process.stdout.write(
      check ? 'gen-layers: up to date\n' : `gen-layers: wrote ${TARGETS.join(', ')}\n`,
    );
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
