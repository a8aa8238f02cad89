// A small tmpfs for disk-full tests: mounted only where the tests may mount (root with
// CAP_SYS_ADMIN on Linux: CI); `mounted` is false elsewhere and the tests that need it are skipped.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SmallDisk {
  readonly path: string;
  readonly mounted: boolean;
  /** Bytes free on it now. */
  free(): number;
  /** Fills it, leaving about `leave` bytes free; `release()` frees the space again. */
  fill(leave: number): void;
  release(): void;
  unmount(): Promise<void>;
}

export function smallDisk(path: string, bytes: number): SmallDisk {
  mkdirSync(path, { recursive: true });
  let mounted = false;
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', path], {
        stdio: 'ignore',
      });
      mounted = true;
    } catch {
      mounted = false;
    }
  }
  const filler = join(path, '.filler');
  const free = () =>
    Number(execFileSync('df', ['--output=avail', '-B1', path]).toString().split('\n')[1]?.trim());
  return {
    path,
    mounted,
    free,
    fill(leave) {
      rmSync(filler, { force: true });
      const avail = free();
      writeFileSync(filler, Buffer.alloc(Math.max(0, avail - leave)));
    },
    release() {
      rmSync(filler, { force: true });
    },
    async unmount() {
      // A child's last close can still be in flight: retry, then detach lazily.
      for (let attempt = 0; mounted && attempt < 20; attempt++) {
        try {
          execFileSync('umount', [path], { stdio: 'ignore' });
          return;
        } catch {
          if (attempt === 19) execFileSync('umount', ['-l', path], { stdio: 'ignore' });
          else await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}
