// Files named on the command line (a workflow to run or check, --args-file) are classified before
// they are read: a FIFO, a device, a socket or a directory is refused by what it is and is never
// opened where reading it could block (`wf check ./fifo.js` would wait forever). The file is opened
// O_NONBLOCK and checked again through its descriptor, so one swapped in after the check is caught
// too, and its text must be valid UTF-8 (nothing is silently replaced by U+FFFD).
import { constants, promises as fsp, type Stats } from 'node:fs';

export type InputFile =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      /** `missing`: nothing there; `kind`: not a regular file; the rest: a file we will not use. */
      readonly reason: 'missing' | 'kind' | 'too-large' | 'not-utf8' | 'unreadable';
      readonly message: string;
    };

/** What a non-regular file is, in words. */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return st.isFile() ? 'a regular file' : 'not a regular file';
}

function failure(reason: Exclude<InputFile, { ok: true }>['reason'], message: string): InputFile {
  return { ok: false, reason, message };
}

function errnoText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return typeof code === 'string' ? code : String(error);
}

/**
 * Reads the regular file at `path` (`shown` names it in messages) as UTF-8 text of at most
 * `maxBytes`. Never opens anything that is not a regular file, and never blocks on one.
 */
export async function readInputText(
  path: string,
  shown: string,
  maxBytes: number,
): Promise<InputFile> {
  let st: Stats;
  try {
    st = await fsp.stat(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT')
      return failure('missing', `${shown}: no such file`);
    return failure('unreadable', `${shown}: cannot read it (${errnoText(error)})`);
  }
  if (!st.isFile())
    return failure('kind', `${shown} is ${fileKind(st)}, not a file; refusing to read it`);
  if (st.size > maxBytes)
    return failure('too-large', `${shown} is ${st.size} bytes; the limit is ${maxBytes}`);
  let handle: Awaited<ReturnType<typeof fsp.open>> | undefined;
  try {
    handle = await fsp.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) {
      return failure('kind', `${shown} changed while it was opened (now ${fileKind(opened)})`);
    }
    // What fstat said plus one byte, grown only for a file that grows while it is read.
    const cap = maxBytes + 1;
    let buffer = Buffer.allocUnsafe(Math.min(cap, opened.size + 1));
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length < buffer.length) continue;
      if (length >= cap) break;
      const grown = Buffer.allocUnsafe(Math.min(cap, length * 2));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    if (length > maxBytes)
      return failure('too-large', `${shown} grew over the limit of ${maxBytes} bytes`);
    try {
      return {
        ok: true,
        text: new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length)),
      };
    } catch {
      return failure('not-utf8', `${shown} is not valid UTF-8 text`);
    }
  } catch (error) {
    return failure('unreadable', `${shown}: cannot read it (${errnoText(error)})`);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
