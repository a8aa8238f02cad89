// The contract's name lists, as data, with the one-line repair hint a model gets for each.
// Auditors: this file and checker.ts are the whole policy.

const NO_MODULES =
  'workflows cannot load code; do the work with wf methods (wf.runAgent, wf.readFile)';
const NO_GLOBAL = 'refer to values directly; there is no global object in a workflow';
const NO_TIMERS = 'there are no timers; sequence work with await, wf.parallel or wf.wait(taskId)';
const NO_NETWORK = 'there is no network; ask a child agent to fetch it with wf.runAgent';
const NO_CODEGEN = 'write the code directly; dynamic code generation is not allowed';
const NO_NONDETERMINISM = 'not available: workflows must be deterministic to resume; remove it';

/** Host names refused as free references (reads, writes, typeof, calls), with their hints. */
export const FORBIDDEN_GLOBALS: ReadonlyMap<string, string> = new Map([
  ['require', NO_MODULES],
  ['module', NO_MODULES],
  ['exports', 'return the result from run(wf, args) instead of exporting it'],
  ['importScripts', NO_MODULES],
  ['__dirname', 'use paths relative to the project and read files with wf.readFile'],
  ['__filename', 'use paths relative to the project and read files with wf.readFile'],
  ['process', 'read configuration from args (the second parameter of run) instead of process'],
  ['Buffer', 'use strings and arrays; binary host buffers are not available'],
  ['global', NO_GLOBAL],
  ['globalThis', NO_GLOBAL],
  ['self', NO_GLOBAL],
  ['window', NO_GLOBAL],
  ['frames', NO_GLOBAL],
  ['Deno', 'workflows run in the wf sandbox, not Deno; use wf methods'],
  ['Bun', 'workflows run in the wf sandbox, not Bun; use wf methods'],
  ['Worker', 'use wf.parallel or wf.spawnAgent for concurrency'],
  ['eval', NO_CODEGEN],
  ['Function', NO_CODEGEN],
  ['AsyncFunction', NO_CODEGEN],
  ['GeneratorFunction', NO_CODEGEN],
  ['AsyncGeneratorFunction', NO_CODEGEN],
  ['WebAssembly', 'WebAssembly is not available in a workflow; express the logic in JavaScript'],
  ['fetch', NO_NETWORK],
  ['XMLHttpRequest', NO_NETWORK],
  ['WebSocket', NO_NETWORK],
  ['EventSource', NO_NETWORK],
  ['setTimeout', NO_TIMERS],
  ['setInterval', NO_TIMERS],
  ['setImmediate', NO_TIMERS],
  ['queueMicrotask', 'use await or Promise.resolve().then(...) instead of queueMicrotask'],
  ['clearTimeout', NO_TIMERS],
  ['clearInterval', NO_TIMERS],
  ['clearImmediate', NO_TIMERS],
  ['SharedArrayBuffer', NO_NONDETERMINISM],
  ['Atomics', NO_NONDETERMINISM],
  ['WeakRef', NO_NONDETERMINISM],
  ['FinalizationRegistry', NO_NONDETERMINISM],
]);

/** Member names that reach prototypes, constructors or call stacks. */
export const FORBIDDEN_MEMBERS: ReadonlySet<string> = new Set([
  'constructor',
  'prototype',
  '__proto__',
  'caller',
  'callee',
  'arguments',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

// Maps, not object literals: a lookup keyed by source text must never reach Object.prototype.
export const FORBIDDEN_MEMBER_HINT: ReadonlyMap<string, string> = new Map([
  ['constructor', 'compare values with typeof/Array.isArray instead of reading .constructor'],
  [
    'prototype',
    'use plain objects and functions; prototypes are not reachable from a workflow (for an own-property check use Object.hasOwn(obj, key))',
  ],
  ['__proto__', 'use Object.create(null) or a plain object literal instead of __proto__'],
  ['arguments', 'use rest parameters (...params) instead of .arguments'],
]);
export const DEFAULT_MEMBER_HINT = 'this member reaches host internals; remove the access';

/**
 * The safe alternative to a borrowed prototype method (`Object.prototype.hasOwnProperty.call`,
 * `Array.prototype.slice.call`), or undefined when there is no more specific hint.
 */
export function prototypeMethodHint(owner: string | null, method: string): string | undefined {
  if (method === 'hasOwnProperty')
    return 'use Object.hasOwn(obj, key) instead of Object.prototype.hasOwnProperty.call(obj, key)';
  if (method === 'propertyIsEnumerable')
    return 'use Object.keys(obj).includes(key) instead of borrowing propertyIsEnumerable';
  if (owner === 'Object' && method === 'toString')
    return 'use typeof, Array.isArray(value) or String(value) instead of Object.prototype.toString';
  if (owner === 'Array')
    return `call it on the array itself (list.${method}(...)), or make one first with Array.from(value)`;
  if (owner === 'String') return `call it on the string itself: String(value).${method}(...)`;
  return undefined;
}

/** Node built-in module names (Node 20). Any `node:` or `bun:` specifier is refused too. */
export const NODE_MODULES: ReadonlySet<string> = new Set([
  'assert',
  'assert/strict',
  'async_hooks',
  'buffer',
  'child_process',
  'cluster',
  'console',
  'constants',
  'crypto',
  'dgram',
  'diagnostics_channel',
  'dns',
  'dns/promises',
  'domain',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'inspector',
  'inspector/promises',
  'module',
  'net',
  'os',
  'path',
  'path/posix',
  'path/win32',
  'perf_hooks',
  'process',
  'punycode',
  'querystring',
  'readline',
  'readline/promises',
  'repl',
  'stream',
  'stream/consumers',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'sys',
  'test',
  'timers',
  'timers/promises',
  'tls',
  'trace_events',
  'tty',
  'url',
  'util',
  'util/types',
  'v8',
  'vm',
  'wasi',
  'worker_threads',
  'zlib',
]);

export function isNodeModuleSpecifier(value: string): boolean {
  return value.startsWith('node:') || value.startsWith('bun:') || NODE_MODULES.has(value);
}

/**
 * Globals the QuickJS workflow runtime defines (quickjs.md 1.7) minus FORBIDDEN_GLOBALS. A free
 * reference to anything else is WF_SOURCE_LINT_UNKNOWN_GLOBAL: a typo, or a host API that is absent.
 */
export const KNOWN_GLOBALS: ReadonlySet<string> = new Set([
  'undefined',
  'NaN',
  'Infinity',
  'Object',
  'Array',
  'Number',
  'String',
  'Boolean',
  'Symbol',
  'BigInt',
  'Math',
  'JSON',
  'Date',
  'RegExp',
  'Promise',
  'Proxy',
  'Reflect',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'Iterator',
  'ArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
  'Error',
  'EvalError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
  'TypeError',
  'URIError',
  'AggregateError',
  'InternalError',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'encodeURI',
  'encodeURIComponent',
  'decodeURI',
  'decodeURIComponent',
  'escape',
  'unescape',
]);

/** Globals the @wf/bridge prelude defines for workflows: `console`, whose methods write through wf.log. */
export const PRELUDE_GLOBALS: ReadonlySet<string> = new Set(['console']);

export const UNKNOWN_GLOBAL_HINT: ReadonlyMap<string, string> = new Map([
  ['wf', 'pass wf into the helper as a parameter (it exists only inside run(wf, args))'],
  ['args', 'pass args into the helper as a parameter (it exists only inside run(wf, args))'],
  ['document', 'there is no DOM; ask a child agent via wf.runAgent'],
  ['navigator', 'there is no browser; ask a child agent via wf.runAgent'],
  ['performance', 'there is no clock API; use Date.now() (a logical clock) or wf.budget'],
  ['structuredClone', 'use JSON.parse(JSON.stringify(value)) to copy plain data'],
  ['TextEncoder', 'work with strings; encoders are not available'],
  ['TextDecoder', 'work with strings; decoders are not available'],
  ['URL', 'parse URLs with string methods or a regular expression'],
  ['crypto', 'randomness comes from Math.random (seeded); hashing is not available'],
  ['Intl', 'Intl is not available; format values with string methods'],
]);
export const DEFAULT_UNKNOWN_GLOBAL_HINT =
  'declare it (const/function) or take it from args; it is not defined in a workflow';
