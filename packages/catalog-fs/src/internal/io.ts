// The calls the run store's read path makes (opening directories and files, listing, stat, read),
// behind one interface with two implementations. NONBLOCKING_IO is node:fs/promises: each call
// is a round trip to libuv's thread pool, right for a host whose event loop serves other work
// meanwhile. BLOCKING_IO makes the same calls synchronously, for a one-shot command line that has
// nothing else to do (`openRunStore({ blockingReads: true })`): such a command would spend most
// of its reading time waiting for the pool. The checks around each call (O_NOFOLLOW, /proc/self/fd paths, fstat,
// size limits) are the same code either way: only the call itself differs.
// Every module of this package reaches the promise API as `fs.promises` (a getter that loads
// node:fs/promises on first use), not `import ... from 'node:fs/promises'`: in a CommonJS bundle
// (`wf`) a command that never makes an asynchronous file call never loads it.
import {
  closeSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  promises as fsp,
  realpathSync,
  type Stats,
} from 'node:fs';

/** An open file or directory: the subset of fs/promises' FileHandle the store uses. */
export interface FileLike {
  readonly fd: number;
  stat(): Promise<Stats>;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface Io {
  open(path: string, flags: number): Promise<FileLike>;
  readdir(path: string): Promise<string[]>;
  lstat(path: string): Promise<Stats>;
  /** lstat, or undefined when nothing is there (ENOENT): no error built for the common miss. */
  lstatIfAny(path: string): Promise<Stats | undefined>;
  realpath(path: string): Promise<string>;
  readlink(path: string): Promise<string>;
}

export const NONBLOCKING_IO: Io = {
  open: (path, flags) => fsp.open(path, flags),
  readdir: (path) => fsp.readdir(path),
  lstat: (path) => fsp.lstat(path),
  lstatIfAny: (path) =>
    fsp.lstat(path).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
      throw error;
    }),
  realpath: (path) => fsp.realpath(path),
  readlink: (path) => fsp.readlink(path),
};

/** EBADF for a handle used after close (its descriptor number may belong to another file now). */
function closedError(): Error {
  return Object.assign(new Error('EBADF: file handle already closed'), { code: 'EBADF' });
}

/**
 * A descriptor opened synchronously. Like FileHandle, it forgets its descriptor when closed, so a
 * second close or a late read can never reach a file that reused the number.
 */
class BlockingFile implements FileLike {
  #fd: number;
  constructor(fd: number) {
    this.#fd = fd;
  }
  get fd(): number {
    return this.#fd;
  }
  private open(): number {
    if (this.#fd < 0) throw closedError();
    return this.#fd;
  }
  async stat(): Promise<Stats> {
    return fstatSync(this.open());
  }
  async read(buffer: Buffer, offset: number, length: number, position: number) {
    return { bytesRead: readSync(this.open(), buffer, offset, length, position) };
  }
  async sync(): Promise<void> {
    fsyncSync(this.open());
  }
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd < 0) return;
    this.#fd = -1;
    closeSync(fd);
  }
}

// async functions: a failing call rejects with the same error (and `code`) fs/promises gives.
export const BLOCKING_IO: Io = {
  open: async (path, flags) => new BlockingFile(openSync(path, flags)),
  readdir: async (path) => readdirSync(path),
  lstat: async (path) => lstatSync(path),
  // Without the thrown error of a miss: a miss is the usual answer, and building the error costs
  // as much as the call.
  lstatIfAny: async (path) => lstatSync(path, { throwIfNoEntry: false }),
  // .native: realpath(3), as fs/promises uses (realpathSync walks the path in JavaScript)
  realpath: async (path) => realpathSync.native(path),
  readlink: async (path) => readlinkSync(path),
};
