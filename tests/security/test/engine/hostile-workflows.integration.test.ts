// Hostile workflows through @wf/engine with the real sandbox: each may fail its own run, never
// crash, hang or corrupt the host. Most cases run twice: with the static source contract and with
// it bypassed (invariant 4: the runtime alone contains them).
import {
  createEngine,
  createSimulatedAgents,
  type RunDone,
  type SimulatedAgentsOptions,
} from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
});
afterAll(async () => {
  await sandbox.close();
});

const manifest = (o: Record<string, unknown> = {}) => ({
  name: 'hostile-flow',
  description: 'A workflow written to break the host.',
  phases: ['attack'],
  readOnly: false,
  maxAgents: 5,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
  ...o,
});

async function attack(
  body: string,
  opts: {
    checker?: boolean;
    agents?: SimulatedAgentsOptions;
    limits?: Record<string, unknown>;
    manifest?: Record<string, unknown>;
  } = {},
): Promise<{
  done: RunDone;
  stats: ReturnType<ReturnType<typeof createSimulatedAgents>['stats']>;
}> {
  const agents = createSimulatedAgents(opts.agents ?? {});
  const engine = createEngine({
    agents,
    sandbox,
    ...(opts.checker === false ? { checkSource: false as const } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  const handle = await engine.start({
    workflow: {
      manifest: manifest(opts.manifest),
      source: `async function run(wf, args) {\n${body}\n}`,
    },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  await engine.close();
  return { done, stats: agents.stats() };
}

const both = [true, false].map((checker) => ({
  checker,
  label: checker ? 'with checker' : 'checker bypassed',
}));

describe.each(both)('hostile workflows ($label)', ({ checker }) => {
  it('catching run-control errors does not buy more children than maxAgents', async () => {
    const { done, stats } = await attack(
      `for (let i = 0; i < 100; i += 1) { try { await wf.spawnAgent({ name: 'x' + i, prompt: 'p' }); } catch (e) {} }
       return 'escaped';`,
      { checker },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_AGENT_LIMIT');
    expect(stats.started).toBeLessThanOrEqual(5);
    expect(stats.doubleDisposed).toBe(0);
  });

  it('a host-call flood hits maxCalls and fails the run, naming the limit', async () => {
    const { done } = await attack(
      `for (let i = 0; i < 5000; i += 1) { wf.log('spam ' + i); }
       await wf.runAgent({ name: 'after', prompt: 'p' });
       return 'done';`,
      { checker, limits: { maxCalls: 500 } },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.message).toMatch(/maxCalls|host calls/);
  });

  it('prototype-pollution keys in task input are refused and the host prototype stays clean', async () => {
    const { done, stats } = await attack(
      `const input = JSON.parse('{"name":"p","prompt":"p","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
       return await wf.runAgent(input);`,
      { checker },
    );
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    // either refused as an invalid call, or the keys were dropped before crossing
    if (done.status === 'failed') expect(done.error?.code).toMatch(/INVALID|CALL/);
    else expect(stats.started).toBe(1);
  });

  it('tampering with wf or reaching past it to the host fails inside the guest only', async () => {
    const { done } = await attack(
      `const out = [];
       try { wf.runAgent = () => 1; out.push('assigned'); } catch (e) { out.push('frozen'); }
       try { delete wf.spawnAgent; out.push(typeof wf.spawnAgent); } catch (e) { out.push('nodelete'); }
       try { out.push(typeof wf.runAgent.constructor('return this')); } catch (e) { out.push('noctor'); }
       try { Object.defineProperty(wf.budget, 'total', { value: 1e9 }); out.push('redefined'); } catch (e) { out.push('nodefine'); }
       try { wf.args.x = 1; out.push('argsmut'); } catch (e) { out.push('argsfrozen'); }
       return out;`,
      { checker },
    );
    if (checker) {
      // defence in depth: the contract already refuses `.constructor` before anything runs
      expect(done.error?.code).toBe('WF_ENGINE_SOURCE_REJECTED');
      return;
    }
    expect(done.status).toBe('completed');
    expect(done.result).toEqual(['frozen', 'nodelete', 'noctor', 'nodefine', 'argsfrozen']);
  });

  it('a workflow that never settles is a deadlock, not a hang', async () => {
    const { done } = await attack(`await new Promise(() => {}); return 1;`, { checker });
    expect(done.status).toBe('failed');
    expect(done.error?.code).toMatch(/DEADLOCK/);
  });

  it('a busy loop is cut by the CPU slice; running children are stopped and disposed once', async () => {
    const { done, stats } = await attack(
      `wf.spawnAgent({ name: 'bystander', prompt: 'p' });
       await wf.log('spin');
       let x = 0; for (let i = 0; i < 1e12; i += 1) { x += i; }
       return x;`,
      { checker, agents: { delayMs: 60_000 }, limits: { sandbox: { cpuSliceMs: 200 } } },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toMatch(/CPU|TIMEOUT|SLICE/);
    expect(stats.disposed).toBe(stats.started);
    expect(stats.doubleDisposed).toBe(0);
  });

  it('the wall limit stops a run waiting on a child forever, and disposes the child once', async () => {
    const { done, stats } = await attack(
      `return await wf.runAgent({ name: 'forever', prompt: 'p' });`,
      {
        checker,
        agents: { delayMs: 600_000 },
        limits: { wallMs: 300 },
      },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_WALL_TIMEOUT');
    expect(stats).toMatchObject({ started: 1, disposed: 1, doubleDisposed: 0 });
  });

  it('a remote $ref in outputSchema is refused before launch, nothing is fetched', async () => {
    const { done, stats } = await attack(
      `return await wf.runAgent({ name: 's', prompt: 'p', outputSchema: { type: 'object', properties: { a: { $ref: 'https://example.invalid/schema.json' } } } });`,
      { checker },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(done.error?.message).toContain('outputSchema');
    expect(stats.started).toBe(0);
  });

  it('evidence refs and task ids of tasks that do not exist are refused', async () => {
    const { done } = await attack(
      `const w = await wf.wait('task-1').catch((e) => e.code);
       let refused = null;
       try { await wf.runAgent({ name: 'x', prompt: 'p', evidenceRefs: ['task_id:task-77'] }); } catch (e) { refused = e.code; }
       return { w, refused };`,
      { checker },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.message).toContain('task-77');
  });

  it('readFile without a workspace, or escaping one, is refused', async () => {
    const { done } = await attack(
      `return await wf.readFile('../../etc/passwd').catch((e) => e.code);`,
      { checker },
    );
    expect(done.status).toBe('completed');
    expect(done.result).toBe('WF_ENGINE_READ_DENIED');
  });

  it('a huge prompt is refused at the crossing', async () => {
    const { done, stats } = await attack(
      `const big = 'x'.repeat(3 * 1024 * 1024);
       return await wf.runAgent({ name: 'big', prompt: big }).catch((e) => e.code);`,
      { checker },
    );
    expect(stats.started).toBe(0);
    expect(done.status === 'failed' || typeof done.result === 'string').toBe(true);
  });
});

describe('concurrency limits under a hostile fan-out', () => {
  it('per-run and deployment-wide caps hold for unbounded parallel calls from two runs', async () => {
    const agents = createSimulatedAgents({ delayMs: 5 });
    const engine = createEngine({ agents, sandbox, limits: { deploymentConcurrency: 3 } });
    const source = `async function run(wf) {
      const all = [];
      for (let i = 0; i < 40; i += 1) all.push(wf.runAgent({ name: 'flood-' + i, prompt: 'p' }));
      return (await Promise.all(all)).filter((r) => r && r.status === 'completed').length;
    }`;
    const start = () =>
      engine.start({
        workflow: { manifest: manifest({ maxAgents: 40, maxConcurrency: 2 }), source },
        trust: 'capability-generated',
      });
    const [a, b] = await Promise.all([start(), start()]);
    const [da, db] = await Promise.all([a.done, b.done]);
    await engine.close();
    expect(da).toMatchObject({ status: 'completed', result: 40 });
    expect(db).toMatchObject({ status: 'completed', result: 40 });
    expect(da.cost.peakConcurrency).toBeLessThanOrEqual(2);
    expect(db.cost.peakConcurrency).toBeLessThanOrEqual(2);
    expect(agents.stats().peakActive).toBeLessThanOrEqual(3);
    expect(agents.stats()).toMatchObject({ started: 80, disposed: 80, doubleDisposed: 0 });
  });
});
