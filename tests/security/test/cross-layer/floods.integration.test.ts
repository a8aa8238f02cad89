// Floods: what one hostile run can make the host store or hold. Every byte a workflow logs, sends
// or writes as an artifact lands in the run's event log (kept in memory for every iterator and
// appended to events.jsonl) or on disk; maxCalls alone lets 10,000 calls of 1 MiB each through,
// about 10 GB, which exhausts the host. The run must fail with a named limit instead
// (WF_ENGINE_OUTPUT_LIMIT: maxLogBytes covers wf.log and wf.send, maxArtifactBytes wf.artifact).
import { type AgentProvider, createSimulatedAgents } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, both, closeSandbox } from './harness.js';

afterAll(closeSandbox);

const MiB = 1024 * 1024;

function eventBytes(events: readonly { data: unknown }[]): number {
  let n = 0;
  for (const e of events) n += JSON.stringify(e.data).length;
  return n;
}

describe.each(both)('floods ($label)', ({ checker }) => {
  it('a wf.log flood of large messages is cut by a per-run byte limit', async () => {
    const r = await attack(
      `const big = 'L'.repeat(1000 * 1000);
       for (let i = 0; i < 200; i += 1) { wf.log(big); if (i % 8 === 0) await wf.phase('pace', () => i); }
       return 'flooded';`,
      { checker },
    );
    expect(r.done.status, JSON.stringify(r.done.error)).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
    expect(r.done.error?.message).toMatch(/maxLogBytes/);
    expect(eventBytes(r.events)).toBeLessThan(4 * MiB);
  }, 60_000);

  it('an artifact flood is cut by the same kind of limit', async () => {
    const r = await attack(
      `const big = 'A'.repeat(1000 * 1000);
       for (let i = 0; i < 200; i += 1) { try { await wf.artifact('a' + i, big); } catch (e) {} }
       return 'flooded';`,
      { checker },
    );
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
    expect(r.done.error?.message).toMatch(/maxArtifactBytes/);
  }, 60_000);

  it('a wf.send flood into a running child is bounded too', async () => {
    const r = await attack(
      `const big = 'S'.repeat(1000 * 1000);
       const t = await wf.spawnAgent({ name: 'listener', prompt: 'p' });
       let sent = 0;
       for (let i = 0; i < 100; i += 1) { try { await wf.send(t.taskId, big); sent += 1; } catch (e) { break; } }
       await wf.stop(t.taskId);
       return sent;`,
      { checker, agents: { delayMs: 60_000 } },
    );
    const messages = [...(r.agents?.messages().values() ?? [])].flat();
    const bytes = messages.reduce((n, m) => n + m.length, 0) + eventBytes(r.events);
    expect(bytes, JSON.stringify(r.done.error)).toBeLessThan(4 * MiB);
    expect(r.done.status).toBe('failed');
    expect(r.done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
    expect(r.done.error?.message).toMatch(/wf\.send refused.*maxLogBytes/);
    expect(r.agents?.stats()).toMatchObject({ started: 1, disposed: 1, doubleDisposed: 0 });
  }, 60_000);
});

/** A provider whose children ignore stop and end on their own after a while (slow real children). */
function deafProvider(): AgentProvider {
  const inner = createSimulatedAgents({ delayMs: 1500 });
  return {
    name: 'deaf',
    capabilities: inner.capabilities,
    async start(request, signal) {
      const h = await inner.start(request, signal);
      return { id: h.id, result: h.result, stop: () => {}, dispose: () => h.dispose() };
    },
  };
}

describe('stop-reason flood (checker bypassed)', () => {
  it('repeated wf.stop with long reasons on a stopping child is bounded by maxLogBytes', async () => {
    const r = await attack(
      `const t = await wf.spawnAgent({ name: 'slow-to-stop', prompt: 'p' });
       const reason = 'R'.repeat(4000);
       let n = 0;
       for (let i = 0; i < 2000; i += 1) { try { await wf.stop(t.taskId, reason); n += 1; } catch (e) { break; } }
       return n;`,
      { checker: false, provider: deafProvider(), limits: { stopGraceMs: 1000 } },
    );
    expect(eventBytes(r.events), JSON.stringify(r.done.error)).toBeLessThan(4 * MiB);
    const stopping = r.events.filter(
      (e) =>
        e.type === 'workflow-log' &&
        String((e.data as { message?: unknown }).message).startsWith('stopping'),
    );
    expect(stopping).toHaveLength(1);
  }, 60_000);
});
