// Info leaks: no host path, Node version, environment value or host stack in anything that
// reaches the guest (error messages, task results, lastFailure, stacks) or the run's outcome,
// even when a provider or the host fails with a message full of them (invariant 1).
import { homedir } from 'node:os';
import type { AgentProvider } from '@wf/engine';
import { createSimulatedAgents } from '@wf/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { attack, both, closeSandbox, hostLeaks } from './harness.js';

afterAll(closeSandbox);

/** A host error as real ports produce them: absolute paths, a Node stack, the runtime version. */
function hostileHostError(): Error {
  const e = new Error(
    `ENOENT: no such file or directory, open '${process.cwd()}/node_modules/.secret/config.json' (home ${homedir()}, Node.js ${process.versions.node}, ${process.version})`,
  );
  (e as { code?: string }).code = 'ENOENT';
  e.stack = `${e.message}\n    at Object.openSync (node:fs:573:18)\n    at start (file://${process.cwd()}/provider.js:10:3)`;
  return e;
}

/** Launch fails, or the child's result rejects, with a hostile host error. */
function failingProvider(mode: 'launch' | 'result' | 'dispose'): AgentProvider {
  const base = createSimulatedAgents({});
  let n = 0;
  return {
    name: 'leaky',
    capabilities: base.capabilities,
    async start(request, signal) {
      if (mode === 'launch') throw hostileHostError();
      n += 1;
      const inner = await base.start(request, signal);
      return {
        id: `leaky-${n}`,
        result: mode === 'result' ? Promise.reject(hostileHostError()) : inner.result,
        stop: (r) => inner.stop(r),
        dispose: () => {
          if (mode === 'dispose') throw hostileHostError();
          return inner.dispose();
        },
      };
    },
  };
}

const probe = `const out = {};
  out.run = await wf.runAgent({ name: 'leaky', prompt: 'p' });
  out.lastFailure = wf.lastFailure();
  try { const t = await wf.spawnAgent({ name: 'leaky-2', prompt: 'p' }); out.wait = await wf.wait(t.taskId); } catch (e) { out.spawnError = { code: e.code, message: e.message, stack: e.stack }; }
  try { await wf.synthesize({ inputs: [1], rubric: 'r' }); } catch (e) { out.synth = { code: e.code, message: e.message, stack: e.stack }; }
  out.stack = new Error('probe').stack;
  return out;`;

describe.each(both)(
  'host detail never reaches the guest or the outcome ($label)',
  ({ checker }) => {
    it.each(['launch', 'result', 'dispose'] as const)(
      'a provider failing at %s with paths, stack and version leaks none of them',
      async (mode) => {
        const r = await attack(probe, { checker, provider: failingProvider(mode) });
        expect(['completed', 'failed']).toContain(r.done.status);
        const seen = JSON.stringify(r.done);
        expect(hostLeaks(seen)).toEqual([]);
      },
    );

    it('a guest that rethrows a host failure ends with a redacted message', async () => {
      const r = await attack(
        `try { await wf.spawnAgent({ name: 'x', prompt: 'p' }); } catch (e) { throw e; }
       const t = await wf.runAgent({ name: 'y', prompt: 'p' });
       throw new Error(JSON.stringify(wf.lastFailure()));`,
        { checker, provider: failingProvider('launch') },
      );
      expect(r.done.status).toBe('failed');
      expect(hostLeaks(JSON.stringify(r.done))).toEqual([]);
    });

    it('stacks and error messages built inside the guest name only guest files', async () => {
      const r = await attack(
        `const out = [];
       const grab = (f) => { try { f(); } catch (e) { out.push(String(e && e.stack), String(e && e.message)); } };
       grab(() => null.x);
       grab(() => { const f = () => f(); f(); });
       grab(() => JSON.parse('{bad'));
       await wf.parallel([() => { out.push(new Error('in thunk').stack); }]);
       await wf.phase('attack', async () => { out.push(new Error('in phase').stack); });
       out.push(String(Date()), new Date(0).toString());
       return out;`,
        { checker },
      );
      expect(r.done.status, JSON.stringify(r.done.error)).toBe('completed');
      const text = JSON.stringify(r.done.result);
      expect(hostLeaks(text)).toEqual([]);
      expect(text).not.toMatch(/node:|\.ts:|\.mjs:|engine|bridge\/src/);
    });
  },
);
