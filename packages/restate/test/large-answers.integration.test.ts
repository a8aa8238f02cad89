// Large answers by reference: an answer above `answerByReferenceBytes` is stored in the
// WfBlob object (chunked, keyed by its SHA-256) and only a reference travels through the child's
// journaled step, its invocation output and the run's journal; readers fetch it and check its
// hash and size. Real server, one worker, real sandbox.
import { createEngine, createSimulatedAgents, type SimulatedAgentsOptions } from '@wf/engine';
import { expect, it } from 'vitest';
import { awaitRun, BLOB_OBJECT, JOURNAL_OBJECT, submitRun } from '../src/index.js';
import { fromRef, isBlobRef } from '../src/internal/blobs.js';
import { openRestateJournal } from '../src/internal/journal-store.js';
import { createRemoteAgents } from '../src/internal/remote-agents.js';
import { FLOW_MANIFEST } from './helpers/flow.js';
import { useSingleWorker } from './helpers/single-worker.js';

const MiB = 1024 * 1024;
// Configured below the 1 MiB default: a child's answer crosses into the guest only below the
// sandbox's 4 MiB bound (maxResultBytes; runAgent's value carries the text more than once).
const THRESHOLD = 256 * 1024;
const BIG = 1.5 * MiB;
// Deterministic, not all one character (a hash over a run of 'x' would prove little).
const bigText = (chars: number, salt: string) => {
  // ASCII: the sandbox's own bound on an answer crossing into the guest is 4 MiB (maxResultBytes)
  const unit = `${salt}:0123456789abcdefghijklmnopqrstuvwxyz-`;
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
};
const respond: SimulatedAgentsOptions['respond'] = (request) =>
  request.name === 'big'
    ? { text: bigText(BIG, 'big') }
    : request.name === 'huge'
      ? { text: bigText(40 * MiB, 'huge') }
      : undefined;

const c = useSingleWorker({
  agents: createSimulatedAgents({ seed: 3, respond }),
  answerByReferenceBytes: THRESHOLD,
});

const SOURCE = `async function run(wf, args) {
  const small = await wf.runAgent({ name: 'small', prompt: 'p' });
  const big = await wf.runAgent({ name: 'big', prompt: 'p' });
  const t = big.finalText;
  let sum = 0;
  for (let i = 0; i < t.length; i += 4099) sum = (sum * 31 + t.charCodeAt(i)) % 1000000007;
  return { small: small.finalText, length: t.length, head: t.slice(0, 30), tail: t.slice(-30), sum };
}`;

it('a 1.5 MiB answer (threshold 256 KiB) crosses by reference: same result as embedded, nothing large inline', async () => {
  const start = {
    workflow: { manifest: FLOW_MANIFEST, source: SOURCE },
    args: {},
    trust: 'capability-generated' as const,
    seed: 5,
    startTime: 1_700_000_000_000,
  };
  const embedded = createEngine({
    agents: createSimulatedAgents({ seed: 3, respond }),
    sandbox: c.sandbox,
  });
  const local = await (await embedded.start({ ...start, runId: 'large-1' })).done;
  await embedded.close();
  expect(local.status).toBe('completed');
  expect((local.result as { length: number }).length).toBe(BIG);

  const began = Date.now();
  await submitRun(c.server.ingress, { ...start, runId: 'large-1' });
  const remote = await awaitRun(c.server.ingress, 'large-1');
  process.stdout.write(`large answer: 1.5 MiB answer run on Restate in ${Date.now() - began} ms\n`);
  expect(remote.error).toBeUndefined();
  expect(JSON.stringify(remote.result)).toBe(JSON.stringify(local.result));

  // The run's journal in Restate holds a reference where the answer was; no entry is large.
  const stored = (await fetch(`${c.server.ingress}/${JOURNAL_OBJECT}/large-1/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'null',
  }).then((r) => r.json())) as { method: string; outcome: unknown }[];
  for (const e of stored) expect(JSON.stringify(e).length).toBeLessThan(THRESHOLD);
  const refs = stored.filter((e) => isBlobRef(e.outcome));
  expect(refs.map((e) => e.method)).toEqual(['runAgent']);
  const ref = refs[0]?.outcome as { $wfBlob: { sha256: string; bytes: number; chunks: number } };
  expect(ref.$wfBlob.bytes).toBeGreaterThan(BIG);

  // A continued run's journal load fetches it back, verified.
  const journal = await openRestateJournal(
    c.server.ingress,
    'large-1',
    new AbortController().signal,
    () => {},
    { ingress: c.server.ingress, thresholdBytes: THRESHOLD, maxBytes: 128 * MiB },
  );
  const loaded = journal.entries.find(
    (e) => e.method === 'runAgent' && JSON.stringify(e).length > BIG,
  );
  expect(JSON.stringify(loaded?.outcome)).toContain(bigText(BIG, 'big').slice(-200));

  // Readers check the size bound before fetching, and the hash after.
  await expect(
    fromRef({ ingress: c.server.ingress, maxBytes: MiB }, ref, 'the big answer'),
  ).rejects.toMatchObject({ code: 'WF_RESTATE_ANSWER_REFERENCE' });
  const forged = { $wfBlob: { ...ref.$wfBlob, sha256: 'f'.repeat(64), chunks: 1 } };
  await fetch(`${c.server.ingress}/${BLOB_OBJECT}/${'f'.repeat(64)}.0/put`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify('"not what the hash says"'),
  });
  await expect(
    fromRef({ ingress: c.server.ingress, maxBytes: 128 * MiB }, forged, 'a forged answer'),
  ).rejects.toMatchObject({ code: 'WF_RESTATE_ANSWER_REFERENCE' });
}, 180_000);

it('a 40 MiB answer, above Restate 32 MiB message limit, reaches the orchestrator intact', async () => {
  const agents = createRemoteAgents({
    ingress: c.server.ingress,
    name: 'remote',
    capabilities: createSimulatedAgents().capabilities,
    signal: new AbortController().signal,
    answers: { ingress: c.server.ingress, maxBytes: 128 * MiB },
  });
  const began = Date.now();
  const handle = await agents.start(
    { runId: 'large-2', taskId: 'task-1', kind: 'task', name: 'huge', prompt: 'p', readOnly: true },
    new AbortController().signal,
  );
  const result = await handle.result;
  process.stdout.write(
    `large answer: 40 MiB child answer by reference in ${Date.now() - began} ms\n`,
  );
  expect(result.status).toBe('completed');
  expect(result.text.length).toBe(40 * MiB);
  expect(result.text === bigText(40 * MiB, 'huge')).toBe(true);
}, 120_000);
