#!/usr/bin/env node
// `pnpm wf <verb>` in a clone: builds apps/cli and the packages it references only when a source
// changed since the last build (a stat walk, milliseconds; `tsc -b` costs seconds even when it has
// nothing to do), printing progress while it builds, then runs the `wf` bin in this process.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const entry = join(root, 'apps/cli');
// WF_BUILD_STAMP moves the stamp (tests use a temp one, leaving the developer's alone)
const stampFile =
  process.env.WF_BUILD_STAMP ?? join(root, 'node_modules/.cache/wf-cli/build-stamp');

/** apps/cli and every project its tsconfig references, transitively. */
function projects() {
  const seen = new Set();
  const visit = (dir) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const config = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'));
    for (const ref of config.references ?? []) visit(resolve(dir, ref.path));
  };
  visit(entry);
  return [...seen];
}

/** Newest mtime among a project's build inputs; Infinity when an output folder is missing. */
function newestInput(dir) {
  if (!existsSync(join(dir, 'dist'))) return Number.POSITIVE_INFINITY;
  let newest = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(join(dir, 'src'));
  for (const f of ['tsconfig.json', 'package.json'])
    newest = Math.max(newest, statSync(join(dir, f)).mtimeMs);
  return newest;
}

function stamp() {
  try {
    return Number(readFileSync(stampFile, 'utf8'));
  } catch {
    return 0;
  }
}

async function build(dirs) {
  const started = Date.now();
  process.stderr.write(
    `wf: building apps/cli and the ${dirs.length - 1} packages it uses (once; later calls skip this until a source changes)\n`,
  );
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  // tsc -b trusts its .tsbuildinfo and calls a project with a deleted dist up to date: force then
  const missing = dirs.some((d) => !existsSync(join(d, 'dist')));
  const args = [tsc, '-b', '--verbose', ...(missing ? ['--force'] : []), entry];
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    output += chunk;
    // tsc -b --verbose announces each project it compiles: that is our progress line
    for (const m of chunk.matchAll(/Building project '([^']+)'/g))
      process.stderr.write(`wf:   compiling ${relative(root, dirname(m[1]))}\n`);
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const code = await new Promise((r) => child.on('close', r));
  if (code !== 0) {
    process.stderr.write(`wf: the build failed:\n${output}`);
    process.exit(1);
  }
  process.stderr.write(`wf: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const dirs = projects();
const last = stamp();
if (dirs.some((d) => newestInput(d) > last)) {
  // the stamp is the time the build started: an edit made during the build stays newer than it
  const startedAt = Date.now();
  await build(dirs);
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, String(startedAt));
}
// the bin bundles dist/cli again when this build changed it (bin/wf.cjs)
await import(pathToFileURL(join(entry, 'bin/wf.cjs')).href);
