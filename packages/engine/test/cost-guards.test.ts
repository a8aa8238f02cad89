// Cost guards (issue 14 item 2): no listener leak at wide fan-out, default task allocation under
// small budgets, engine-wide default budget, per-child wall limit, 80% warnings.
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createSimulatedAgents,
  type HostWorkflowApi,
  type TaskResult,
} from '../src/index.js';
import { byType, manifest, runToEnd } from './helpers.js';

type Fn = (wf: HostWorkflowApi, args: unknown) => unknown;
const local = (run: Fn, m: Record<string, unknown> = manifest()) => ({
  workflow: { manifest: m, run },
  trust: 'trusted-local' as const,
});

describe('engine cost guards', () => {
  it('50 agents queued on the semaphores emit no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const agents = createSimulatedAgents({ delayMs: 2 });
      const engine = createEngine({
        agents,
        limits: { maxConcurrency: 1, deploymentConcurrency: 1 },
      });
      const { done } = await runToEnd(
        engine,
        local(
          async (wf) =>
            wf.parallel(
              Array.from(
                { length: 50 },
                (_, i) => () => wf.runAgent({ name: `q${i}`, prompt: 'p' }),
              ),
            ),
          manifest({ maxAgents: 50, maxConcurrency: 1 }),
        ),
      );
      expect(done.status).toBe('completed');
      expect(agents.stats().started).toBe(50);
      // warnings are emitted on process.nextTick; let them arrive
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
