// wf.readFile: a UTF-8 file contained in the workspace. Refuses `..` escapes, absolute paths
// outside the root, symlinks (anywhere on the path), non-files, files over the size cap, and the
// run store and catalog (`.dsh/` and the configured deny roots). An app may open one subtree of
// `.dsh/` it wrote for the workflow (allow roots); the deny roots win over it.
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { EngineError } from '../errors.js';

const deny = (path: string, why: string) =>
  new EngineError('WF_ENGINE_READ_DENIED', `wf.readFile("${path}") refused: ${why}`);

const protectedPath = (path: string, why: string) =>
  new EngineError('WF_ENGINE_READ_PROTECTED', `wf.readFile("${path}") refused: ${why}`);

/** A directory name that holds DSH's and @wf's state (run store, catalog) wherever it appears. */
const STATE_DIRECTORY = '.dsh';

/**
 * True when `path` is `root` or below it. Compared case-insensitively: on a case-insensitive
 * filesystem `.DSH/Workflow-Runs` is the run store too (over-refusing on Linux is harmless).
 */
function within(root: string, path: string): boolean {
  const rel = relative(root.toLowerCase(), path.toLowerCase());
  return rel === '' || !climbs(rel);
}

/**
 * True when a `relative()` result leaves its base: an absolute path or a real `..` segment.
 * `..notes.txt` is a file name inside the base, not a parent reference.
 */
function climbs(rel: string): boolean {
  return isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`);
}

/** The deny roots as real paths (a root that does not exist yet is kept as resolved). */
async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map((r) => realpath(resolve(r)).catch(() => resolve(r))));
}

/**
 * invariant 6: the run store holds each run's owner pid, host name and lease token, and the
 * catalog holds other workflows; neither is the workspace a workflow may read.
 */
function refuseProtected(
  path: string,
  rel: string,
  absolute: string,
  denied: readonly string[],
  allowed: readonly string[],
): void {
  if (
    rel.split(sep).some((part) => part.toLowerCase() === STATE_DIRECTORY) &&
    !allowed.some((root) => within(root, absolute))
  )
    throw protectedPath(path, `${STATE_DIRECTORY}/ holds the run store and catalog`);
  if (denied.some((root) => within(root, absolute)))
    throw protectedPath(path, 'the path is inside the run store or the workflow catalog');
}

export async function readWorkspaceFile(
  root: string,
  path: string,
  maxBytes: number,
  denyRoots: readonly string[] = [],
  allowRoots: readonly string[] = [],
): Promise<string> {
  if (path.length === 0 || path.includes('\0'))
    throw deny(path, 'the path is empty or contains NUL');
  const realRoot = await realpath(root);
  const target = resolve(realRoot, path);
  const rel = relative(realRoot, target);
  // `..` that climbs out of the workspace is refused; one that stays inside resolves normally.
  if (rel === '' || climbs(rel)) throw deny(path, 'the path is outside the workspace');
  const denied = await realRoots(denyRoots);
  const allowed = await realRoots(allowRoots);
  refuseProtected(path, rel, target, denied, allowed);
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
    if (openedRel === '' || climbs(openedRel))
      throw deny(path, 'the path changed to leave the workspace while it was being opened');
    // The same check on where the descriptor really points (a swapped directory, a bind mount).
    refuseProtected(path, openedRel, opened, denied, allowed);
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
