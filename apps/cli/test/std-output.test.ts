// The CLI's stdout and stderr (src/cli/std-output.ts): bytes go straight to the descriptor until a
// caller asks a terminal fact; a write the descriptor refuses (EAGAIN) hands the rest, and every
// later write, to the Node stream without losing or reordering a byte; a closed pipe ends quietly.
import { closeSync, openSync, readFileSync, type writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type NodeWriteStream, StdOutput } from '../src/cli/std-output.js';
import { tempProject } from './helpers/wf-cli.js';

/** A stand-in Node stream that records what it was given. */
function fakeStream(tty = false) {
  const chunks: Buffer[] = [];
  const stream = {
    isTTY: tty,
    columns: 120,
    rows: 40,
    write: (chunk: string | Uint8Array) => {
      chunks.push(Buffer.from(chunk));
      return true;
    },
    on: () => stream,
  } as unknown as NodeWriteStream;
  let built = 0;
  return {
    factory: () => {
      built++;
      return stream;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
    built: () => built,
  };
}

/** A descriptor that takes at most `step` bytes per call and fails with `code` after `limit`. */
function fakeFd(step: number, limit = Number.POSITIVE_INFINITY, code = 'EAGAIN') {
  const written: Buffer[] = [];
  let total = 0;
  const write = ((_fd: number, buffer: Buffer, offset: number, length: number) => {
    if (total >= limit) throw Object.assign(new Error(code), { code });
    const n = Math.min(step, length, limit - total);
    written.push(Buffer.from(buffer.subarray(offset, offset + n)));
    total += n;
    return n;
  }) as unknown as typeof writeSync;
  return { write, text: () => Buffer.concat(written).toString('utf8') };
}

const exitCalled = () => {
  throw new Error('closed pipe');
};

describe('StdOutput', () => {
  it('writes to the descriptor and never builds the Node stream while no terminal fact is asked', () => {
    const stream = fakeStream();
    const fd = fakeFd(1 << 20);
    const out = new StdOutput(1, stream.factory, fd.write, exitCalled);
    out.write('one\n');
    out.write('two\n');
    expect(fd.text()).toBe('one\ntwo\n');
    expect(stream.built()).toBe(0);
  });

  it('goes on after a short write, a multi-byte character split included', () => {
    const fd = fakeFd(1);
    const text = 'tokens · 1,024 — ok ✓\n';
    new StdOutput(1, fakeStream().factory, fd.write, exitCalled).write(text);
    expect(fd.text()).toBe(text);
  });

  it('hands the rest to the Node stream when the descriptor refuses (EAGAIN), and keeps it: nothing lost or reordered', () => {
    const stream = fakeStream();
    const fd = fakeFd(4, 10);
    const out = new StdOutput(1, stream.factory, fd.write, exitCalled);
    out.write('abcdefghijklmnop');
    out.write('-after');
    expect(fd.text()).toBe('abcdefghij');
    expect(stream.text()).toBe('klmnop-after');
    expect(fd.text() + stream.text()).toBe('abcdefghijklmnop-after');
    expect(stream.built()).toBe(1);
  });

  it('a closed pipe (EPIPE) ends the command quietly instead of handing over', () => {
    const stream = fakeStream();
    const out = new StdOutput(1, stream.factory, fakeFd(4, 0, 'EPIPE').write, exitCalled);
    expect(() => out.write('x')).toThrow('closed pipe');
    expect(stream.built()).toBe(0);
  });

  it('asking a terminal fact of a character device builds the stream once, and then every write goes through it', () => {
    const stream = fakeStream(true);
    const fd = fakeFd(1 << 20);
    const out = new StdOutput(1, stream.factory, fd.write, exitCalled, () => true);
    out.write('before\n');
    expect(out.isTTY).toBe(true);
    expect(out.columns).toBe(120);
    expect(out.rows).toBe(40);
    out.write('after\n');
    expect(fd.text()).toBe('before\n');
    expect(stream.text()).toBe('after\n');
    expect(stream.built()).toBe(1);
  });

  it('a descriptor that is no character device is not a terminal: no stream is built to say so', () => {
    const stream = fakeStream(true);
    const fd = fakeFd(1 << 20);
    let fstats = 0;
    const out = new StdOutput(1, stream.factory, fd.write, exitCalled, () => {
      fstats++;
      return false;
    });
    expect(out.isTTY).toBe(false);
    expect(out.columns).toBeUndefined();
    expect(out.rows).toBeUndefined();
    out.write('still direct\n');
    expect(fd.text()).toBe('still direct\n');
    expect(stream.built()).toBe(0);
    expect(fstats).toBe(1);
  });

  it('a real file is no terminal, and is written byte for byte', () => {
    const p = tempProject();
    try {
      const file = join(p.dir, 'out.txt');
      const fd = openSync(file, 'w');
      const stream = fakeStream(true);
      const out = new StdOutput(fd, stream.factory);
      const text = `${'x'.repeat(100_000)}\n— done\n`;
      out.write(text);
      expect(out.isTTY).toBe(false);
      expect(stream.built()).toBe(0);
      closeSync(fd);
      expect(readFileSync(file, 'utf8')).toBe(text);
    } finally {
      p.cleanup();
    }
  });
});
