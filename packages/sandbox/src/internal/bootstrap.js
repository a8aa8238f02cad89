// The guest-side kernel: evaluated first in every fresh QuickJS context, before any prelude or
// guest code. It captures pristine intrinsics, installs the deterministic Math/Date guards, removes
// code generation and GC-observation globals, builds the capability functions over the hidden host
// call, fixes the override mistake and freezes the intrinsics (invariants 1 and 5).
// Plain JavaScript text on purpose: it runs inside QuickJS, never in Node.

const KERNEL_TEXT = `(function bootstrap(hostCall) {
'use strict';
const G = globalThis;
const ObjectC = Object;
const freeze = ObjectC.freeze;
const isFrozen = ObjectC.isFrozen;
const defineProperty = ObjectC.defineProperty;
const getOwnPropertyNames = ObjectC.getOwnPropertyNames;
const getOwnPropertyDescriptor = ObjectC.getOwnPropertyDescriptor;
const getPrototypeOf = ObjectC.getPrototypeOf;
const create = ObjectC.create;
const apply = Reflect.apply;
// f(receiver, ...args) for a captured method, without the argument array Reflect.apply needs
// (these run on every host call).
const uncurry = (f) => apply(Function.prototype.bind, Function.prototype.call, [f]);
const construct = Reflect.construct;
const ownKeys = Reflect.ownKeys;
const jsonParse = JSON.parse;
const jsonStringify = JSON.stringify;
const PromiseC = Promise;
const promiseReject = PromiseC.reject;
const ErrorC = Error;
const TypeErrorC = TypeError;
const stringSlice = String.prototype.slice;
const stringIndexOf = String.prototype.indexOf;
const NumberC = Number;
const arrayPush = Array.prototype.push;
const arrayPop = Array.prototype.pop;
const SetC = Set;
const MapC = Map;
const mapGet = MapC.prototype.get;
const mapSet = MapC.prototype.set;
const mapDelete = MapC.prototype.delete;
const indexOfOf = uncurry(stringIndexOf);
const sliceOf = uncurry(stringSlice);
const mapGetOf = uncurry(mapGet);
const mapSetOf = uncurry(mapSet);
const mapDeleteOf = uncurry(mapDelete);
const setHas = SetC.prototype.has;
const setAdd = SetC.prototype.add;
const imul = Math.imul;
const mathFloor = Math.floor;
const RealDate = Date;
const DateProto = RealDate.prototype;
const dateToString = DateProto.toString;

// Per-run settings arrive through configure(); the rest of the kernel is run-independent, so a
// context can be prepared before its run is known (it is still fresh: no guest code ran in it).
let configured = false;
let runSeed = 0;
let maxErrorChars = 2000;
let maxResultChars = 0;

const isObjectLike = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function';

// invariant 5: Math.random is a seeded PRNG (sfc32 seeded through splitmix32).
let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
const seedRandom = (seed) => {
  let x = (seed % 4294967296) >>> 0;
  const hi = mathFloor(seed / 4294967296) >>> 0;
  const next = () => {
    x = (x + 0x9e3779b9) | 0;
    let z = x ^ hi;
    z = imul(z ^ (z >>> 16), 0x85ebca6b);
    z = imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  s0 = next(); s1 = next(); s2 = next(); s3 = next();
};
const random = ({ random() {
  const t0 = (s0 + s1) | 0;
  s0 = s1 ^ (s1 >>> 9);
  s1 = (s2 + (s2 << 3)) | 0;
  s2 = (s2 << 21) | (s2 >>> 11);
  s3 = (s3 + 1) | 0;
  const t = (t0 + s3) | 0;
  s2 = (s2 + t) | 0;
  return (t >>> 0) / 4294967296;
} }).random;
defineProperty(Math, 'random', { value: random, writable: true, enumerable: false, configurable: true });

// invariant 5: Date reads a logical clock the host sets (journaled by the engine), never the
// host wall clock. Instances stay real Dates; the real constructor becomes unreachable.
let clock = 0;
const FakeDate = function Date(...args) {
  if (new.target === undefined) return apply(dateToString, construct(RealDate, [clock]), []);
  if (args.length === 0) return construct(RealDate, [clock], new.target);
  return construct(RealDate, args, new.target);
};
defineProperty(FakeDate, 'length', { value: 7 });
defineProperty(FakeDate, 'prototype', { value: DateProto, writable: false, enumerable: false, configurable: false });
defineProperty(FakeDate, 'now', { value: ({ now() { return clock; } }).now, writable: true, configurable: true });
defineProperty(FakeDate, 'parse', { value: RealDate.parse, writable: true, configurable: true });
defineProperty(FakeDate, 'UTC', { value: RealDate.UTC, writable: true, configurable: true });
defineProperty(DateProto, 'constructor', { value: FakeDate, writable: true, enumerable: false, configurable: true });
defineProperty(G, 'Date', { value: FakeDate, writable: true, enumerable: false, configurable: true });

// invariant 5: no code generation, no GC observation, no shared memory.
const FunctionProto = getPrototypeOf(function () {});
const AsyncFunctionProto = getPrototypeOf(async function () {});
const GeneratorFunctionProto = getPrototypeOf(function* () {});
const AsyncGeneratorFunctionProto = getPrototypeOf(async function* () {});
delete G.eval;
delete G.Function;
delete G.WeakRef;
delete G.FinalizationRegistry;
delete G.SharedArrayBuffer;
delete G.Atomics;
const throwingConstructor = ({ constructor() {
  throw new TypeErrorC('code generation is not available in the sandbox');
} }).constructor;
freeze(throwingConstructor);
for (const proto of [FunctionProto, AsyncFunctionProto, GeneratorFunctionProto, AsyncGeneratorFunctionProto]) {
  defineProperty(proto, 'constructor', { value: throwingConstructor, writable: false, enumerable: false, configurable: false });
}

// Bridge-internal helpers use only captured intrinsics and never write into objects the guest
// can reach before they are returned.
const cut = (s, n) => (s.length > n ? apply(stringSlice, s, [0, n]) : s);
// Where in the guest program an error was raised: the first workflow.js frame of its stack
// (the file name worker-lifecycle.js gives the wrapped program), as that file's line:column.
const GUEST_FRAME = 'workflow.js:';
const digitsAt = (s, i) => {
  let n = 0;
  let j = i;
  while (j < s.length && j - i < 9 && s[j] >= '0' && s[j] <= '9') {
    n = n * 10 + NumberC(s[j]);
    j += 1;
  }
  return j === i ? null : { n, end: j };
};
const frameOf = (stack) => {
  const at = apply(stringIndexOf, stack, [GUEST_FRAME]);
  if (at < 0) return undefined;
  const line = digitsAt(stack, at + GUEST_FRAME.length);
  if (line === null || stack[line.end] !== ':') return undefined;
  const column = digitsAt(stack, line.end + 1);
  return column === null ? undefined : { line: line.n, column: column.n };
};
const describe = (e) => {
  let name = 'Error';
  let message = '';
  let code;
  let frame;
  try {
    if (isObjectLike(e)) {
      const n = e.name;
      if (typeof n === 'string') name = n;
      const m = e.message;
      if (typeof m === 'string') message = m;
      const c = e.code;
      if (typeof c === 'string') code = c;
      const st = e.stack;
      if (typeof st === 'string') frame = frameOf(cut(st, 4000));
    } else if (typeof e === 'string') {
      message = e;
    } else if (typeof e === 'symbol') {
      message = 'a symbol was thrown';
    } else {
      message = '' + e;
    }
  } catch (_) {
    message = 'the thrown value could not be read';
  }
  const out = { name: cut(name, 100), message: cut(message, maxErrorChars) };
  if (code !== undefined) out.code = cut(code, 100);
  if (frame !== undefined) { out.line = frame.line; out.column = frame.column; }
  return jsonStringify(out);
};
const toError = (e) => {
  const err = new ErrorC(typeof e.message === 'string' ? e.message : 'capability failed');
  defineProperty(err, 'code', { value: e.code, writable: true, enumerable: true, configurable: true });
  if (e.data !== undefined) {
    defineProperty(err, 'data', { value: e.data, writable: true, enumerable: true, configurable: true });
  }
  return err;
};
// Accepted host calls wait here, keyed by the host's call id, until the host delivers their
// settlement (one at a time, in host settlement order).
const pendingCalls = new MapC();
// message: "<callId>:<envelope JSON>" (one string keeps the host-to-guest crossing to one handle).
const deliver = (message) => {
  const colon = indexOfOf(message, ':');
  const callId = NumberC(sliceOf(message, 0, colon));
  const envelope = sliceOf(message, colon + 1);
  const entry = mapGetOf(pendingCalls, callId);
  if (entry === undefined) return;
  mapDeleteOf(pendingCalls, callId);
  let o;
  try {
    o = jsonParse(envelope);
  } catch (e) {
    entry.reject(e);
    return;
  }
  if (o.t !== undefined) clock = o.t;
  if (o.ok === true) entry.resolve(o.v);
  else entry.reject(toError(o.e));
};
// Set once run() has settled: calls from detached chains or from result getters/toJSON are
// refused here, and again by the host (invariant 3 keeps only calls accepted before).
let returned = false;
// Calls wait in the outbox until the host drains it at the end of the slice; the host validates
// each one (capability, caps, size, depth) before it has any effect, then answers via deliver().
// One drain per slice instead of one host-function crossing per call. The outbox is one string
// (entries joined by U+0001 as they are queued), so a drain allocates nothing.
let outbox = '';
let callSeq = 0;
let maxHostCalls = 0;
let maxOutstandingCalls = 0;
let maxArgBytes = 0;
const drain = () => {
  const text = outbox;
  outbox = '';
  return text;
};
const refuse = (code, message) => apply(promiseReject, PromiseC, [toError({ code, message })]);
const callCapability = (name, input) => {
  if (returned) return refuse('WF_SANDBOX_BRIDGE_CLOSED', 'run() has returned; new host calls are refused');
  let text = '';
  try {
    if (input !== undefined) {
      const s = jsonStringify(input);
      if (typeof s === 'string') text = s;
    }
  } catch (e) {
    return apply(promiseReject, PromiseC, [e]);
  }
  // Early local bounds stop a flood at once (the host ends the run with status limit); the
  // host re-checks every call when it drains the outbox.
  if (callSeq >= maxHostCalls) hostCall('WF_SANDBOX_HOST_CALL_LIMIT');
  else if (pendingCalls.size >= maxOutstandingCalls) hostCall('WF_SANDBOX_OUTSTANDING_LIMIT');
  else if (text.length > maxArgBytes) hostCall('WF_SANDBOX_ARGUMENT_TOO_LARGE');
  callSeq += 1;
  const id = callSeq;
  // JSON text never contains a raw newline or U+0001, and capability names are identifiers.
  const entryText = id + '\\n' + name + '\\n' + text;
  outbox = outbox === '' ? entryText : outbox + '\\u0001' + entryText;
  return new PromiseC((resolve, reject) => {
    const entry = create(null);
    entry.resolve = resolve;
    entry.reject = reject;
    mapSetOf(pendingCalls, id, entry);
  });
};

// SES-style property overrides: these inherited data properties become accessors so that
// assigning err.message or obj.toString on an ordinary object keeps working after the freeze.
const enableOverride = (obj, key) => {
  const d = getOwnPropertyDescriptor(obj, key);
  if (d === undefined || !('value' in d) || !d.configurable) return;
  const value = d.value;
  const getter = ({ get() { return value; } }).get;
  const setter = ({ set(v) {
    if (this === obj) throw new TypeErrorC('Cannot assign to read only property ' + key + ' of a frozen intrinsic');
    defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
  } }).set;
  defineProperty(obj, key, { get: getter, set: setter, enumerable: d.enumerable, configurable: false });
};
const errorProtos = [ErrorC.prototype];
for (const k of ['EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'AggregateError', 'InternalError', 'SuppressedError']) {
  const C = G[k];
  if (typeof C === 'function' && isObjectLike(C.prototype)) apply(arrayPush, errorProtos, [C.prototype]);
}
for (const key of ['toString', 'toLocaleString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'constructor']) {
  enableOverride(ObjectC.prototype, key);
}
for (const proto of errorProtos) {
  for (const key of ['name', 'message', 'toString', 'constructor']) enableOverride(proto, key);
}
for (const key of ['toString', 'constructor']) {
  enableOverride(Array.prototype, key);
}
enableOverride(FunctionProto, 'toString');
enableOverride(PromiseC.prototype, 'constructor');
enableOverride(PromiseC.prototype, 'then');
enableOverride(DateProto, 'constructor');
enableOverride(DateProto, 'toString');
enableOverride(DateProto, 'toJSON');

// Freeze the intrinsics (not globalThis itself): every global constructor or namespace, its
// prototype, their methods, and the hidden intrinsic prototypes.
const roots = [FunctionProto, AsyncFunctionProto, GeneratorFunctionProto, AsyncGeneratorFunctionProto,
  throwingConstructor];
const pushProtoOf = (v) => { try { const p = getPrototypeOf(v); if (p !== null) apply(arrayPush, roots, [p]); } catch (_) {} };
apply(arrayPush, roots, [GeneratorFunctionProto.prototype, AsyncGeneratorFunctionProto.prototype]);
pushProtoOf(GeneratorFunctionProto.prototype);
pushProtoOf(AsyncGeneratorFunctionProto.prototype);
pushProtoOf([][Symbol.iterator]());
pushProtoOf(new Map()[Symbol.iterator]());
pushProtoOf(new Set()[Symbol.iterator]());
pushProtoOf(''[Symbol.iterator]());
pushProtoOf(/a/[Symbol.matchAll]('a'));
pushProtoOf(Int8Array);
pushProtoOf(Int8Array.prototype);
if (typeof Iterator === 'function') {
  try { pushProtoOf([].values().map((x) => x)); } catch (_) {}
  try { pushProtoOf(Iterator.from({ next() { return { done: true }; } })); } catch (_) {}
}
try {
  apply(arrayPush, roots, [getOwnPropertyDescriptor((function () { return arguments; })(), 'callee').get]);
} catch (_) {}
// QuickJS lets Object.defineProperty, Object.defineProperties and Reflect.defineProperty
// replace the value of a non-configurable, read-only property of the global object (measured on
// quickjs-emscripten 0.32: after the loop below, defineProperty(globalThis, 'JSON', { value: {} })
// succeeded where an ordinary object refuses). The guest's copies refuse what the spec refuses
// for such a property; the descriptor is read once, so a getter cannot change it in between.
const definePropertiesC = ObjectC.defineProperties;
const reflectDefine = Reflect.defineProperty;
const DESCRIPTOR_KEYS = ['enumerable', 'configurable', 'value', 'writable', 'get', 'set'];
const snapshot = (desc) => {
  if (!isObjectLike(desc)) return desc;
  const out = { __proto__: null };
  for (const k of DESCRIPTOR_KEYS) if (k in desc) out[k] = desc[k];
  return out;
};
const sameValue = (a, b) => (a === b ? a !== 0 || 1 / a === 1 / b : a !== a && b !== b);
const refusedOnGlobal = (o, k, d) => {
  if (o !== G || !isObjectLike(d)) return false;
  const cur = getOwnPropertyDescriptor(G, k);
  if (cur === undefined || cur.configurable) return false;
  if (d.configurable === true || 'get' in d || 'set' in d) return true;
  if ('enumerable' in d && !d.enumerable !== !cur.enumerable) return true;
  if (!('value' in cur) || cur.writable) return false;
  return d.writable === true || ('value' in d && !sameValue(d.value, cur.value));
};
const notConfigurable = () => new TypeErrorC('property is not configurable');
// Method shorthand names the functions like the originals without a binding that would shadow
// the captured defineProperty inside them.
const guardedDefineProperty = { defineProperty(o, k, desc) {
  const d = snapshot(desc);
  if (refusedOnGlobal(o, k, d)) throw notConfigurable();
  return defineProperty(o, k, d);
} }.defineProperty;
const guardedDefineProperties = { defineProperties(o, props) {
  if (o !== G) return definePropertiesC(o, props);
  const list = [];
  const from = ObjectC(props);
  for (const k of ownKeys(from)) {
    const pd = getOwnPropertyDescriptor(from, k);
    if (pd !== undefined && pd.enumerable) apply(arrayPush, list, [[k, snapshot(from[k])]]);
  }
  for (const [k, d] of list) if (refusedOnGlobal(G, k, d)) throw notConfigurable();
  for (const [k, d] of list) defineProperty(G, k, d);
  return o;
} }.defineProperties;
const guardedReflectDefine = { defineProperty(o, k, desc) {
  const d = snapshot(desc);
  if (refusedOnGlobal(o, k, d)) return false;
  return reflectDefine(o, k, d);
} }.defineProperty;
defineProperty(ObjectC, 'defineProperty', { value: guardedDefineProperty });
defineProperty(ObjectC, 'defineProperties', { value: guardedDefineProperties });
defineProperty(Reflect, 'defineProperty', { value: guardedReflectDefine });
const globalNames = getOwnPropertyNames(G);
for (const k of globalNames) {
  const d = getOwnPropertyDescriptor(G, k);
  if (d !== undefined && 'value' in d && isObjectLike(d.value) && d.value !== G) apply(arrayPush, roots, [d.value]);
}
// Shallow by design (a fresh context per run keeps the cost near 1 ms): roots and their
// prototypes are frozen; method function objects are not (they hold no shared state).
for (const r of roots) {
  if (!isObjectLike(r)) continue;
  freeze(r);
  if (typeof r === 'function') {
    const d = getOwnPropertyDescriptor(r, 'prototype');
    if (d !== undefined && 'value' in d && isObjectLike(d.value)) freeze(d.value);
  }
}
// The standard global bindings become read-only so later (trusted) prelude code that names a
// global at call time cannot be redirected by the guest. globalThis stays extensible.
for (const k of globalNames) {
  const d = getOwnPropertyDescriptor(G, k);
  if (d !== undefined && d.configurable && 'value' in d) {
    defineProperty(G, k, { value: d.value, writable: false, enumerable: d.enumerable, configurable: false });
  }
}

const deepFreeze = (root) => {
  const stack = [root];
  const visited = new SetC();
  while (stack.length > 0) {
    const v = apply(arrayPop, stack, []);
    if (!isObjectLike(v) || apply(setHas, visited, [v])) continue;
    apply(setAdd, visited, [v]);
    freeze(v);
    const p = getPrototypeOf(v);
    if (p !== null && !isFrozen(p)) apply(arrayPush, stack, [p]);
    for (const key of ownKeys(v)) {
      const d = getOwnPropertyDescriptor(v, key);
      if (d === undefined) continue;
      if ('value' in d) apply(arrayPush, stack, [d.value]);
      else { apply(arrayPush, stack, [d.get]); apply(arrayPush, stack, [d.set]); }
    }
  }
  return root;
};

let caps = null;
// Called once per run, before any prelude or guest code: seed, clock, limits, capabilities.
const configure = (configText) => {
  if (configured) throw new TypeErrorC('the kernel is already configured');
  configured = true;
  const config = jsonParse(configText);
  runSeed = config.seed;
  seedRandom(runSeed);
  clock = config.startTime;
  maxErrorChars = config.maxErrorChars;
  maxResultChars = config.maxResultChars;
  maxHostCalls = config.maxHostCalls;
  maxOutstandingCalls = config.maxOutstandingCalls;
  maxArgBytes = config.maxArgBytes;
  caps = create(null);
  for (const name of config.capabilities) {
    const fn = ({ [name](input) { return callCapability(name, input); } })[name];
    caps[name] = freeze(fn);
  }
  freeze(caps);
  // Without a prelude there is nothing to evaluate between the two steps: one call does both.
  return config.prelude === false ? prepare(undefined) : prepare;
};

const prepare = (preludeFn) => {
  let api = caps;
  // caps is frozen as built (a null-prototype object of frozen functions whose prototype,
  // Function.prototype, the kernel froze), so walking it freezes nothing: only what a prelude
  // returns is walked (2-4% of a paced trivial run, in-process A/B of 300 rounds).
  if (preludeFn !== undefined) {
    if (typeof preludeFn !== 'function') throw new TypeErrorC('the prelude must evaluate to a function');
    api = deepFreeze(apply(preludeFn, undefined, [caps, freeze({ seed: runSeed })]));
  }
  const launch = async (run, argsText) => {
    let value;
    try {
      if (typeof run !== 'function') {
        return 'E' + jsonStringify({ name: 'TypeError', message: 'the program must define async function run(api, args)', code: '#NO_RUN' });
      }
      const args = argsText === '' ? undefined : deepFreeze(jsonParse(argsText));
      value = await apply(run, undefined, [api, args]);
    } catch (e) {
      returned = true;
      return 'E' + describe(e);
    }
    returned = true;
    let text;
    try {
      text = jsonStringify(value);
    } catch (e) {
      return 'B' + describe(e);
    }
    if (text === undefined) return 'U';
    if (text.length > maxResultChars) return 'L' + text.length;
    return 'O' + text;
  };
  return launch;
};

const kernel = create(null);
kernel.configure = configure;
kernel.describe = describe;
kernel.deliver = deliver;
kernel.drain = drain;
return freeze(kernel);
})`;

/**
 * The kernel as evaluated: comment lines and indentation removed (it is compiled once per run,
 * so its size is part of every run's latency). The text has no multi-line literals.
 */
export const BOOTSTRAP_SOURCE = KERNEL_TEXT.split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('//'))
  .join('\n');
