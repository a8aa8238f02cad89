// Many agents queued on one run's concurrency slots each wait on the run's abort signal; that is
// bounded by maxAgents, so it must not print Node's MaxListenersExceededWarning into the live view
// (it did at 11+ queued agents).
import { describe, expect, it } from 'vitest';
import { createEngine, createSimulatedAgents } from '../src/index.js';
import { manifest, runToEnd } from './helpers.js';

describe('queued agents', () => {
  it('24 agents queued behind one slot raise no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const engine = createEngine({ agents: createSimulatedAgents({ delayMs: 2 }) });
      const { done } = await runToEnd(engine, {
        workflow: {
          manifest: manifest({ maxAgents: 24, maxConcurrency: 1 }),
          run: async (wf) =>
            wf.parallel(
              Array.from(
                { length: 24 },
                (_, i) => () => wf.runAgent({ name: `a${i}`, prompt: 'p' }),
              ),
            ),
        },
        trust: 'trusted-local',
      });
      expect(done.status).toBe('completed');
      expect(done.cost.agentsStarted).toBe(24);
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
  });
});
