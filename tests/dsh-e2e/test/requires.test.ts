// A saved capsule's `requires` in the real DSH host (rc.8 headless): user interaction is refused
// before any child while no user-questions provider is registered (headless has none) and runs
// once one is (the e2e helper registers one under WF_E2E_ANSWER); a tool the calling agent cannot
// see is refused by name. The facts come from the host's own services, not from a test double.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runHost, type Sandbox } from './helpers/host.js';
import type { ModelServer, RequestView } from './helpers/model-server.js';
import { readAnswer } from './helpers/reply.js';
import { pluginPatch, useHostSuite } from './helpers/suite.js';
import { FAN_SOURCE } from './helpers/workflows.js';

let server: ModelServer;
let sandbox: Sandbox;
let boots = 0;

useHostSuite('wf-dsh-requires-', (s) => {
  ({ server, sandbox } = s);
});

beforeAll(() => {
  const root = join(sandbox.cwd, '.dsh', 'workflows');
  mkdirSync(root, { recursive: true });
  const capsule = (name: string, requires: Record<string, unknown>) =>
    writeFileSync(
      join(root, `${name}.workflow.json`),
      JSON.stringify({
        format: 'dsh.workflow',
        version: 1,
        workflowApiVersion: 1,
        minDshVersion: '0.1.0-rc.8',
        manifest: {
          name,
          description: 'one read-only child',
          phases: ['fan'],
          readOnly: true,
          maxAgents: 1,
          maxConcurrency: 1,
          patterns: ['fan-out-and-synthesize'],
        },
        source: FAN_SOURCE,
        requires,
      }),
    );
  capsule('asks-the-user', { userInteraction: true, tools: ['read', 'grep'] });
  capsule('needs-a-tool', { tools: ['read', 'no_such_tool'] });
});

/** Runs the named workflows one per step and returns what each run_workflow call answered. */
async function runNamed(marker: string, names: string[], env: Record<string, string> = {}) {
  boots += 1;
  const replies: Record<string, unknown>[] = [];
  server.setScript((_r, v: RequestView) => {
    if (v.userText.includes(marker)) {
      const next = names[v.toolResults.length];
      if (next)
        return {
          toolCalls: [
            {
              name: 'run_workflow',
              arguments: { name: next, args: { angles: ['only'] } },
            },
          ],
        };
      for (const t of v.toolResults) replies.push(readAnswer(t.text));
      return { text: 'DONE' };
    }
    const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
    return m ? { text: `finding for ${m[1]}` } : undefined;
  });
  const patch = pluginPatch(sandbox, `patch-${boots}.yml`, { approvalMode: 'never' });
  const run = await runHost({
    sandbox,
    modelUrl: server.url,
    task: `${marker} run the saved workflows`,
    patches: [patch],
    env,
  });
  expect(run.code).toBe(0);
  return replies;
}

describe('requires in the real DSH host', { timeout: 180_000 }, () => {
  it('user interaction and tools are checked against the host before any child', async () => {
    const childrenBefore = server.requests.length;
    const [asks, tool] = await runNamed('SCENARIO-REQ-HEADLESS', ['asks-the-user', 'needs-a-tool']);
    expect(asks).toMatchObject({
      status: 'failed',
      error: { code: 'WF_ENGINE_REQUIRES_USER_INTERACTION' },
    });
    expect(String((asks?.error as { message?: string })?.message)).toContain(
      'no user-questions provider is registered',
    );
    expect(tool).toMatchObject({ status: 'failed', error: { code: 'WF_ENGINE_REQUIRES_TOOL' } });
    expect(String((tool?.error as { message?: string })?.message)).toContain('"no_such_tool"');
    // no child was started: no request carried the child marker
    const childRequests = server.requests
      .slice(childrenBefore)
      .filter((r) => JSON.stringify(r.messages).includes('CHILD-TASK'));
    expect(childRequests).toEqual([]);
  });

  it('with a user-questions provider registered, the same capsule runs', async () => {
    const [asks] = await runNamed('SCENARIO-REQ-ANSWERED', ['asks-the-user'], {
      WF_E2E_ANSWER: 'yes',
    });
    expect(asks).toMatchObject({
      status: 'completed',
      result: { findings: ['finding for only'] },
    });
  });
});
