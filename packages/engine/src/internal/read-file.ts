// wf.readFile: a UTF-8 file contained in the workspace. Refuses `..` escapes, absolute paths
// outside the root, symlinks (anywhere on the path), non-files and files over the size cap.
import { lstat, open, realpath } from 'node:fs/promises';
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
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw deny(path, 'the path is outside the workspace');
  // Walk every component with lstat: a symlink anywhere on the path is refused.
  let cursor = realRoot;
  for (const part of rel.split(sep)) {
    cursor = resolve(cursor, part);
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(cursor);
    } catch {
      throw deny(path, 'no such file');
    }
    if (st.isSymbolicLink()) throw deny(path, 'the path goes through a symbolic link');
  }
  const handle = await open(target, 'r');
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw deny(path, 'not an ordinary file');
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
