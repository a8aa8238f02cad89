// The loader of the CLI's bundles (README.md beside this file): which bundles a verb needs,
// rebuilt in a clone when tsc's output is newer, and compiled with the V8 code caches written at
// build time, so that most of a short `wf` call's compile becomes deserialising bytecode V8
// already made once. Node 20 has no module.enableCompileCache, so this module compiles the
// bundles itself, through Node's require (require.cache, the module's require and import() are
// Node's own) with only the compile step changed.
//
// The caches are written at build time only (write-code-caches.mjs runs a few verbs with
// WF_WRITE_CODE_CACHE set), next to their bundles, and are as trusted as the bundles: V8 code
// caches are not safe to load from anyone else, so `wf` never reads one from a shared or user
// directory. Each cache is bound to its bundle three ways, and is ignored when any fails:
// - its first line carries the key that ends the bundle (`//# wfCodeCacheKey=`, a SHA-256 of the
//   bundle's text that bundle.mjs appends): a rebuilt bundle has a new key;
// - it is not older than the bundle (a bundle edited by hand in a clone is newer);
// - its V8 version and flag hashes are this process's (sameV8; V8 checks them again, with the
//   source's length, and rejects a mismatch).
// A missing, stale or foreign cache costs the read of the file and a small probe: the bundle is
// then compiled by Node's own compile step, as without this module.
'use strict';
const { readFileSync, statSync, writeFileSync, renameSync } = require('node:fs');
const Module = require('node:module');
const { basename, dirname } = require('node:path');
const vm = require('node:vm');

const KEY_PREFIX = '//# wfCodeCacheKey=';
/** The main module (the bin), as every module's require.main. */
const MAIN = require.main;
const HEADER = 'wf-code-cache ';

/**
 * Bundle file name -> { cache: path of its cache file, script: the vm.Script it was compiled to,
 * how: see compiledWith, early: { content, script } compiled by precompileBundles, not run yet }
 */
const bundles = new Map();
let installed = false;
/** Set at build time (WF_WRITE_CODE_CACHE): every bundle compiles through vm.Script. */
let training = false;

/**
 * The cache file of a bundle for a training profile: a cache holds the functions the call that
 * made it ran, so `wf run` and `wf resume` read caches a `wf run` made (profile 'run': the engine
 * path through wf.cjs and the other bundles), the other verbs caches plain verbs made ('').
 */
function cachePath(file, profile) {
  return profile === '' ? `${file}.cache` : `${file}.${profile}.cache`;
}

/** The key at the end of a bundle's text, or undefined when it has none. */
function keyOf(content) {
  const end = content.endsWith('\n') ? content.length - 1 : content.length;
  const at = content.lastIndexOf('\n', end - 1) + 1;
  const line = content.slice(at, end);
  return line.startsWith(KEY_PREFIX) ? line.slice(KEY_PREFIX.length) : undefined;
}

/** The V8 data of a bundle's cache when it belongs to this text of the bundle, else undefined. */
function readCache(file, content) {
  const entry = bundles.get(file);
  const key = keyOf(content);
  if (entry === undefined || key === undefined) return undefined;
  try {
    const data = readFileSync(entry.cache);
    const nl = data.indexOf(0x0a);
    if (nl < 0 || data.toString('latin1', 0, nl) !== `${HEADER}${key}`) return undefined;
    const cacheTime = statSync(entry.cache).mtimeMs;
    if (cacheTime < statSync(file).mtimeMs) return undefined;
    return data.subarray(nl + 1);
  } catch {
    return undefined; // no cache (a build without one, an install that dropped it)
  }
}

/** The header of a cache this process's V8 makes: its version and flag hashes (see sameV8). */
let probe;

/**
 * Whether V8 would take this cache: the same magic number and version hash (bytes 0-7) and the same
 * flag hash (bytes 12-15) as a cache of an empty script made now (V8's code cache header, as
 * Node 20's V8 11.3 lays it out; another layout only means the cache is not used). V8 checks
 * these itself, but only after the slower vm.Script compile has begun.
 */
function sameV8(data) {
  probe ??= new vm.Script('', { filename: 'wf-code-cache-probe' }).createCachedData();
  return (
    data.length > 16 &&
    probe.length > 16 &&
    data.compare(probe, 0, 8, 0, 8) === 0 &&
    data.compare(probe, 12, 16, 12, 16) === 0
  );
}

/** A module's require, as Node makes it for the module's own code. */
function requireFor(mod) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  require.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.main = MAIN;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

/**
 * The bundle compiled with its cache through vm.Script, or undefined for Node's own compile
 * (entry.how says which).
 */
function compileScript(entry, filename, content) {
  const cachedData = readCache(filename, content);
  // Without a cache this V8 takes, Node's own compile: vm.Script without a cache is slower than
  // Node's compile step, so a build for another Node version costs nothing.
  // Training compiles through vm.Script either way, to write the cache at exit.
  if ((cachedData === undefined || !sameV8(cachedData)) && !training) {
    entry.how = 'node';
    return undefined;
  }
  const script = new vm.Script(Module.wrap(content), {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  entry.script = script;
  entry.how = cachedData !== undefined && script.cachedDataRejected === false ? 'cache' : 'source';
  return script;
}

/**
 * Compiles every bundle given to useCodeCache that is not compiled yet, now, from its cache; each
 * runs later, when it is first required, as usual. For `wf run` and `wf resume`, right after
 * their sandbox started its worker thread: that thread then sets V8's --liftoff-only
 * (@wf/sandbox's wasmTierUp), and V8 rejects a cache made under other flags, so a bundle first
 * compiled after that (the parser, well after the spawn) would compile from source.
 * Best effort: a bundle that cannot be read here is compiled when required.
 */
function precompileBundles() {
  for (const [file, entry] of bundles) {
    if (entry.how !== undefined || entry.early !== undefined) continue;
    try {
      const content = readFileSync(file, 'utf8');
      const script = compileScript(entry, file, content);
      if (script !== undefined) entry.early = { content, script };
    } catch {
      // unread or uncompiled here: its require compiles it as usual
    }
  }
}

function install() {
  if (installed) return;
  installed = true;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileWithCache(content, filename, format) {
    const entry = bundles.get(filename);
    if (entry === undefined || format === 'module')
      return compile.call(this, content, filename, format);
    // Compiled ahead by precompileBundles, from this very text: used as it is.
    const early = entry.early?.content === content ? entry.early : undefined;
    entry.early = undefined;
    const script = early?.script ?? compileScript(entry, filename, content);
    if (script === undefined) return compile.call(this, content, filename, format);
    const wrapper = script.runInThisContext({ displayErrors: true });
    return Reflect.apply(wrapper, this.exports, [
      this.exports,
      requireFor(this),
      this,
      filename,
      dirname(filename),
    ]);
  };
}

/**
 * Compiles these bundle files with their caches from now on (each when it is first required).
 * `profile` names the caches' training (cachePath): 'run' or ''.
 */
function useCodeCache(files, profile) {
  // An integrity policy checks every module's text in the compile step this replaces.
  const policy = /--experimental-policy|--policy-integrity/;
  if (process.execArgv.some((a) => policy.test(a)) || policy.test(process.env.NODE_OPTIONS ?? ''))
    return;
  // Off on request: the start-up bench's baseline, or to rule the caches out when debugging.
  if (process.env.WF_CODE_CACHE === 'off') return;
  for (const file of files)
    if (!bundles.has(file))
      bundles.set(file, { cache: cachePath(file, profile), script: undefined });
  install();
  const write = process.env.WF_WRITE_CODE_CACHE;
  if (write !== undefined) {
    training = true;
    // Build time (write-code-caches.mjs): at exit, the bytecode of every function this call ran.
    const names = new Set(write.split(','));
    process.once('exit', () => {
      for (const [file, entry] of bundles) {
        if (entry.script === undefined || !names.has(basename(file))) continue;
        const key = keyOf(readFileSync(file, 'utf8'));
        if (key === undefined) continue;
        const temp = `${entry.cache}.${process.pid}.tmp`;
        writeFileSync(
          temp,
          Buffer.concat([Buffer.from(`${HEADER}${key}\n`), entry.script.createCachedData()]),
        );
        renameSync(temp, entry.cache);
      }
    });
  }
}

/**
 * `import()` for the bundles: bundle.mjs rewrites every import() in them to call this.
 * A script compiled from a V8 code cache on Node 20 has lost the options Node finds its import()
 * handler by (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so the import runs here, in a module Node
 * compiled itself. A relative specifier is resolved from the bundle (`from`, its file name); a bare
 * one resolves the same from here, in the same package.
 */
function dynamicImport(specifier, options, from) {
  const target =
    typeof specifier === 'string' && /^\.\.?\//.test(specifier)
      ? new URL(specifier, require('node:url').pathToFileURL(from)).href
      : specifier;
  return options === undefined ? import(target) : import(target, options);
}

/**
 * How a bundle was compiled, for tests and benches: 'cache' (V8 took its cache), 'source'
 * (vm.Script without one: training, or a cache V8 rejected), 'node' (Node's own compile step), or
 * undefined (not loaded, or not through this module).
 */
function compiledWith(file) {
  return bundles.get(file)?.how;
}

/** Whether a bundle was compiled from its cache (V8 accepted it). */
function usedCodeCache(file) {
  return compiledWith(file) === 'cache';
}

/** The bundles each verb may load, beside wf.cjs (written together by bundle.mjs). */
const LAZY = ['sandbox.cjs', 'engine.cjs', 'contract.cjs', 'parser.cjs', 'workflows.cjs'];
/** Verbs that read only the run store: they need wf.cjs alone. */
const STORE_VERBS = ['runs', 'show', 'events', 'report', 'delete-run', 'prune', 'help', undefined];

/**
 * Makes `wf <argv>` ready to run from its bundle (`bundle`, dist/cli/wf.cjs under `root`): in a
 * clone, bundles again when `tsc -b` ran since the last bundle; refuses (exit 1) an install that
 * lacks a bundle the verb needs; compiles the bundles with their code caches from now on; for
 * `run` and `resume`, starts the sandbox's worker thread now, before the bundle is compiled, and
 * compiles the other bundles before that thread sets V8's --liftoff-only (precompileBundles).
 * Returns what the bin calls with main()'s promise: `settle` closes a sandbox no verb took.
 */
function load(root, bundle, argv) {
  const { join } = require('node:path');
  // In a clone, `tsc -b` rewrites tsconfig.tsbuildinfo whenever it builds the CLI or a package it
  // uses: a bundle older than that is stale (published packages have no buildinfo).
  const built = statSync(join(root, 'tsconfig.tsbuildinfo'), { throwIfNoEntry: false });
  const bundled = statSync(bundle, { throwIfNoEntry: false });
  if (built !== undefined && (bundled === undefined || bundled.mtimeMs < built.mtimeMs)) {
    process.stderr.write('wf: bundling dist/cli (it changed since the last bundle)\n');
    const out = require('node:child_process').spawnSync(
      process.execPath,
      [join(__dirname, 'bundle.mjs')],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (out.status !== 0) process.exit(1);
  }
  // The engine and the contract only for the verbs that run or check workflows, the capsule
  // schemas and shipped workflows for every verb that may read a workflow; the run-store verbs
  // need neither. Only the verbs that need one pay for looking.
  const lazy = (name) => join(root, 'dist', 'cli', name);
  const verb = argv[2];
  const needs = ['run', 'resume', 'check', 'worker'].includes(verb)
    ? [bundle, ...LAZY.map(lazy)]
    : STORE_VERBS.includes(verb)
      ? [bundle]
      : [bundle, lazy('workflows.cjs')];
  const missing = needs.find((file) => statSync(file, { throwIfNoEntry: false }) === undefined);
  if (missing !== undefined) {
    process.stderr.write(`wf: ${missing} is missing: this install of @wf/cli is incomplete\n`);
    process.exit(1);
  }
  // `run` and `resume` read the caches a `wf run` trained, the other verbs those plain verbs did.
  // (`run` and `resume` also ask their sandbox for V8's --liftoff-only: src/cli/run.ts, wasmTierUp.)
  const runs = verb === 'run' || verb === 'resume';
  useCodeCache([bundle, ...LAZY.map(lazy)], runs ? 'run' : '');
  // Not for help or a bare verb: nothing would take the sandbox.
  const early =
    runs && argv.length > 3 && !argv.includes('--help') && !argv.includes('-h')
      ? require('./early-sandbox.cjs')
      : undefined;
  if (early !== undefined) {
    early.startSandbox(lazy('sandbox.cjs'));
    precompileBundles();
  }
  return {
    /** A usage error leaves the sandbox untaken: closed once booted (its boot holds the process). */
    settle(done) {
      if (early !== undefined) done.finally(() => early.closeUntaken());
    },
  };
}

module.exports = {
  load,
  useCodeCache,
  precompileBundles,
  usedCodeCache,
  compiledWith,
  dynamicImport,
  cachePath,
  KEY_PREFIX,
  HEADER,
};
