// Bad options get a clear WF_RESTATE_INVALID_OPTIONS naming what was wrong, before any call.
import { createSimulatedAgents } from '@wf/engine';
import { describe, expect, it } from 'vitest';
import { RestateBackendError, startRestateWorker, submitRun } from '../src/index.js';

const sandbox = {
  run: async () => ({ status: 'completed' as const, value: null }),
  close: async () => {},
};

describe('options', () => {
  it('refuses a worker ingress URL that is not http(s)', async () => {
    const e = await startRestateWorker({
      ingress: 'localhost:8080',
      agents: createSimulatedAgents(),
      sandbox,
    }).catch((x: unknown) => x);
    expect(RestateBackendError.is(e)).toBe(true);
    expect((e as RestateBackendError).code).toBe('WF_RESTATE_INVALID_OPTIONS');
    expect((e as Error).message).toContain('ingress URL');
  });

  it('refuses a non-positive deploymentConcurrency', async () => {
    const e = await startRestateWorker({
      ingress: 'http://127.0.0.1:1',
      agents: createSimulatedAgents(),
      sandbox,
      deploymentConcurrency: 0,
    }).catch((x: unknown) => x);
    expect((e as RestateBackendError).code).toBe('WF_RESTATE_INVALID_OPTIONS');
    expect((e as Error).message).toContain('deploymentConcurrency');
  });

  it('refuses semaphoreShards above the cap (a shard would hold no slot)', async () => {
    for (const semaphoreShards of [0, 1.5, 65, 5]) {
      const e = await startRestateWorker({
        ingress: 'http://127.0.0.1:1',
        agents: createSimulatedAgents(),
        sandbox,
        deploymentConcurrency: 4,
        semaphoreShards,
      }).catch((x: unknown) => x);
      expect((e as RestateBackendError).code).toBe('WF_RESTATE_INVALID_OPTIONS');
      expect((e as Error).message).toContain(`semaphoreShards must be`);
      expect((e as Error).message).toContain(`got ${semaphoreShards}`);
    }
  });

  it('refuses a non-positive answerByReferenceBytes', async () => {
    const e = await startRestateWorker({
      ingress: 'http://127.0.0.1:1',
      agents: createSimulatedAgents(),
      sandbox,
      answerByReferenceBytes: 0,
    }).catch((x: unknown) => x);
    expect((e as RestateBackendError).code).toBe('WF_RESTATE_INVALID_OPTIONS');
    expect((e as Error).message).toContain('answerByReferenceBytes');
  });

  it('refuses a run id Restate keys cannot carry, and a workflow without source', async () => {
    const bad = await submitRun('http://127.0.0.1:1', {
      runId: 'a/b',
      workflow: { manifest: {}, source: 'x' },
      trust: 'trusted-package',
    }).catch((x: unknown) => x);
    expect((bad as RestateBackendError).code).toBe('WF_RESTATE_INVALID_OPTIONS');
    expect((bad as Error).message).toContain('runId');
    const noSource = await submitRun('http://127.0.0.1:1', {
      runId: 'ok',
      workflow: { manifest: {} } as never,
      trust: 'trusted-package',
    }).catch((x: unknown) => x);
    expect((noSource as Error).message).toContain('workflow.source');
  });
});
