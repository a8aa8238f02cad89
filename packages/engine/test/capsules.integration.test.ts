// Capsules in the earlier plugin's dsh.workflow v1 format run unchanged through smokeRun and
// the engine: review -> verify -> synthesize, a loop until no new findings, classify then act.
import { readdirSync, readFileSync } from 'node:fs';
import type { Sandbox } from '@wf/sandbox';
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  createMemoryRecorder,
  createSimulatedAgents,
  smokeRun,
} from '../src/index.js';
import { byType, childLifecycles, runToEnd, shareSandbox } from './helpers.js';

let sandbox: Sandbox;
shareSandbox((s) => {
  sandbox = s;
});

const dir = new URL('./fixtures/capsules/', import.meta.url);
const capsule = (name: string) =>
  JSON.parse(readFileSync(new URL(`${name}.workflow.json`, dir), 'utf8'));

describe('earlier-plugin capsules', () => {
  it.each(readdirSync(dir).filter((f) => f.endsWith('.workflow.json')))(
    '%s passes a smoke run',
    async (file) => {
      const result = await smokeRun(JSON.parse(readFileSync(new URL(file, dir), 'utf8')), {
        sandbox,
      });
      expect(result.problems).toEqual([]);
      expect(result.ok).toBe(true);
      expect(result.stats.started).toBeGreaterThan(0);
      expect(result.stats.doubleDisposed).toBe(0);
      for (const l of childLifecycles(result.events).values())
        expect(l).toEqual(['agent-started', 'agent-completed']);
    },
  );

  it('review -> verify -> synthesize: every finding verified, one synthesis, one artifact', async () => {
    const recorder = createMemoryRecorder();
    const agents = createSimulatedAgents({
      respond: (r) => (r.name === 'review-billing' ? { fail: 'timeout upstream' } : undefined),
    });
    const engine = createEngine({ agents, sandbox, recorder });
    const c = capsule('scoped-review');
    const { done, events, runId } = await runToEnd(engine, {
      workflow: { manifest: c.manifest, source: c.source },
      args: c.inputs.examples[0],
      trust: 'capability-generated',
    });
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ reviewed: 2, confirmed: 2 });
    expect((done.result as { budgetLeft: number }).budgetLeft).toBe(
      400000 - done.cost.tokenUsage.totalTokens,
    );
    expect(byType(events, 'synthesis-started')).toHaveLength(1);
    expect(byType(events, 'synthesis-completed')).toHaveLength(1);
    expect(byType(events, 'workflow-log')[0]?.data).toMatchObject({
      message: 'some reviews failed',
      data: { name: 'review-billing' },
    });
    expect(recorder.get(runId)?.artifacts.get('review-report')).toMatchObject({ confirmed: 2 });
    expect(
      agents
        .requests()
        .filter((r) => r.name.startsWith('verify-'))
        .map((r) => r.evidenceRefs?.[0]),
    ).toEqual(['task_id:task-1', 'task_id:task-3']);
    expect(agents.stats().peakActive).toBeLessThanOrEqual(3);
  });

  it('loop until no new findings stops at the first dry round', async () => {
    const script = [['a', 'b'], ['b', 'c'], ['c'], ['d']];
    const result = await smokeRun(capsule('hunt-until-dry'), {
      sandbox,
      respond: (r) => ({
        structured: { findings: script[Number(r.name.split('-')[1]) - 1] ?? [] },
      }),
    });
    expect(result.ok).toBe(true);
    expect(result.done.result).toEqual({ rounds: 3, findings: ['a', 'b', 'c'] });
    // default answers differ per task name, so every round finds something: maxRounds bounds it
    const defaults = await smokeRun(capsule('hunt-until-dry'), { sandbox });
    expect(defaults.done.result).toMatchObject({ rounds: 5 });
    expect(defaults.stats.started).toBe(5);
  });

  it('classify then act routes on the structured label, and repairs an invalid label once', async () => {
    const routed = await smokeRun(capsule('triage-and-route'), {
      sandbox,
      respond: (r) =>
        r.name === 'classifier'
          ? { text: 'it is a feature', structured: { kind: 'feature', confidence: 0.8 } }
          : undefined,
    });
    expect(routed.done.result).toEqual({
      kind: 'feature',
      confidence: 0.8,
      acted: 'planner',
      status: 'completed',
    });
    const repaired = await smokeRun(capsule('triage-and-route'), {
      sandbox,
      respond: (r) =>
        r.kind === 'repair'
          ? { text: '{"kind":"bug","confidence":0.9}', structured: undefined }
          : r.name === 'classifier'
            ? { text: 'probably a bug', structured: { kind: 'defect', confidence: 2 } }
            : undefined,
    });
    expect(repaired.done.result).toMatchObject({ kind: 'bug', acted: 'fixer' });
    expect(
      repaired.events.filter((e) => e.type === 'agent-started' && e.data.kind === 'repair'),
    ).toHaveLength(1);
  });

  it('smokeRun without a sandbox creates and closes its own', async () => {
    const result = await smokeRun(capsule('triage-and-route'));
    expect(result.ok).toBe(true);
    expect(result.done.result).toMatchObject({ acted: expect.any(String) });
  });

  it('smokeRun reports an invalid capsule as problems without running anything', async () => {
    const bad = { ...capsule('triage-and-route'), extra: true };
    const result = await smokeRun(bad, { sandbox });
    expect(result.ok).toBe(false);
    expect(result.problems.join('\n')).toContain('extra');
    expect(result.stats.started).toBe(0);
  });
});
