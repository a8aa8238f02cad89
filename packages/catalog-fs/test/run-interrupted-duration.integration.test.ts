// An interrupted run's duration ends at its last recorded event, not when recovery noticed the
// crash: recover() stamps endedAt from the tail of events.jsonl (a torn last line is skipped).
// Real files; the dead owner is a process that has exited.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSpan } from '@wf/bridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../src/index.js';
import { tempDir } from './helpers/fixtures.js';
import { startRecord } from './helpers/runs.js';

let cleanup: () => void;
let project: string;

beforeEach(() => {
  const made = tempDir('wf-runs-interrupted-');
  cleanup = made.cleanup;
  project = join(made.dir, 'project');
  mkdirSync(project);
});
afterEach(() => cleanup());

const deadPid = () => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
};

describe('an interrupted run', () => {
  it('ends at its last recorded event', async () => {
    // Recorded an hour ago, so "now" and the last event are far apart.
    const t0 = Date.now() - 3_600_000;
    const store = await openRunStore({ project });
    await store.begin({ ...startRecord('run-i'), startedAt: t0 });
    const types = ['workflow-started', 'phase-started', 'agent-started', 'agent-started'];
    types.forEach((type, i) => {
      store.event({ seq: i + 1, runId: 'run-i', type, time: t0 + i * 130, data: {} });
    });
    await store.close();
    const dir = join(project, '.dsh', 'workflow-runs', 'run-i');
    // The crash tore the next line mid-write.
    appendFileSync(join(dir, 'events.jsonl'), `{"seq":5,"runId":"run-i","type":"agent-st`);
    const file = join(dir, 'run.json');
    const snap = JSON.parse(readFileSync(file, 'utf8'));
    snap.owner.pid = deadPid();
    snap.owner.token = 'gone';
    writeFileSync(file, JSON.stringify(snap));

    const reopened = await openRunStore({ project });
    try {
      const shown = await reopened.show('run-i');
      if (!shown.ok) throw new Error(shown.error.message);
      const recorded = shown.run.snapshot ?? {};
      expect(recorded).toMatchObject({ status: 'interrupted', startedAt: t0, endedAt: t0 + 390 });
      expect(runSpan(recorded).durationMs).toBe(390);
    } finally {
      await reopened.close();
    }
  });
});
