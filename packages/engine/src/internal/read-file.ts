// wf.readFile: a UTF-8 file contained in the workspace. Refuses `..` escapes, absolute paths
// outside the root, symlinks (anywhere on the path), non-files and files over the size cap.
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { EngineError } from '../errors.js';

const deny = (path: string, why: string) =>
  new EngineError('WF_ENGINE_READ_DENIED', `wf.readFile("${path}") refused: ${why}`);

export async function readWorkspaceFile(
  root: string,
  path: string,
  maxBytes: number,
): Promise<string> {
  if (path.length === 0 || path.includes('\0'))
    throw deny(path, 'the path is empty or contains NUL');
  const realRoot = await realpath(root);
  const target = resolve(realRoot, path);
  const rel = relative(realRoot, target);
  // `..` that climbs out of the workspace is refused; one that stays inside resolves normally.
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw deny(path, 'the path is outside the workspace');
  // Walk every component with lstat: a symlink anywhere on the path is refused.
  let cursor = realRoot;
  let last: Awaited<ReturnType<typeof lstat>> | undefined;
  for (const part of rel.split(sep)) {
    cursor = resolve(cursor, part);
    try {
      last = await lstat(cursor);
    } catch {
      throw deny(path, 'no such file');
    }
    if (last.isSymbolicLink()) throw deny(path, 'the path goes through a symbolic link');
  }
  // invariant 6: open(2) on a FIFO blocks a libuv thread until a writer appears (four such reads
  // wedge every fs call of the host). Refuse non-files before opening, and open non-blocking
  // without following a link swapped in since the walk, then re-check the opened file below.
  if (!last?.isFile()) throw deny(path, 'not an ordinary file');
  const handle = await open(
    target,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => {
    throw deny(path, 'the file could not be opened');
  });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw deny(path, 'not an ordinary file');
    // invariant 8: the lstat walk races a directory on the path being swapped for a symlink, so
    // the file actually opened is located again from its descriptor (Linux names it under
    // /proc/self/fd; elsewhere realpath) and must still be inside the workspace.
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => realpath(target));
    const openedRel = relative(realRoot, opened);
    if (openedRel === '' || openedRel.startsWith('..') || isAbsolute(openedRel))
      throw deny(path, 'the path changed to leave the workspace while it was being opened');
    if (st.size > maxBytes)
      throw deny(path, `the file has ${st.size} bytes, more than the ${maxBytes} allowed`);
    const buf = Buffer.alloc(st.size);
    const { bytesRead } = await handle.read(buf, 0, st.size, 0);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, bytesRead));
    } catch {
      throw deny(path, 'the file is not valid UTF-8');
    }
  } finally {
    await handle.close();
  }
}
