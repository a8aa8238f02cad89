// An injected file system for fault tests: every call that writes (an open for writing, write,
// writeFile, fsync, rename, link, mkdir) made through node:fs's promise API in this process is
// counted, and the Nth can be made to fail with an errno (ENOSPC, EIO) or to SIGKILL the process
// just before it runs. The package reaches that API as `fs.promises` at call time and file
// handles through their class's prototype, so patching both sees every write path it has.
import { constants, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { O_WRONLY, O_RDWR, O_CREAT } = constants;
const WRITE_FLAGS = O_WRONLY | O_RDWR | O_CREAT;

export type Fault =
  | { readonly at: number; readonly errno: 'ENOSPC' | 'EIO' }
  | { readonly at: number; readonly kill: true };

export interface FaultyFs {
  /** Write calls counted since the last `arm` (or install). */
  count(): number;
  /** The write calls seen, in order (`write events.jsonl`, `rename run.json`...), for messages. */
  log(): readonly string[];
  /** Fails (or kills at) the `at`-th write call from now; counting starts again at 0. */
  arm(fault: Fault | undefined): void;
  /** No fault from now on; the count goes on. */
  disarm(): void;
  restore(): void;
}

type AnyFn = (...args: unknown[]) => Promise<unknown>;

function describe(path: unknown): string {
  if (typeof path !== 'string') return '<fd>';
  return path.split('/').slice(-1)[0] ?? path;
}

/** Installs the counting layer; `restore()` puts the originals back. */
export async function installFaultyFs(): Promise<FaultyFs> {
  let counted = 0;
  let fault: Fault | undefined;
  let seen: string[] = [];
  const hit = (what: string) => {
    counted++;
    seen.push(what);
    if (!fault || counted !== fault.at) return;
    if ('kill' in fault) process.kill(process.pid, 'SIGKILL');
    else {
      const error = new Error(`${fault.errno}: injected fault, ${what}`) as NodeJS.ErrnoException;
      error.code = fault.errno;
      fault = undefined;
      throw error;
    }
  };
  const restores: (() => void)[] = [];
  const patch = (
    target: Record<string, unknown>,
    name: string,
    counts: (args: unknown[], self: unknown) => string | undefined,
  ) => {
    const original = target[name] as AnyFn;
    target[name] = async function patched(this: unknown, ...args: unknown[]) {
      const what = counts(args, this);
      if (what !== undefined) hit(what);
      return original.apply(this, args);
    };
    restores.push(() => {
      target[name] = original;
    });
  };
  const promises = fsp as unknown as Record<string, unknown>;
  const names = new Map<number, string>();
  patch(promises, 'open', ([path, flags]) => {
    const writes =
      typeof flags === 'number'
        ? (flags & WRITE_FLAGS) !== 0
        : typeof flags === 'string' && /[wa+]/.test(flags);
    return writes ? `open ${describe(path)}` : undefined;
  });
  // Names for the handles' messages: which file a write or an fsync went to.
  const open = promises.open as AnyFn;
  promises.open = async (...args: unknown[]) => {
    const handle = (await open(...args)) as { fd: number };
    names.set(handle.fd, describe(args[0]));
    return handle;
  };
  restores.push(() => {
    promises.open = open;
  });
  for (const name of ['writeFile', 'appendFile', 'rename', 'link', 'mkdir'])
    patch(promises, name, ([path]) => `${name} ${describe(path)}`);
  const probePath = join(tmpdir(), `wf-faulty-fs-probe-${process.pid}`);
  const probe = await fsp.open(probePath, 'w');
  const proto = Object.getPrototypeOf(probe) as Record<string, unknown>;
  await probe.close();
  await fsp.unlink(probePath);
  for (const name of ['write', 'writeFile', 'sync', 'datasync'])
    patch(
      proto,
      name,
      (_args, self) => `${name} ${names.get((self as { fd: number }).fd) ?? 'fd'}`,
    );
  return {
    count: () => counted,
    log: () => seen,
    arm(next) {
      fault = next;
      counted = 0;
      seen = [];
    },
    disarm() {
      fault = undefined;
    },
    restore() {
      for (const undo of restores.reverse()) undo();
      restores.length = 0;
    },
  };
}
