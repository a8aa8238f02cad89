// wf.readFile attacks through the engine and sandbox against a real workspace on disk: `..`
// escapes, absolute paths, /proc, symlinked files and intermediate directories, FIFOs and
// directories, oversized and non-UTF-8 files. Every refusal is WF_ENGINE_READ_DENIED, an ordinary
// error the workflow can catch, and no refusal message carries a host path (invariants 1, 8).
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attack, both, closeSandbox, hostLeaks } from './harness.js';

let base: string;
let ws: string;
const MAX = 4096;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'wf-xl-read-'));
  ws = join(base, 'workspace');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP-SECRET-OUTSIDE');
  writeFileSync(join(ws, 'ok.txt'), 'hello workspace');
  writeFileSync(join(ws, 'sub', 'inner.txt'), 'inner');
  writeFileSync(join(ws, 'big.txt'), 'x'.repeat(MAX + 1));
  writeFileSync(join(ws, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link-file'));
  symlinkSync(outside, join(ws, 'link-dir'));
  symlinkSync('sub', join(ws, 'link-inside'));
  symlinkSync('/dev/zero', join(ws, 'zero'));
  execFileSync('mkfifo', [join(ws, 'fifo')]);
  execFileSync('mkfifo', [join(ws, 'sub', 'fifo2')]);
});

afterAll(async () => {
  // A reader blocked in open(2) on a FIFO is released by a writer opening it.
  for (const f of [join(ws, 'fifo'), join(ws, 'sub', 'fifo2')]) {
    try {
      closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // no reader waiting
    }
  }
  await closeSandbox();
  rmSync(base, { recursive: true, force: true });
});

const read = (paths: string[]) =>
  `const out = {};
   for (const p of ${JSON.stringify(paths)}) {
     try { out[p] = { ok: await wf.readFile(p) }; }
     catch (e) { out[p] = { code: e.code, message: e.message }; }
   }
   return out;`;

type Outcome = Record<string, { ok?: string; code?: string; message?: string }>;

describe.each(both)('wf.readFile containment ($label)', ({ checker }) => {
  it('reads ordinary files inside the workspace', async () => {
    const r = await attack(read(['ok.txt', 'sub/inner.txt', './sub/../ok.txt']), {
      checker,
      workspace: ws,
      limits: { readFileMaxBytes: MAX },
    });
    expect(r.done.status).toBe('completed');
    expect(r.done.result).toEqual({
      'ok.txt': { ok: 'hello workspace' },
      'sub/inner.txt': { ok: 'inner' },
      './sub/../ok.txt': { ok: 'hello workspace' },
    });
  });

  it('refuses escapes, symlinks, devices, oversized and non-UTF-8 files', async () => {
    const denied = [
      '../outside/secret.txt',
      'sub/../../outside/secret.txt',
      `${'../'.repeat(30)}etc/passwd`,
      '/etc/passwd',
      '/proc/self/environ',
      '/proc/self/cmdline',
      'link-file',
      'link-dir/secret.txt',
      'link-inside/inner.txt',
      'zero',
      'sub',
      '.',
      'missing.txt',
      'big.txt',
      'latin1.txt',
    ];
    const r = await attack(read(denied), {
      checker,
      workspace: ws,
      limits: { readFileMaxBytes: MAX },
    });
    expect(r.done.status).toBe('completed');
    const out = r.done.result as Outcome;
    for (const p of denied) {
      expect(out[p]?.code, p).toBe('WF_ENGINE_READ_DENIED');
      expect(out[p]?.ok, p).toBeUndefined();
      // The message echoes the workflow's own path, never the workspace root.
      expect(out[p]?.message ?? '', p).not.toContain(base);
      expect(hostLeaks((out[p]?.message ?? '').replace(p, '')), p).toEqual([]);
    }
    expect(JSON.stringify(r.done)).not.toContain('TOP-SECRET');
  });

  it('a FIFO in the workspace is refused at once instead of blocking a host thread', async () => {
    // open(2) on a FIFO blocks until a writer appears: four such reads would wedge every fs
    // call of the host process (libuv has four threads), and the run would never end.
    const started = Date.now();
    const r = await attack(read(['fifo', 'sub/fifo2', 'fifo', 'sub/fifo2', 'fifo']), {
      checker,
      workspace: ws,
      limits: { wallMs: 5000 },
    });
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
    const out = r.done.result as Outcome;
    expect(out.fifo?.code).toBe('WF_ENGINE_READ_DENIED');
    expect(out['sub/fifo2']?.code).toBe('WF_ENGINE_READ_DENIED');
    expect(Date.now() - started).toBeLessThan(5000);
  }, 15_000);

  it('a directory swapped for a symlink while reads run never yields a file outside', async () => {
    // The swap races the lstat walk and open(2): the file opened must be the file checked.
    const real = join(ws, 'swap-real');
    const swap = join(ws, 'swap');
    const evil = join(ws, 'swap-evil');
    for (const p of [real, swap, evil]) rmSync(p, { recursive: true, force: true });
    mkdirSync(real, { recursive: true });
    writeFileSync(join(real, 'secret.txt'), 'inside');
    symlinkSync(join(base, 'outside'), evil);
    let flip = false;
    renameSync(real, swap);
    const timer = setInterval(() => {
      try {
        // atomic swaps: swap <-> real dir / symlink to outside
        if (flip) {
          renameSync(swap, evil);
          renameSync(real, swap);
        } else {
          renameSync(swap, real);
          renameSync(evil, swap);
        }
        flip = !flip;
      } catch {
        // a read holds nothing open on the path; a failed swap just retries next tick
      }
    }, 0);
    try {
      const r = await attack(
        `const seen = [];
         for (let i = 0; i < 300; i += 1) {
           try { seen.push(await wf.readFile('swap/secret.txt')); } catch (e) { seen.push(e.code); }
         }
         return seen;`,
        { checker, workspace: ws },
      );
      expect(r.done.status).toBe('completed');
      const seen = r.done.result as string[];
      expect(seen.filter((x) => x.includes('TOP-SECRET'))).toEqual([]);
      expect(new Set(seen.filter((x) => x !== 'inside'))).toEqual(
        new Set(seen.some((x) => x !== 'inside') ? ['WF_ENGINE_READ_DENIED'] : []),
      );
    } finally {
      clearInterval(timer);
    }
  });

  it('a NUL byte or an over-long path is an invalid call that fails the run', async () => {
    for (const p of ['ok.txt\u0000../../etc/passwd', 'a/'.repeat(3000)]) {
      const r = await attack(
        `try { await wf.readFile(${JSON.stringify(p)}); } catch (e) {} return 'escaped';`,
        {
          checker,
          workspace: ws,
        },
      );
      expect(r.done.status).toBe('failed');
      expect(r.done.error?.code).toBe('WF_BRIDGE_CALL_INVALID');
      expect(r.done.error?.message).toContain('path');
    }
  });
});
