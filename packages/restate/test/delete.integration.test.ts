// Deleting a run from Restate (deleteRun, the CLI's wf delete-run --restate): the large answers
// it stored by reference are reference-counted per run, so a blob another run also stored stays
// (and that run still reads it), one only this run stored is cleared, and its journal and record
// go; an active run is never deleted.
import { createSimulatedAgents } from '@wf/engine';
import { expect, it } from 'vitest';
import { awaitRun, controlRun, deleteRun, fetchRun, submitRun } from '../src/index.js';
import { useSingleWorker } from './helpers/single-worker.js';

const s = useSingleWorker({
  agents: createSimulatedAgents({
    seed: 3,
    // 3 KB answers (by reference above 1 KiB): `shared-*` the same in every run, `own-*` not.
    respond: (r) => ({
      text: `${r.name.startsWith('own') ? r.runId : 'same'}:${'x'.repeat(3_000)}`,
      delayMs: r.name.startsWith('slow') ? 60_000 : 0,
    }),
  }),
  answerByReferenceBytes: 1024,
});

const manifest = {
  name: 'blobs',
  description: 'Large answers by reference.',
  phases: ['work'],
  readOnly: true,
  maxAgents: 4,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};
const source = `async function run(wf) {
  const a = await wf.runAgent({ name: 'shared-1', prompt: 'p', readOnly: true });
  const b = await wf.runAgent({ name: 'own-1', prompt: 'p', readOnly: true });
  return [a.finalText, b.finalText];
}`;

/** The WfBlob chunks holding data, through the admin API's SQL. */
async function blobChunks(): Promise<string[]> {
  const res = await fetch(`${s.server.admin}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: "SELECT service_key FROM state WHERE service_name = 'WfBlob' AND key = 'data'",
    }),
  });
  return ((await res.json()) as { rows: { service_key: string }[] }).rows
    .map((r) => r.service_key)
    .sort();
}

const submit = (runId: string, src = source) =>
  submitRun(s.server.ingress, {
    runId,
    workflow: { manifest, source: src },
    trust: 'capability-generated',
  });

it('releases what only the deleted run stored, keeps what another run also stored', async () => {
  await submit('blobs-a');
  await submit('blobs-b');
  for (const id of ['blobs-a', 'blobs-b'])
    expect((await awaitRun(s.server.ingress, id)).status).toBe('completed');
  const before = await blobChunks();
  expect(before.length).toBeGreaterThan(0);

  const a = await deleteRun(s.server.ingress, s.server.admin, 'blobs-a');
  expect(a).toMatchObject({ deleted: true });
  expect(await fetchRun(s.server.ingress, 'blobs-a')).toBeUndefined();
  const between = await blobChunks();
  // Some went (the ones only blobs-a stored), some stayed (also stored by blobs-b).
  expect(between.length).toBeLessThan(before.length);
  expect(between.length).toBeGreaterThan(0);
  // blobs-b is whole: its result by reference, read back and checked against its hash.
  const b = await fetchRun(s.server.ingress, 'blobs-b');
  const result = b?.finish?.result as string[] | undefined;
  expect(String(result?.[0])).toMatch(/^same:x{3000}$/);

  expect(await deleteRun(s.server.ingress, s.server.admin, 'blobs-b')).toMatchObject({
    deleted: true,
  });
  expect(await blobChunks()).toEqual([]);
  expect(await deleteRun(s.server.ingress, s.server.admin, 'blobs-b')).toEqual({
    deleted: false,
    reason: 'not-found',
  });
}, 60_000);

it('never deletes an active run', async () => {
  await submit(
    'blobs-active',
    `async function run(wf) { return (await wf.runAgent({ name: 'slow-1', prompt: 'p', readOnly: true })).finalText; }`,
  );
  const deadline = Date.now() + 30_000;
  while (!(await fetchRun(s.server.ingress, 'blobs-active', { events: false }))) {
    if (Date.now() > deadline) throw new Error('the run did not begin');
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(await deleteRun(s.server.ingress, s.server.admin, 'blobs-active')).toEqual({
    deleted: false,
    reason: 'active',
  });
  await controlRun(s.server.ingress, 'blobs-active', { run: 'stopping' });
  expect((await awaitRun(s.server.ingress, 'blobs-active')).status).toBe('stopped');
  expect(await deleteRun(s.server.ingress, s.server.admin, 'blobs-active')).toMatchObject({
    deleted: true,
  });
}, 60_000);
