// The original background-run bug lived in Code Mode: a `run_workflow` call made from inside a
// `run_code` program gets a signal that DSH aborts when the program settles ("run settlement
// aborts and drains outstanding bindings"), so a wait:false run tied to the launching call's
// signal died with the program. Here the real DSH host (rc.8, headless, DSH_TOOLS_MODE=code)
// starts a background run from one `run_code` program and a second program reads it back: it must
// have completed with its children's findings, not been stopped.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHost, type Sandbox } from './helpers/host.js';
import type { ModelServer, RequestView } from './helpers/model-server.js';
import { pluginPatch, useHostSuite } from './helpers/suite.js';
import { FAN_SOURCE } from './helpers/workflows.js';

let server: ModelServer;
let sandbox: Sandbox;

useHostSuite('wf-dsh-code-mode-', (s) => {
  ({ server, sandbox } = s);
});

const MANIFEST = {
  name: 'e2e-code-mode-background',
  description: 'Two read-only children started from a run_code program',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 2,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};

/** The JSON line a program printed with `console.log('WF ' + JSON.stringify(...))`. */
const printed = (v: RequestView, i: number): Record<string, unknown> => {
  const m = /WF (\{.*\})/.exec(v.toolResults[i]?.text ?? '');
  return m?.[1] ? (JSON.parse(m[1]) as Record<string, unknown>) : {};
};

describe('Code Mode (run_code) in the real DSH host', { timeout: 180_000 }, () => {
  it('a wait:false run started inside run_code outlives the program that launched it', async () => {
    let runId = '';
    const seen: RequestView[] = [];
    server.setScript((_request, v) => {
      if (v.userText.includes('SCENARIO-CODE-BG')) {
        seen.push(v);
        if (v.toolResults.length === 0) {
          // program 1: start the background run and return at once
          const launch = {
            source: FAN_SOURCE,
            manifest: MANIFEST,
            args: { angles: ['cm1', 'cm2'] },
            wait: false,
          };
          return {
            toolCalls: [
              {
                name: 'run_code',
                arguments: {
                  description: 'start the fan-out in the background',
                  code: `const r = await tools.run_workflow(${JSON.stringify(launch)});\nconsole.log('WF ' + JSON.stringify(r));`,
                },
              },
            ],
          };
        }
        if (v.toolResults.length === 1) {
          runId = String(printed(v, 0).runId ?? '');
          // program 2 (program 1 has settled, its signal is aborted): wait for the run
          const show = { action: 'show', target: runId, wait: true };
          return {
            toolCalls: [
              {
                name: 'run_code',
                arguments: {
                  description: 'wait for the background run',
                  code: `const r = await tools.workflow_manage(${JSON.stringify(show)});\nconsole.log('WF ' + JSON.stringify(r));`,
                },
              },
            ],
          };
        }
        return { text: `DONE ${JSON.stringify(v.toolResults.map((t) => t.text))}` };
      }
      const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
      // slow children: the run is still going when program 1 settles
      return m ? { text: `finding for ${m[1]}`, delayMs: 800 } : undefined;
    });
    const patch = pluginPatch(sandbox, 'patch-code-mode.yml', { approvalMode: 'never' });
    const logFile = join(sandbox.root, 'helper-log.jsonl');
    writeFileSync(logFile, '');
    const run = await runHost({
      sandbox,
      modelUrl: server.url,
      task: 'SCENARIO-CODE-BG start the fan-out in the background, then wait for it',
      patches: [patch],
      env: { DSH_TOOLS_MODE: 'code', WF_E2E_LOG: logFile },
      timeoutMs: 150_000,
    });
    // Node 24 warns once that Code Mode's runtime uses stripTypeScriptTypes; nothing else
    const stderr = run.stderr
      .split('\n')
      .filter((l) => l && !/ExperimentalWarning: stripTypeScriptTypes|--trace-warnings/.test(l));
    expect(stderr).toEqual([]);
    expect(run.code).toBe(0);
    // Code Mode really was on: the parent was offered run_code, not our tools as functions
    const first = seen[0];
    expect(first?.toolNames).toContain('run_code');
    expect(first?.toolNames).not.toContain('run_workflow');
    expect(first?.systemText).toContain('run_workflow');

    const started = printed(seen[1] as RequestView, 0);
    expect(started).toMatchObject({ status: 'running', runId: expect.stringMatching(/^run-/) });
    const shown = printed(seen[2] as RequestView, 1);
    expect(shown).toMatchObject({
      runId: started.runId,
      status: 'completed',
      result: { findings: ['finding for cm1', 'finding for cm2'] },
    });
  });
});
