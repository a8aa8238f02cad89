// Thread CPU time for CPU limits that machine load cannot trip. Node 20 has no per-thread CPU
// clock in a worker (process.cpuUsage() is process-wide; threadCpuUsage arrived in 23.9), so on
// Linux the thread's schedstat (nanoseconds on CPU) is read; elsewhere wall time stands in.
// @ts-check
import { createRequire } from 'node:module';

// Required, not imported: Node's ES facade of node:fs reads every export, and its ReadStream
// getter loads the streams modules, on a fresh process's path to its first worker.
const { closeSync, openSync, readFileSync, readlinkSync, readSync } = createRequire(
  import.meta.url,
)('node:fs');

const BUF = Buffer.alloc(96);

/** @param {string} text first field of a schedstat line, in ms */
function parse(text) {
  const ns = Number(text.slice(0, text.indexOf(' ')));
  return Number.isFinite(ns) ? ns / 1e6 : Number.NaN;
}

/**
 * The calling thread's CPU clock in ms, or null when the platform has none (a read is a file
 * read, so callers read it only for slices that already ran long in wall time).
 * @returns {(() => number) | null}
 */
export function openThreadCpuClock() {
  let fd = -1;
  try {
    // /proc/thread-self resolves to the opening thread's task directory.
    fd = openSync('/proc/thread-self/schedstat', 'r');
    const read = () => {
      const n = readSync(fd, BUF, 0, BUF.length, 0);
      return parse(BUF.toString('latin1', 0, n));
    };
    if (!Number.isFinite(read())) throw new Error('unreadable schedstat');
    return read;
  } catch {
    if (fd >= 0) closeSync(fd);
    return null;
  }
}

/** This thread's task id, so another thread can read its CPU clock (Linux), or null. */
export function threadTaskId() {
  try {
    const link = readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isSafeInteger(tid) ? tid : null;
  } catch {
    return null;
  }
}

/**
 * CPU ms of another thread of this process, or NaN.
 * @param {number} tid
 */
export function taskCpuMs(tid) {
  try {
    return parse(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1'));
  } catch {
    return Number.NaN;
  }
}
