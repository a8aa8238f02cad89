// A run pays only for the schema machinery it uses: re2js loads on the first schema
// with a `pattern`, and the schema worker pool (where ajv loads) starts on the first validation,
// never at engine creation or for a run without an output schema; once idle, those workers do not
// hold the process open. Each case runs the built engine
// in a fresh process (tests/fixtures/lazy-run.mjs), so nothing another test loaded can hide it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CHILD = join(import.meta.dirname, 'fixtures', 'lazy-run.mjs');

interface LazyRun {
  status: string;
  re2js: boolean;
  workers: string[];
  heldPorts: number;
}

function lazyRun(mode: 'plain' | 'schema'): LazyRun {
  const out = execFileSync(process.execPath, [CHILD, mode], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}');
}

describe('schema machinery loads on first use', () => {
  it('a run without an output schema loads no re2js and starts no schema worker', () => {
    const r = lazyRun('plain');
    expect(r.status).toBe('completed');
    expect(r.re2js).toBe(false);
    expect(r.workers.filter((w) => w === 'schema')).toEqual([]);
    expect(r.workers).toContain('sandbox');
  }, 60_000);

  it('a run whose output schema has a pattern loads re2js and starts a schema worker', () => {
    // The positive control: the same probes see them when they are used.
    const r = lazyRun('schema');
    expect(r.status).toBe('completed');
    expect(r.re2js).toBe(true);
    expect(r.workers).toContain('schema');
    // Its idle schema workers do not keep the process alive (it exited 10 s late, at their idle
    // timeout, when a 'message' listener re-reffed each worker after unref()).
    expect(r.heldPorts).toBe(0);
  }, 60_000);
});
