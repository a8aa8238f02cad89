// Outcome decoding in the worker: the kernel's launch result and the engine's own error wording.
// @ts-check
import { jsonDepthWithin } from './json-shape.js';

// The engine's own wording for its stack and allocation failures (the QuickJS release that the
// pinned quickjs-emscripten embeds).
const ENGINE_STACK_MESSAGES = new Set(['Maximum call stack size exceeded', 'stack overflow']);
const ENGINE_MEMORY_MESSAGES = new Set(['out of memory']);

/**
 * @param {{ name?: string, message?: string }} d
 * @returns {'stack' | 'memory' | null}
 */
export function classifyEngineError(d) {
  if (
    (d.name === 'RangeError' || d.name === 'InternalError') &&
    ENGINE_STACK_MESSAGES.has(d.message ?? '')
  ) {
    return 'stack';
  }
  if (d.name === 'InternalError' && ENGINE_MEMORY_MESSAGES.has(d.message ?? '')) return 'memory';
  return null;
}

/**
 * Lines worker-lifecycle.js puts before the guest program in workflow.js (the wrapper's
 * `(function () { 'use strict';` line): a frame's line minus this is the line in the source.
 */
export const GUEST_LINE_OFFSET = 1;

/**
 * `line L:C: ` in the guest's own source for an error raised there, or '' (no such frame).
 * At the front of the message, so truncating a long message never cuts it off.
 * @param {{ line?: number, column?: number }} d
 */
function sourcePosition(d) {
  const line = typeof d.line === 'number' ? d.line - GUEST_LINE_OFFSET : 0;
  const column = typeof d.column === 'number' ? d.column : 0;
  return Number.isSafeInteger(line) && line >= 1 && Number.isSafeInteger(column) && column >= 1
    ? `line ${line}:${column}: `
    : '';
}

/**
 * Decodes the kernel's launch result: a kind letter (O value, U undefined, L too large, B not
 * JSON, E error) and its body, checked against the size and depth limits.
 * @param {{ maxResultBytes: number, maxJsonDepth: number }} L
 * @param {string} text
 * @returns {{ status: string, code?: string, message?: string, value?: string | null, guestCode?: string }}
 */
export function decodeLaunch(L, text) {
  const kind = text.charAt(0);
  const body = text.slice(1);
  if (kind === 'O') {
    if (Buffer.byteLength(body, 'utf8') > L.maxResultBytes) {
      return {
        status: 'limit',
        code: 'WF_SANDBOX_RESULT_TOO_LARGE',
        message: `the result is larger than ${L.maxResultBytes} bytes`,
      };
    }
    if (!jsonDepthWithin(body, L.maxJsonDepth)) {
      return {
        status: 'limit',
        code: 'WF_SANDBOX_RESULT_TOO_DEEP',
        message: `the result nests deeper than ${L.maxJsonDepth}`,
      };
    }
    return { status: 'completed', value: body };
  }
  if (kind === 'U') return { status: 'completed', value: null };
  if (kind === 'L') {
    return {
      status: 'limit',
      code: 'WF_SANDBOX_RESULT_TOO_LARGE',
      message: `the result is larger than ${L.maxResultBytes} bytes`,
    };
  }
  /** @type {{ name?: string, message?: string, code?: string, line?: number, column?: number }} */
  let d = {};
  try {
    d = JSON.parse(body);
  } catch {
    d = {};
  }
  const name = typeof d.name === 'string' ? d.name : 'Error';
  const message = typeof d.message === 'string' ? d.message : '';
  if (kind === 'B') {
    return {
      status: 'failed',
      code: 'WF_SANDBOX_RESULT_NOT_JSON',
      message: `the result cannot cross as JSON: ${name}: ${message}`,
    };
  }
  if (kind === 'E') {
    if (d.code === '#NO_RUN') return { status: 'failed', code: 'WF_SANDBOX_NO_RUN', message };
    const engine = classifyEngineError({ name, message });
    if (engine === 'stack')
      return { status: 'stack', code: 'WF_SANDBOX_STACK_OVERFLOW', message: `${name}: ${message}` };
    if (engine === 'memory')
      return { status: 'memory', code: 'WF_SANDBOX_MEMORY_LIMIT', message: `${name}: ${message}` };
    const guestCode = typeof d.code === 'string' ? d.code : undefined;
    return {
      status: 'failed',
      code: 'WF_SANDBOX_GUEST_ERROR',
      message: `${sourcePosition(d)}${name}: ${message}`,
      ...(guestCode !== undefined ? { guestCode } : {}),
    };
  }
  return {
    status: 'failed',
    code: 'WF_SANDBOX_INTERNAL',
    message: 'the run produced no readable result',
  };
}
