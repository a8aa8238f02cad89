// The CLI's stdout and stderr. A write goes straight to the descriptor (write(2), fs.writeSync):
// the first touch of process.stdout builds a net.Socket (pipe) or tty.WriteStream and loads about
// twenty of Node's stream modules, a visible share of a light verb (bench/RESULTS.md). Node writes stdout and stderr synchronously on Linux for files, pipes and
// terminals, so output order and exit behaviour are the same as through process.stdout.
// The Node stream is still built, once, when a caller asks a terminal fact (isTTY, columns, rows:
// the live progress view and help do) of a descriptor that can be a terminal (a character device;
// a pipe or a file is answered "not a terminal" from one fstat), and from then on every write goes
// through it, so nothing is reordered around it. A direct write that fails for any reason but a closed pipe hands over to
// the stream for good (EAGAIN on a descriptor someone made non-blocking, for one), with the bytes
// not yet written: nothing is lost. A closed pipe (`wf runs | head -1`) ends the command quietly,
// like other Unix tools, with the exit code so far.
import { fstatSync, writeSync } from 'node:fs';
import type { TermStream } from './context.js';

/** What StdOutput needs of the Node stream it hands over to. */
export type NodeWriteStream = Pick<
  NodeJS.WriteStream,
  'write' | 'on' | 'isTTY' | 'columns' | 'rows'
>;

export class StdOutput implements TermStream {
  #stream: NodeWriteStream | undefined;
  #mayBeTerminal: boolean | undefined;

  /** The last three are fs.writeSync, a quiet exit and an fstat, but for tests. */
  constructor(
    private readonly fd: number,
    private readonly nodeStream: () => NodeWriteStream,
    private readonly writeFd: typeof writeSync = writeSync,
    private readonly closedPipe: () => never = exitQuietly,
    private readonly characterDevice: (fd: number) => boolean = isCharacterDevice,
  ) {}

  write(chunk: string): boolean {
    if (this.#stream !== undefined) return this.#stream.write(chunk);
    const bytes = Buffer.from(chunk, 'utf8');
    let done = 0;
    try {
      // write(2) may write less than asked (a pipe near full, a signal): go on from there
      while (done < bytes.length) done += this.writeFd(this.fd, bytes, done, bytes.length - done);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') this.closedPipe();
      return this.stream().write(bytes.subarray(done));
    }
  }

  get isTTY(): boolean {
    if (this.#stream === undefined) {
      this.#mayBeTerminal ??= this.characterDevice(this.fd);
      if (!this.#mayBeTerminal) return false;
    }
    return this.stream().isTTY === true;
  }

  get columns(): number | undefined {
    return this.isTTY ? this.stream().columns : undefined;
  }

  get rows(): number | undefined {
    return this.isTTY ? this.stream().rows : undefined;
  }

  /** The Node stream, built on first use, with the closed-pipe guard. */
  private stream(): NodeWriteStream {
    if (this.#stream === undefined) {
      const stream = this.nodeStream();
      stream.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'EPIPE') this.closedPipe();
        throw e;
      });
      this.#stream = stream;
    }
    return this.#stream;
  }
}

/** A terminal is a character device; so is /dev/null, which the stream then answers for. */
function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true; // let the Node stream decide, as before
  }
}

function exitQuietly(): never {
  process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
}

/** The process's stdout (descriptor 1). */
export const STDOUT: TermStream & { write(chunk: string): boolean } = new StdOutput(
  1,
  () => process.stdout,
);
/** The process's stderr (descriptor 2). */
export const STDERR: TermStream & { write(chunk: string): boolean } = new StdOutput(
  2,
  () => process.stderr,
);
