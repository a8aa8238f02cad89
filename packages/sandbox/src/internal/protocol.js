// The one protocol between the main thread (sandbox.ts) and a worker (worker.js): message kinds
// and shapes in both directions. Plain JSDoc-typed JavaScript so the worker loads it unchanged
// from src/ and dist/; sandbox.ts imports the same names and types.
// @ts-check

/** Kinds of messages the main thread sends to a worker. */
export const TO_WORKER = Object.freeze({
  /** Start (or replay) one run. */
  start: /** @type {'start'} */ ('start'),
  /** Settle one capability call with a JSON envelope. */
  settle: /** @type {'settle'} */ ('settle'),
  /** Stop a run from outside (abort or wall time). */
  close: /** @type {'close'} */ ('close'),
  /** Release a held run's runtime once its host calls have drained. */
  dispose: /** @type {'dispose'} */ ('dispose'),
  /** The engine the main thread compiled while the worker booted (or null: compile it). */
  engine: /** @type {'engine'} */ ('engine'),
});

/** Kinds of messages a worker sends to the main thread. */
export const FROM_WORKER = Object.freeze({
  /**
   * The worker instantiated the engine (its first slot is being built, and a start waits for
   * it); carries its thread task id and its compiled engine.
   */
  ready: /** @type {'ready'} */ ('ready'),
  /** The guest made a capability call (or the worker refused one without effect). */
  call: /** @type {'call'} */ ('call'),
  /** A run ended. */
  end: /** @type {'end'} */ ('end'),
  /** A held run's runtime was disposed. */
  disposed: /** @type {'disposed'} */ ('disposed'),
});

/**
 * @typedef {object} WorkerLimits
 * @property {number} memoryBytes
 * @property {number} stackBytes
 * @property {number} cpuSliceMs
 * @property {number} cpuMs
 * @property {number} wallMs
 * @property {number} maxHostCalls
 * @property {number} maxOutstandingCalls
 * @property {number} maxArgBytes
 * @property {number} maxResultBytes
 * @property {number} maxJsonDepth
 * @property {number} maxErrorChars
 */

/**
 * What the worker needs to start (or replay) a run, besides limits, seed and clock.
 * @typedef {object} StartFields
 * @property {string} source
 * @property {string} argsText
 * @property {string | null} prelude
 * @property {string[]} capabilities
 */

/**
 * @typedef {StartFields & {
 *   t: 'start',
 *   runId: number,
 *   limits: WorkerLimits,
 *   seed: number,
 *   startTime: number,
 *   replay?: [number, string][],
 * }} StartMessage `replay`: settlements this run received on a worker it lost
 */

/** @typedef {{ t: 'settle', runId: number, callId: number, env: string }} SettleMessage */
/** @typedef {{ t: 'close', runId: number, reason: 'aborted' | 'wall' }} CloseMessage */
/** @typedef {{ t: 'dispose', runId: number }} DisposeMessage */
/** `wasmModule`: a WebAssembly.Module, or null. @typedef {{ t: 'engine', wasmModule: unknown }} EngineMessage */
/** @typedef {StartMessage | SettleMessage | CloseMessage | DisposeMessage | EngineMessage} ToWorkerMessage */

/**
 * @typedef {object} WorkerStats
 * @property {number} cpuMs
 * @property {number} hostCalls
 * @property {number} peakMemoryBytes
 * @property {string} workerId
 * @property {string} moduleId
 * @property {number} retiredAfterTrouble
 */

/**
 * `wasmModule`: the worker's compiled engine (a WebAssembly.Module), for the next workers.
 * @typedef {{ t: 'ready', tid: number | null, wasmModule?: unknown }} ReadyMessage
 */
/**
 * `refuse`: the worker refused the call without effect; this envelope settles it.
 * @typedef {{ t: 'call', runId: number, callId: number, name: string, input: string, refuse?: string }} CallMessage
 */
/**
 * @typedef {object} EndMessage
 * @property {'end'} t
 * @property {number} runId
 * @property {string} status
 * @property {string} code
 * @property {string} message
 * @property {string | null} [value]
 * @property {string} [guestCode]
 * @property {boolean} held the run still has host calls outstanding; a 'dispose' releases it
 * @property {WorkerStats} stats
 */
/** @typedef {{ t: 'disposed', runId: number }} DisposedMessage */
/** Messages about one run. @typedef {CallMessage | EndMessage | DisposedMessage} RunMessage */
/** @typedef {ReadyMessage | RunMessage} FromWorkerMessage */
