// Writes the V8 code caches of the CLI's bundles (loader.cjs reads them) by running the
// built bin on a few verbs in a scratch project: a cache made at the end of a real call holds the
// bytecode of every function that call compiled, not only the top level a bare compile would give.
// Run by bundle.mjs after it writes the bundles. `wf run` and `wf resume` read caches made
// by `wf run` (profile "run": the functions of the engine path), the other verbs caches made by
// plain verbs (profile ""). All are made with V8's default flags, which every reader starts with:
// V8 rejects a cache made under other flags (the --liftoff-only that `wf run`'s sandbox sets comes
// after its bundles are compiled, from the worker thread: see @wf/sandbox's wasmTierUp).
// The scratch project lives in a temp dir with its own HOME, and the children get no NODE_OPTIONS
// (a V8 flag there would make caches every normal `wf` call rejects).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** apps/cli: this file is src/startup/write-code-caches.mjs. */
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(PACKAGE, 'bin', 'wf.cjs');
const DIST = join(PACKAGE, 'dist', 'cli');
const { cachePath } = createRequire(import.meta.url)('./loader.cjs');

/** The verbs run in order, and the caches each writes (bundle file names in dist/cli). */
export const TRAINING = [
  {
    args: ['run', 'five.workflow.js', '--delay-ms', '0', '--no-progress', '--seed', '1'],
    profile: 'run',
    writes: ['wf.cjs', 'sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'],
  },
  { args: ['runs'], profile: '', writes: ['wf.cjs'] },
  { args: ['check', 'five.workflow.js'], profile: '', writes: ['contract.cjs', 'parser.cjs'] },
  { args: ['save', 'last', 'five'], profile: '', writes: [] },
  { args: ['list'], profile: '', writes: ['workflows.cjs'] },
];

const WORKFLOW = `async function run(wf, args) {
  return wf.parallel([1, 2, 3, 4, 5].map((i) => () => wf.runAgent({ name: 'a' + i, prompt: 'p' })));
}
`;

/** Runs the training verbs; returns the caches written. Throws when a verb fails. */
export function writeCodeCaches() {
  const root = mkdtempSync(join(tmpdir(), 'wf-code-cache-'));
  try {
    const project = join(root, 'project');
    mkdirSync(project);
    mkdirSync(join(root, 'dsh-home'));
    writeFileSync(join(project, 'five.workflow.js'), WORKFLOW);
    const written = [];
    for (const step of TRAINING) {
      const out = spawnSync(process.execPath, [BIN, ...step.args], {
        cwd: project,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: root,
          DSH_HOME: join(root, 'dsh-home'),
          LANG: 'C.UTF-8',
          NO_COLOR: '1',
          WF_WRITE_CODE_CACHE: step.writes.join(','),
        },
        encoding: 'utf8',
      });
      if (out.status !== 0)
        throw new Error(
          `write-code-caches.mjs: wf ${step.args.join(' ')} failed: ${out.stderr}${out.stdout}`,
        );
      for (const name of step.writes) {
        const file = cachePath(join(DIST, name), step.profile);
        const st = statSync(file, { throwIfNoEntry: false });
        if (st === undefined)
          throw new Error(`write-code-caches.mjs: wf ${step.args.join(' ')} wrote no ${file}`);
        written.push({ file, bytes: st.size });
      }
    }
    return written;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const caches = writeCodeCaches();
  for (const c of caches) process.stderr.write(`${c.file}: ${Math.round(c.bytes / 1024)} KiB\n`);
}
