// Journal amplification: every answered call is journaled with its full outcome, so re-reading
// one large child answer many times (wf.snapshot/wf.output/wf.wait) writes it to the on-disk
// journal again each time. One hostile run must not turn one big answer into gigabytes on disk:
// the engine fails it at maxJournalBytes (WF_ENGINE_OUTPUT_LIMIT).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRunStore } from '@wf/catalog-fs';
import type { RunRecorder } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, closeSandbox } from './harness.js';

const base = mkdtempSync(join(tmpdir(), 'wf-xl-journal-'));
afterAll(async () => {
  await closeSandbox();
  rmSync(base, { recursive: true, force: true });
});

async function treeBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  }
  return n;
}

const MiB = 1024 * 1024;

describe('journal amplification (checker bypassed)', () => {
  it('re-reading one 300 KB answer 150 times stays far below 150 copies on disk', async () => {
    const project = mkdtempSync(join(base, 'p-'));
    const store = await openRunStore({ project, fsync: 'never' });
    const r = await attack(
      `const t = await wf.runAgent({ name: 'big', prompt: 'p' });
       let n = 0;
       for (let i = 0; i < 150; i += 1) { try { await wf.snapshot(t.taskId); n += 1; } catch (e) { break; } }
       return n;`,
      {
        checker: false,
        limits: { maxJournalBytes: 16 * MiB },
        recorder: store as unknown as RunRecorder,
        agents: { respond: () => ({ text: 'B'.repeat(300 * 1000) }) },
      },
    );
    const bytes = await treeBytes(store.root);
    // 150 snapshots of ~600 KB each would be ~90 MB; a bound keeps the run store small.
    expect(bytes, `${(bytes / MiB).toFixed(1)} MiB on disk; ${r.done.status}`).toBeLessThan(
      24 * MiB,
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
    expect(r.done.error?.message).toContain('maxJournalBytes');
  }, 60_000);
});
