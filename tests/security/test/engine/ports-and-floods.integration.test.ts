// Hostile workflows aimed at what the engine itself runs on the host: provider failures must
// not leak host detail into the guest, log/artifact floods are cut by byte limits, and a
// guest-supplied regex in an outputSchema cannot stall the host thread (RE2 semantics).
import { type AgentProvider, createEngine, createSimulatedAgents, type RunDone } from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
});
afterAll(async () => {
  await sandbox.close();
});

const manifest = {
  name: 'hostile-flow',
  description: 'A workflow written to break the host.',
  phases: ['attack'],
  readOnly: false,
  maxAgents: 5,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};

async function run(
  agents: AgentProvider,
  body: string,
  limits: Record<string, number> = {},
): Promise<RunDone> {
  const engine = createEngine({ agents, sandbox, limits });
  const handle = await engine.start({
    workflow: { manifest, source: `async function run(wf, args) {\n${body}\n}` },
    trust: 'capability-generated',
  });
  const done = await handle.done;
  await engine.close();
  return done;
}

const LEAKY = `ENOENT: no such file '/home/alice/.secrets/token' \n    at Object.openSync (node:internal/fs/utils:347:10)\n    at /opt/app/dist/provider.js:12:7 (Node.js v20.19.4)`;
const leakFree = (text: string) => {
  expect(text).not.toContain('/home/alice');
  expect(text).not.toContain('/opt/app');
  expect(text).not.toContain('node:internal');
  expect(text).not.toMatch(/v20\.19/);
};

function failing(at: 'launch' | 'result' | 'dispose'): AgentProvider {
  return {
    name: 'leaky',
    capabilities: { toolFilter: true, outputSchema: true, steer: false },
    async start(request) {
      if (at === 'launch') throw Object.assign(new Error(LEAKY), { code: 'ENOENT' });
      return {
        id: `leaky-${request.taskId}`,
        result:
          at === 'result'
            ? Promise.resolve({
                status: 'failed',
                text: '',
                error: { code: 'bad code!', message: LEAKY },
              })
            : Promise.resolve({ status: 'completed', text: 'fine' }),
        stop() {},
        dispose() {
          if (at === 'dispose') throw new Error(LEAKY);
        },
      };
    },
  };
}

describe('provider failures', () => {
  it.each(['launch', 'result', 'dispose'] as const)(
    'a provider failing at %s leaks no host detail and cannot hang the run',
    async (at) => {
      const done = await run(
        failing(at),
        `const r = await wf.runAgent({ name: 'x', prompt: 'p' });
       return r === null ? wf.lastFailure() : r.status;`,
      );
      expect(done.status).toBe('completed');
      leakFree(JSON.stringify(done.result));
      if (at === 'dispose') expect(done.result).toBe('completed');
      else
        expect((done.result as { error: { code: string } }).error.code).toMatch(
          /^WF_ENGINE_|^ENOENT$/,
        );
    },
  );
});

describe('floods', () => {
  it('a wf.log flood of large messages is cut by maxLogBytes', async () => {
    const done = await run(
      createSimulatedAgents(),
      `const big = 'x'.repeat(100000);
       for (let i = 0; i < 30; i += 1) wf.log(big);
       return 'flooded';`,
      { maxLogBytes: 1_000_000 },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
    expect(done.error?.message).toContain('maxLogBytes');
  });

  it('an artifact flood is cut by maxArtifactBytes', async () => {
    const done = await run(
      createSimulatedAgents(),
      `const big = 'y'.repeat(500000);
       for (let i = 0; i < 100; i += 1) { try { await wf.artifact('a' + i, big); } catch (e) {} }
       return 'flooded';`,
      { maxArtifactBytes: 2_000_000 },
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_OUTPUT_LIMIT');
  });
});

describe('guest regexes in outputSchema', () => {
  it('a catastrophic pattern does not stall the host thread', async () => {
    const answer = `${'a'.repeat(40)}!`;
    let worst = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    const done = await run(
      createSimulatedAgents({
        respond: () => ({ structured: { s: answer }, text: JSON.stringify({ s: answer }) }),
      }),
      `const r = await wf.runAgent({ name: 'redos', prompt: 'p',
         outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a|a)*$' } }, required: ['s'] } });
       return r === null ? wf.lastFailure().error.code : r.status;`,
    );
    clearInterval(timer);
    expect(worst).toBeLessThan(1500);
    expect(done.status).toBe('completed');
    expect(done.result).toBe('WF_ENGINE_OUTPUT_INVALID');
  });

  it('a pattern a linear-time engine cannot run is refused before launch', async () => {
    const agents = createSimulatedAgents();
    const done = await run(
      agents,
      `return await wf.runAgent({ name: 'backref', prompt: 'p',
         outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)\\\\1$' } } } });`,
    );
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('WF_ENGINE_INVALID_CALL');
    expect(done.error?.message).toContain('outputSchema');
    expect(agents.stats().started).toBe(0);
  });
});
