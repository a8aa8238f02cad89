// The run journal against the real server: a delivery burst goes in one append request, a stale
// attempt's different delivery is refused (WF_RESTATE_JOURNAL_CONFLICT), an identical copy is not,
// and the engine's child-result records are kept in the delivery sequence.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulatedAgents, type JournalEntry } from '@wf/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDeployment, type RestateWorker, startRestateWorker } from '../src/index.js';
import { openRestateJournal } from '../src/internal/journal-store.js';
import { type RestateServer, startRestateServer } from './helpers/server.js';

const sandbox = {
  run: async () => ({ status: 'completed' as const, value: null }),
  close: async () => {},
};

const entry = (n: number, value: unknown = `answer ${n}`): JournalEntry => ({
  seq: n,
  settleSeq: n,
  method: 'runAgent',
  input: { n },
  outcome: { ok: true, value },
  settledAt: 1_700_000_000_000 + n,
});

let server: RestateServer;
let worker: RestateWorker;
let proxy: Server;
let ingress: string;
let appends = 0;

beforeAll(async () => {
  server = await startRestateServer();
  worker = await startRestateWorker({
    ingress: server.ingress,
    agents: createSimulatedAgents(),
    sandbox,
    register: false,
  });
  await registerDeployment(server.admin, worker.url);
  // Counts the journal's append requests on their way to the ingress.
  proxy = createServer((req, res) => {
    if (req.url?.endsWith('/append')) appends += 1;
    const target = new URL(server.ingress);
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  ingress = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await worker?.close();
  await server?.stop();
});

/** Entries here are small: the policy is never used, but the journal needs one. */
const blobs = () => ({ ingress, thresholdBytes: 1024 * 1024, maxBytes: 64 * 1024 * 1024 });

describe('restate journal', () => {
  it('sends deliveries that arrive within the linger in one append, and keeps them', async () => {
    const failures: unknown[] = [];
    const journal = await openRestateJournal(
      ingress,
      'burst',
      new AbortController().signal,
      (e) => failures.push(e),
      blobs(),
      500,
    );
    appends = 0;
    for (let n = 1; n <= 4; n += 1) {
      journal.append(entry(n));
      await new Promise((r) => setTimeout(r, 20));
    }
    await journal.flushed();
    expect(failures).toEqual([]);
    expect(appends).toBe(1);
    const reloaded = await openRestateJournal(
      ingress,
      'burst',
      new AbortController().signal,
      () => {},
      blobs(),
    );
    expect(reloaded.entries).toEqual([1, 2, 3, 4].map((n) => entry(n)));
  }, 60_000);

  it('keeps a child-result record in the delivery sequence and returns it to a continued run', async () => {
    // The engine journals a spawned child's result when it settles, with the next settleSeq: a
    // record between deliveries, appended in sequence like them (no gap, nothing out of order).
    const child: JournalEntry = {
      seq: 0,
      settleSeq: 2,
      method: 'child-result',
      input: { taskId: 'task-1', name: 'quick' },
      outcome: {
        ok: true,
        value: { value: { taskId: 'task-1', kind: 'task', status: 'completed', text: 'q' } },
      },
      settledAt: 1_700_000_000_002,
    };
    const failures: unknown[] = [];
    const signal = new AbortController().signal;
    const journal = await openRestateJournal(
      ingress,
      'child',
      signal,
      (e) => failures.push(e),
      blobs(),
      0,
    );
    journal.append(entry(1));
    journal.append(child);
    journal.append({ ...entry(3), seq: 2 });
    await journal.flushed();
    expect(failures).toEqual([]);
    const reloaded = await openRestateJournal(ingress, 'child', signal, () => {}, blobs());
    expect(reloaded.entries).toEqual([entry(1), child, { ...entry(3), seq: 2 }]);
  }, 60_000);

  it("refuses a stale attempt's different delivery and accepts an identical copy", async () => {
    const signal = new AbortController().signal;
    const first = await openRestateJournal(ingress, 'stale', signal, () => {}, blobs(), 0);
    // Both attempts loaded the same empty journal; the first one journals #1 and #2.
    const staleFailures: { code: string; message: string }[] = [];
    const stale = await openRestateJournal(
      ingress,
      'stale',
      signal,
      (e) => staleFailures.push(e),
      blobs(),
      0,
    );
    first.append(entry(1));
    first.append(entry(2));
    await first.flushed();
    stale.append(entry(1));
    await stale.flushed();
    expect(staleFailures).toEqual([]);
    stale.append(entry(2, 'another answer'));
    await stale.flushed();
    expect(staleFailures.map((f) => f.code)).toEqual(['WF_RESTATE_JOURNAL_CONFLICT']);
    expect(staleFailures[0]?.message).toContain('#2-2');
    expect(stale.broken()).toBe(true);
    const reloaded = await openRestateJournal(ingress, 'stale', signal, () => {}, blobs());
    expect(reloaded.entries).toEqual([entry(1), entry(2)]);
  }, 60_000);
});
