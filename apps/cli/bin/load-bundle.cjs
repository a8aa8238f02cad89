// Loads one of the CLI's CommonJS bundles (dist/cli/wf.cjs, dist/cli/engine.cjs) with the V8 code
// cache that scripts/bundle.mjs wrote beside it (<bundle>.cache), so that Node does not parse and
// compile the bundle again on every call (issue 16: wf.cjs is ~420 KB; its compile went from ~11
// to ~3 ms). The cache sits beside the bundle, so it is exactly as trusted as the code it compiles.
// Its 48-byte header holds the build id of the bundle's banner (one bundle.mjs run writes both)
// and a checksum of the V8 data: V8 itself checks only its own version, its flags and the source's
// length, and a release build runs damaged data as it is (measured: a segfault). A missing, stale,
// damaged or rejected cache (another Node) costs nothing but the compile it would have saved.
'use strict';
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname } = require('node:path');
const vm = require('node:vm');

const HEADER_BYTES = 48;
const BUILD_ID = /^\/\/ wf-build: ([0-9a-f]{32})$/m;

/** FNV-1a over 32-bit words, then the last bytes: a damaged-file check, not a signature. */
function checksum(bytes) {
  const data = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes);
  const words = data.length >>> 2;
  const view = new Int32Array(data.buffer, data.byteOffset, words);
  let h = 0x811c9dc5;
  for (let i = 0; i < words; i++) h = Math.imul(h ^ view[i], 0x01000193);
  for (let i = words * 4; i < data.length; i++) h = Math.imul(h ^ data[i], 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** The cache file for V8's `data`, made by the same build as the bundle `buildId` names. */
function cacheFile(buildId, data) {
  const header = `${buildId} ${checksum(data)}`.padEnd(HEADER_BYTES - 1, ' ');
  return Buffer.concat([Buffer.from(`${header}\n`, 'latin1'), data]);
}

/** V8's data in `cache` when it belongs to `source`'s build and is intact; else why not. */
function cachedData(cache, source) {
  const id = BUILD_ID.exec(source.slice(0, 400))?.[1];
  const [cachedId, sum] = cache.toString('latin1', 0, HEADER_BYTES).trim().split(' ');
  if (id === undefined || cachedId !== id) return 'stale';
  const data = cache.subarray(HEADER_BYTES);
  return checksum(data) === sum ? data : 'damaged';
}

/**
 * @param {string} file absolute path of the bundle
 * @param {(outcome: 'accepted' | 'rejected' | 'stale' | 'damaged' | 'none') => void} [report]
 *   what became of the cache (tests)
 * @returns {any} the bundle's exports
 */
function loadBundle(file, report) {
  const loader = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  let cache;
  try {
    cache = readFileSync(`${file}.cache`);
  } catch {
    cache = undefined;
  }
  if (cache === undefined || loader === undefined) {
    report?.('none');
    return require(file);
  }
  const source = readFileSync(file, 'utf8');
  const data = cachedData(cache, source);
  if (typeof data === 'string') {
    report?.(data);
    return require(file);
  }
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData: data,
    // import() inside the bundle (the Restate verbs) behaves as in any CommonJS file
    importModuleDynamically: loader,
  });
  report?.(script.cachedDataRejected === true ? 'rejected' : 'accepted');
  // The bundle runs as the CommonJS loader would run it: its own module, require and cache entry.
  const m = new Module(file, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(dirname(file));
  Module._cache[file] = m;
  try {
    script
      .runInThisContext()
      .call(m.exports, m.exports, Module.createRequire(file), m, file, dirname(file));
  } catch (e) {
    delete Module._cache[file];
    throw e;
  }
  m.loaded = true;
  return m.exports;
}

module.exports = loadBundle;
module.exports.cacheFile = cacheFile;
