// A cross-process lock file per catalog root, held only for the few syscalls of a mutation
// (replace, rename, delete, intent replay). A lock whose holder died is broken under a second
// "breaker" lock, so two processes never both break and re-take it.
import { randomBytes } from './crypto.js';
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { CatalogFsError } from '../errors.js';
import {
  type ErrorCodes,
  errno,
  HOSTNAME,
  ioError,
  isPidAlive,
  processToken,
  type SafeDir,
} from './safe-dir.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_NONBLOCK } = constants;

export const LOCK_NAME = '.wf-lock';
const BREAKER_NAME = '.wf-lock.break';

export interface LockOptions {
  readonly timeoutMs: number;
  /** A lock older than this is considered abandoned even if its pid looks alive (pid reuse). */
  readonly staleMs: number;
  readonly codes: ErrorCodes & { readonly busy: CatalogFsError['code'] };
}

interface Holder {
  readonly pid: number;
  readonly token: string;
  readonly host: string;
  readonly at: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readHolder(
  dir: SafeDir,
  name: string,
): Promise<{ text: string; mtimeMs: number } | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(dir.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    const st = await handle.stat();
    const text = st.isFile() && st.size < 4096 ? await handle.readFile('utf8') : '';
    return { text, mtimeMs: st.mtimeMs };
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    // A symlink or junk under the lock name: treat as held by nobody we can verify.
    return { text: '', mtimeMs: 0 };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function isStale(text: string, mtimeMs: number, options: LockOptions, now: number): boolean {
  let holder: Holder | undefined;
  try {
    holder = JSON.parse(text) as Holder;
  } catch {
    holder = undefined;
  }
  // Empty or unparsable: the holder died between create and write, or it is junk. Give a live
  // writer a moment to finish writing before breaking it.
  if (!holder || typeof holder.pid !== 'number') return now - mtimeMs > 2_000;
  if (now - holder.at > options.staleMs) return true;
  if (holder.host === HOSTNAME && !isPidAlive(holder.pid)) return true;
  return false;
}

/**
 * Creates the lock file `name` holding `content`; false when it exists. A lock whose content could
 * not be written (a full disk) is removed again before the error is thrown: an empty lock would
 * make every later taker wait for it to look stale, and then fail the same way breaking it.
 */
async function tryCreate(dir: SafeDir, name: string, content: string): Promise<boolean> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
    await handle.close();
    handle = undefined;
    return true;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fsp.unlink(dir.at(name)).catch(() => undefined);
    throw error;
  }
}

async function breakIfStale(dir: SafeDir, seen: string, options: LockOptions): Promise<void> {
  const breaker = JSON.stringify({
    pid: process.pid,
    token: processToken(),
    host: HOSTNAME,
    at: Date.now(),
  });
  if (!(await tryCreate(dir, BREAKER_NAME, breaker))) {
    const other = await readHolder(dir, BREAKER_NAME);
    if (other && isStale(other.text, other.mtimeMs, { ...options, staleMs: 5_000 }, Date.now())) {
      await fsp.unlink(dir.at(BREAKER_NAME)).catch(() => undefined);
    }
    return;
  }
  try {
    // Only breakers remove a lock they did not take, and they are serialised by the breaker
    // file; the dead holder cannot release it. So the content we re-read is still the stale one.
    const again = await readHolder(dir, LOCK_NAME);
    if (again && again.text === seen) await fsp.unlink(dir.at(LOCK_NAME)).catch(() => undefined);
  } finally {
    await fsp.unlink(dir.at(BREAKER_NAME)).catch(() => undefined);
  }
}

/** Removes a breaker file left by a process that died while breaking a lock (call under the lock). */
export async function clearStaleBreaker(dir: SafeDir, options: LockOptions): Promise<void> {
  const breaker = await readHolder(dir, BREAKER_NAME);
  if (
    breaker &&
    isStale(breaker.text, breaker.mtimeMs, { ...options, staleMs: 5_000 }, Date.now())
  ) {
    await fsp.unlink(dir.at(BREAKER_NAME)).catch(() => undefined);
  }
}

/** Holds the root's lock for the duration of `body`. */
export async function withLock<T>(
  dir: SafeDir,
  options: LockOptions,
  body: () => Promise<T>,
): Promise<T> {
  const mine = JSON.stringify({
    pid: process.pid,
    token: processToken(),
    host: HOSTNAME,
    at: Date.now(),
    nonce: randomBytes(6).toString('hex'),
  });
  const deadline = Date.now() + options.timeoutMs;
  let delay = 1;
  for (;;) {
    let created: boolean;
    try {
      created = await tryCreate(dir, LOCK_NAME, mine);
    } catch (error) {
      throw ioError(options.codes, `taking the lock in ${dir.path}`, error);
    }
    if (created) break;
    const seen = await readHolder(dir, LOCK_NAME);
    if (seen && isStale(seen.text, seen.mtimeMs, options, Date.now())) {
      try {
        await breakIfStale(dir, seen.text, options);
      } catch (error) {
        throw ioError(options.codes, `breaking the stale lock in ${dir.path}`, error);
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new CatalogFsError(
        options.codes.busy,
        `the catalog in ${dir.path} stayed locked for ${options.timeoutMs} ms (held by ${seen?.text || 'unknown'})`,
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 25);
  }
  try {
    return await body();
  } finally {
    // Release only our own lock: if it was broken as stale and re-taken, it is not ours to remove.
    const now = await readHolder(dir, LOCK_NAME);
    if (now && now.text === mine) await fsp.unlink(dir.at(LOCK_NAME)).catch(() => undefined);
  }
}
