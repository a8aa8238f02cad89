// Symlink-safe directory handles. Every directory we touch is opened O_DIRECTORY|O_NOFOLLOW and,
// on Linux, later addressed as /proc/self/fd/<fd>/<name>: the kernel resolves that through the open
// descriptor, so a component swapped for a symlink after the check cannot redirect the operation
// (invariant 8: no symlinks anywhere on the path, every path below its root).
import { randomBytes } from './crypto.js';
import { constants, existsSync, promises as fsp, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { CatalogFsError, type CatalogFsErrorCode } from '../errors.js';
import { type FileLike, type Io, NONBLOCKING_IO } from './io.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Linux gives us openat-like semantics through /proc; elsewhere we fall back to checked paths. */
export const FD_PATHS: boolean = process.platform === 'linux' && existsSync('/proc/self/fd');

let token: string | undefined;

/** Identifies this process in temp and lock names (pid alone can be reused). Made on first use. */
export function processToken(): string {
  token ??= randomBytes(6).toString('hex');
  return token;
}
export const HOSTNAME: string = hostname();

export interface ErrorCodes {
  readonly unsafe: CatalogFsErrorCode;
  readonly io: CatalogFsErrorCode;
}

/** An open, verified directory. `at(name)` names an entry directly inside it. */
export interface SafeDir {
  /** The canonical path the directory had when it was opened (for messages and listings). */
  readonly path: string;
  /** The directory itself, for readdir. */
  readonly self: string;
  /** How its entries are opened, listed and read (io.ts); its subdirectories inherit it. */
  readonly io: Io;
  at(name: string): string;
  /** fstat of the directory itself (its link count counts its subdirectories). */
  stat(): Promise<Stats>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

type Hook = (
  event: 'dir-opened' | 'dir-listed' | 'file-read' | 'index-read' | 'step',
  path: string,
) => void | Promise<void>;
let testHook: Hook | undefined;
/**
 * Test seam: runs after each directory is opened and verified, before it is used; after each
 * directory listing the run store takes (`dir-listed`), each whole file it reads (`file-read`) and
 * each part of the runs index the constant-cost listing reads (`index-read`, `path@offset+bytes`),
 * so tests count what a command reads instead of timing it.
 */
export function setSafeDirHook(hook: Hook | undefined): void {
  testHook = hook;
}

/** Test seam: reports a read (a listing of `path`, a whole-file or an index read) to the hook. */
export async function noteRead(
  event: 'dir-listed' | 'file-read' | 'index-read',
  path: string,
): Promise<void> {
  if (testHook) await testHook(event, path);
}

/** Test seam: a named point just before a publishing syscall; a hook that throws fails it. */
export async function step(name: string): Promise<void> {
  if (testHook) await testHook('step', name);
}

export function ioError(codes: ErrorCodes, what: string, cause: unknown): CatalogFsError {
  const code = (cause as { code?: string } | null)?.code;
  const detail = code === 'ENOSPC' ? 'the disk is full' : code ? code : String(cause);
  return new CatalogFsError(codes.io, `${what} failed: ${detail}`, { cause });
}

function errno(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

/**
 * A directory's path with one entry name appended: what path.join gives for a single component
 * (names here are validated, never a separator, `.` or `..`; directory paths are normalised where
 * they are made), without its normalising walk over the whole string. The read path made that
 * walk three times per run listed, and V8 would start optimising node:path's walk in the middle
 * of a short command such as `wf runs`.
 */
export function entryPath(dirPath: string, name: string): string {
  return dirPath.endsWith(sep) ? `${dirPath}${name}` : `${dirPath}${sep}${name}`;
}

class OpenDir implements SafeDir {
  constructor(
    readonly path: string,
    private readonly handle: FileLike,
    readonly io: Io,
  ) {}
  get self(): string {
    return FD_PATHS ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }
  at(name: string): string {
    // Names are produced by this package (validated names, fixed prefixes): never a separator.
    if (name.includes('/') || name === '..' || name === '.') throw new Error(`bad entry ${name}`);
    return FD_PATHS ? `/proc/self/fd/${this.handle.fd}/${name}` : entryPath(this.path, name);
  }
  stat(): Promise<Stats> {
    return this.handle.stat();
  }
  sync(): Promise<void> {
    return this.handle.sync().catch(() => undefined);
  }
  close(): Promise<void> {
    return this.handle.close().catch(() => undefined);
  }
}

/** Finds the first component of `path` that is a symlink, for a message that names it. */
async function firstSymlink(path: string, io: Io): Promise<string | undefined> {
  const parts = path.split(sep).filter(Boolean);
  let current: string = sep;
  for (const part of parts) {
    current = join(current, part);
    const st = await io.lstat(current).catch(() => undefined);
    if (!st) return undefined;
    if (st.isSymbolicLink()) return current;
  }
  return undefined;
}

async function openDirNoFollow(
  path: string,
  shown: string,
  codes: ErrorCodes,
  io: Io,
): Promise<FileLike | undefined> {
  try {
    return await io.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = errno(error);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw new CatalogFsError(
        codes.unsafe,
        `${shown} is a symbolic link or not a directory; refusing to use it`,
      );
    }
    throw ioError(codes, `opening ${shown}`, error);
  }
}

/** `mkdir -p` that refuses to create anything through a symlinked component. */
async function makeDirsNoFollow(abs: string, options: RootOptions): Promise<void> {
  const { codes, label } = options;
  let current: string = sep;
  for (const part of abs.split(sep).filter(Boolean)) {
    current = join(current, part);
    let st = await fsp.lstat(current).catch((error: unknown) => {
      if (errno(error) === 'ENOENT') return undefined;
      throw ioError(codes, `checking ${current}`, error);
    });
    if (!st) {
      try {
        await fsp.mkdir(current, { mode: 0o755 });
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw ioError(codes, `creating ${label} ${abs}`, error);
      }
      st = await fsp.lstat(current);
    }
    if (st.isSymbolicLink()) {
      throw new CatalogFsError(
        codes.unsafe,
        `${label} ${abs} goes through the symbolic link ${current}; catalog roots must be real directories (set allowSymlinkedRoot to accept it)`,
      );
    }
    if (!st.isDirectory())
      throw new CatalogFsError(codes.unsafe, `${label} ${abs}: ${current} is not a directory`);
  }
}

export interface RootOptions {
  readonly create: boolean;
  /** Follow symlinks on the way to the root (the root's canonical path is used instead). */
  readonly allowSymlinkedRoot: boolean;
  readonly codes: ErrorCodes;
  /** What the root is called in messages ("project catalog root"). */
  readonly label: string;
  /** Default NONBLOCKING_IO. */
  readonly io?: Io;
}

/**
 * Opens a configured root. By default every component of its absolute path must be a real
 * directory (its canonical path equals the path given); `allowSymlinkedRoot` opts out.
 */
export async function openRootDir(
  root: string,
  options: RootOptions,
): Promise<SafeDir | undefined> {
  const abs = resolve(root);
  const { codes, label } = options;
  const io = options.io ?? NONBLOCKING_IO;
  if (options.create) {
    if (options.allowSymlinkedRoot) {
      try {
        await fsp.mkdir(abs, { recursive: true });
      } catch (error) {
        if (errno(error) === 'EEXIST' || errno(error) === 'ENOTDIR') {
          throw new CatalogFsError(codes.unsafe, `${label} ${abs} is not a directory`);
        }
        throw ioError(codes, `creating ${label} ${abs}`, error);
      }
    } else {
      await makeDirsNoFollow(abs, options);
    }
  }
  let canonical: string;
  try {
    canonical = await io.realpath(abs);
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    if (errno(error) === 'ENOTDIR' || errno(error) === 'ELOOP') {
      throw new CatalogFsError(codes.unsafe, `${label} ${abs} is not a directory`);
    }
    throw ioError(codes, `resolving ${label} ${abs}`, error);
  }
  if (canonical !== abs && !options.allowSymlinkedRoot) {
    const link = (await firstSymlink(abs, io)) ?? abs;
    throw new CatalogFsError(
      codes.unsafe,
      `${label} ${abs} goes through the symbolic link ${link}; catalog roots must be real directories (set allowSymlinkedRoot to accept it)`,
    );
  }
  const handle = await openDirNoFollow(canonical, `${label} ${abs}`, codes, io);
  if (!handle) return undefined;
  if (FD_PATHS) {
    // A parent swapped between realpath and open would land us elsewhere: ask the kernel.
    const actual = await io.readlink(`/proc/self/fd/${handle.fd}`).catch(() => '');
    if (actual !== canonical) {
      await handle.close().catch(() => undefined);
      throw new CatalogFsError(
        codes.unsafe,
        `${label} ${abs} changed while it was being opened (now ${actual || 'unknown'}); refusing to use it`,
      );
    }
  }
  const dir = new OpenDir(canonical, handle, io);
  if (testHook) await testHook('dir-opened', canonical);
  return dir;
}

/** Opens (optionally creating) a subdirectory that must be a real directory, not a symlink. */
export async function openChildDir(
  parent: SafeDir,
  name: string,
  options: { readonly create: boolean; readonly codes: ErrorCodes },
): Promise<SafeDir | undefined> {
  const shown = entryPath(parent.path, name);
  // With create, a directory removed between our mkdir and open is retried a few times; one that
  // keeps disappearing is somebody racing us.
  for (let attempt = 0; attempt < (options.create ? 5 : 1); attempt++) {
    if (options.create) {
      try {
        await fsp.mkdir(parent.at(name), { mode: 0o755 });
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw ioError(options.codes, `creating ${shown}`, error);
      }
    }
    const handle = await openDirNoFollow(parent.at(name), shown, options.codes, parent.io);
    if (!handle) continue;
    const dir = new OpenDir(shown, handle, parent.io);
    if (testHook) await testHook('dir-opened', shown);
    return dir;
  }
  if (!options.create) return undefined;
  throw new CatalogFsError(
    options.codes.unsafe,
    `${shown} kept disappearing while it was opened; refusing to use it`,
  );
}

/** Runs `body` with a directory that is closed afterwards. */
export async function withDir<T>(
  dir: SafeDir | undefined,
  body: (dir: SafeDir) => Promise<T>,
): Promise<T | undefined> {
  if (!dir) return undefined;
  try {
    return await body(dir);
  } finally {
    await dir.close();
  }
}

export interface RegularFile {
  readonly data: Buffer;
  readonly size: number;
  readonly ino: number;
  readonly mtimeMs: number;
}

/**
 * Opens `name` for reading without following a final symlink; undefined when it does not exist.
 * O_NONBLOCK: a FIFO planted under the name must not hang us.
 */
async function openNoFollow(
  dir: SafeDir,
  name: string,
  codes: ErrorCodes,
): Promise<FileLike | undefined> {
  const shown = entryPath(dir.path, name);
  try {
    return await dir.io.open(dir.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = errno(error);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP')
      throw new CatalogFsError(codes.unsafe, `${shown} is a symbolic link; refusing to read it`);
    throw ioError(codes, `opening ${shown}`, error);
  }
}

/**
 * Reads a regular file without following a final symlink, refusing anything larger than
 * `maxBytes` before reading it. Returns undefined when the file does not exist.
 */
export async function readRegularFile(
  dir: SafeDir,
  name: string,
  maxBytes: number,
  codes: ErrorCodes & { readonly tooLarge?: CatalogFsErrorCode },
): Promise<RegularFile | undefined> {
  const shown = entryPath(dir.path, name);
  const handle = await openNoFollow(dir, name, codes);
  if (!handle) return undefined;
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      throw new CatalogFsError(codes.unsafe, `${shown} is not a regular file`);
    }
    if (st.size > maxBytes) {
      throw new CatalogFsError(
        codes.tooLarge ?? codes.unsafe,
        `${shown} is ${st.size} bytes, over the limit of ${maxBytes} bytes`,
      );
    }
    // After fstat: a hook that appends to the file is a file growing while it is read.
    if (testHook) await testHook('file-read', shown);
    // Read at most maxBytes + 1 so a file that grows after fstat is still caught. The buffer holds
    // what fstat said plus one byte, and grows only for a file that did grow: a zero-filled 64 KiB
    // slack per read would show in a short command's wall time. Unfilled is safe: only the bytes
    // read are returned.
    const cap = maxBytes + 1;
    let buffer = Buffer.allocUnsafe(Math.min(cap, Math.max(st.size, 0) + 1));
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
    if (length > maxBytes) {
      throw new CatalogFsError(
        codes.tooLarge ?? codes.unsafe,
        `${shown} grew over the limit of ${maxBytes} bytes while it was read`,
      );
    }
    return { data: buffer.subarray(0, length), size: length, ino: st.ino, mtimeMs: st.mtimeMs };
  } catch (error) {
    if (error instanceof CatalogFsError) throw error;
    throw ioError(codes, `reading ${shown}`, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a regular file (no final symlink) from byte `offset` to its end, at most `maxBytes`.
 * Returns undefined when it does not exist. For tailing append-only logs.
 */
export async function readRegularFileFrom(
  dir: SafeDir,
  name: string,
  offset: number,
  maxBytes: number,
  codes: ErrorCodes,
): Promise<{ readonly data: Buffer; readonly ino: number; readonly size: number } | undefined> {
  const shown = entryPath(dir.path, name);
  const handle = await openNoFollow(dir, name, codes);
  if (!handle) return undefined;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new CatalogFsError(codes.unsafe, `${shown} is not a regular file`);
    const start = offset <= st.size ? offset : 0;
    const length = Math.min(st.size - start, maxBytes);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, start + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return { data: buffer.subarray(0, read), ino: st.ino, size: st.size };
  } catch (error) {
    if (error instanceof CatalogFsError) throw error;
    throw ioError(codes, `reading ${shown}`, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Temp files are dotfiles `.wf-tmp-<pid>-<token>-<random>`: never listed, cleaned at open. */
export const TEMP_PREFIX = '.wf-tmp-';

export function newTempName(suffix = ''): string {
  return `${TEMP_PREFIX}${process.pid}-${processToken()}-${randomBytes(6).toString('hex')}${suffix}`;
}

/** Whether a temp file may be removed: its writer is gone, or it is old. */
export function isAbandonedTemp(name: string, mtimeMs: number, now: number): boolean {
  const match = /^\.wf-tmp-(\d+)-([0-9a-f]+)-/.exec(name);
  if (!match) return now - mtimeMs > 3_600_000;
  const pid = Number(match[1]);
  if (pid === process.pid && match[2] === processToken()) return false;
  if (!isPidAlive(pid)) return true;
  return now - mtimeMs > 3_600_000;
}

/**
 * Writes `data` to a new same-directory temp file, created exclusively without following links,
 * and fsyncs it. Returns the temp file's name. Removes the partial file on failure.
 */
export async function writeTempFile(
  dir: SafeDir,
  data: string | Buffer,
  mode: number,
  codes: ErrorCodes,
): Promise<string> {
  const name = newTempName();
  await writeNewFile(dir, name, data, mode, codes, `writing a temporary file in ${dir.path}`);
  return name;
}

/**
 * Creates `name` exclusively (no link followed), writes `data` and fsyncs it. On failure the
 * partial file is removed: a full disk leaves nothing behind, not an empty file.
 */
export async function writeNewFile(
  dir: SafeDir,
  name: string,
  data: string | Buffer,
  mode: number,
  codes: ErrorCodes,
  what = `writing ${entryPath(dir.path, name)}`,
): Promise<void> {
  let handle: FileHandle | undefined;
  let created = false;
  try {
    handle = await fsp.open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    created = true;
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    if (created) await fsp.unlink(dir.at(name)).catch(() => undefined);
    throw ioError(codes, what, error);
  }
}

/**
 * Atomically replaces `name` in `dir` with `data` (temp + fsync + rename + directory fsync).
 * `beforeRename` runs once the temp file is durable; if it throws, the temp file is removed and
 * `name` is left as it was (a caller's last check that the file it means to replace is unchanged).
 */
export async function writeFileAtomic(
  dir: SafeDir,
  name: string,
  data: string | Buffer,
  mode: number,
  codes: ErrorCodes,
  options: { readonly beforeRename?: () => Promise<void> } = {},
): Promise<void> {
  const temp = await writeTempFile(dir, data, mode, codes);
  try {
    await options.beforeRename?.();
  } catch (error) {
    await fsp.unlink(dir.at(temp)).catch(() => undefined);
    throw error;
  }
  try {
    await fsp.rename(dir.at(temp), dir.at(name));
  } catch (error) {
    await fsp.unlink(dir.at(temp)).catch(() => undefined);
    throw ioError(codes, `publishing ${join(dir.path, name)}`, error);
  }
  await dir.sync();
}

/** Creates `name` with `data` only if it does not exist (temp + fsync + link). False if taken. */
export async function writeFileCreateOnly(
  dir: SafeDir,
  name: string,
  data: string | Buffer,
  mode: number,
  codes: ErrorCodes,
): Promise<boolean> {
  const temp = await writeTempFile(dir, data, mode, codes);
  try {
    await fsp.link(dir.at(temp), dir.at(name));
    await dir.sync();
    return true;
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    throw ioError(codes, `publishing ${join(dir.path, name)}`, error);
  } finally {
    await fsp.unlink(dir.at(temp)).catch(() => undefined);
  }
}

export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errno(error) === 'EPERM';
  }
}

export { errno };
