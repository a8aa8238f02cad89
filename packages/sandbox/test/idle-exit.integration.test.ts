// An idle sandbox does not keep its process alive: its workers hold the process while they boot
// and while runs are active, never when idle, so a program that forgot close() still ends. Before
// the fix each worker was unref()'d before its 'message' listener was attached, which refs it
// again: such a program never exited. Runs the built package in a fresh process.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const exec = promisify(execFile);
const CHILD = join(import.meta.dirname, 'fixtures', 'idle-exit.mjs');

it('a sandbox that is never closed lets the process end once idle', async () => {
  // A hang is the failure: the child would wait on its idle workers forever.
  const { stdout } = await exec(process.execPath, [CHILD], { timeout: 40_000 });
  const report = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  expect(report).toEqual({ status: 'completed', heldPorts: 0 });
}, 60_000);
