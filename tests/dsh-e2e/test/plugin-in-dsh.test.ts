// The @wf plugin inside the real DSH host (0.1.0-rc.8 from npm, headless profile, Node 24 from
// npm) against a scripted OpenAI-compatible model on 127.0.0.1. Children are real DSH subagents
// answering from the script. Every scenario shares one DSH_HOME and working directory so the last
// test can reload every session the suite wrote through the host's own persistence.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type HostRun, runHost, type Sandbox } from './helpers/host.js';
import type { ModelServer, RequestView, Script } from './helpers/model-server.js';
import { anyChild, echo, results, scenario } from './helpers/scripts.js';
import { readAnswer, readRun } from './helpers/reply.js';
import { pluginPatch, useHostSuite } from './helpers/suite.js';
import { FAN_SOURCE } from './helpers/workflows.js';

let server: ModelServer;
let sandbox: Sandbox;
let logFile: string;
let boots = 0;

useHostSuite(undefined, (s) => {
  ({ server, sandbox } = s);
});

beforeAll(() => {
  logFile = join(sandbox.root, 'helper-log.jsonl');
});

interface Boot {
  readonly task: string;
  readonly script: Script;
  readonly config?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

/** One headless DSH run with our plugin and the e2e helper mounted. */
async function boot(b: Boot): Promise<HostRun & { log: Record<string, unknown>[] }> {
  boots += 1;
  writeFileSync(logFile, '');
  server.setScript(b.script);
  const patch = pluginPatch(sandbox, `patch-${boots}.yml`, b.config);
  const run = await runHost({
    sandbox,
    modelUrl: server.url,
    task: b.task,
    patches: [patch],
    env: { WF_E2E_LOG: logFile, ...b.env },
  });
  const log = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...run, log };
}

/** What a tool returned, as the model saw it (JSON, or a run's readable answer read back). */
const toolJson = (v: RequestView, i = 0): Record<string, unknown> =>
  readAnswer(v.toolResults[i]?.text ?? '');

const parsed = (stdout: string, i = 0): Record<string, unknown> =>
  readAnswer(results(stdout)[i] ?? '');

const FAN_MANIFEST = {
  name: 'e2e-fan-out',
  description: 'Three read-only children, then their findings',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 3,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize'],
};

const runStoreDir = () => join(sandbox.cwd, '.dsh', 'workflow-runs');

// Each boot takes 1.5-3 s alone; on a loaded 2-core machine several times that.
describe('the plugin in the real DSH host', { timeout: 120_000 }, () => {
  it('mounts: tools visible to the model, prompt section rendered, workflow_list answers', async () => {
    const run = await boot({
      task: 'SCENARIO-BOOT list workflows',
      script: scenario('SCENARIO-BOOT', [() => ({ name: 'workflow_list', arguments: {} })]),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const first = server.requests.find((r) => JSON.stringify(r.messages).includes('SCENARIO-BOOT'));
    const tools = first?.tools?.map((t) => t.function.name) ?? [];
    expect(tools).toEqual(
      expect.arrayContaining(['workflow_list', 'run_workflow', 'workflow_manage', 'workflow']),
    );
    expect(JSON.stringify(first?.messages[0])).toContain('Secure multi-agent workflows');
    // default: our section steers the model away from the host's node:vm workflow tool
    expect(JSON.stringify(first?.messages[0])).toContain(
      "If DSH's own `workflow` tool is also offered",
    );
    expect(parsed(run.stdout)).toMatchObject({ truncated: false });
    expect(Array.isArray(parsed(run.stdout).entries)).toBe(true);
  });

  it('hideNativeWorkflow: the host denies its own workflow tool to the agent', async () => {
    const run = await boot({
      task: 'SCENARIO-HIDE list workflows',
      config: { hideNativeWorkflow: true },
      script: scenario('SCENARIO-HIDE', [() => ({ name: 'workflow_list', arguments: {} })]),
    });
    expect(run.code, run.stderr).toBe(0);
    const first = server.requests.find((r) => JSON.stringify(r.messages).includes('SCENARIO-HIDE'));
    const tools = first?.tools?.map((t) => t.function.name) ?? [];
    expect(tools).toEqual(expect.arrayContaining(['workflow_list', 'run_workflow']));
    expect(tools).not.toContain('workflow');
    // nothing left to choose between: the guidance about it is gone too
    expect(JSON.stringify(first?.messages[0])).not.toContain("If DSH's own `workflow` tool");
    expect(Array.isArray(parsed(run.stdout).entries)).toBe(true);
  });

  let fanRunId = '';
  it('runs an inline capsule that fans out three real DSH subagents', async () => {
    const run = await boot({
      task: 'SCENARIO-FAN run the fan-out',
      env: { WF_E2E_APPROVAL: 'allowed-once' },
      script: scenario('SCENARIO-FAN', [
        () => ({
          name: 'run_workflow',
          arguments: {
            source: FAN_SOURCE,
            manifest: FAN_MANIFEST,
            args: { angles: ['alpha', 'beta', 'gamma'] },
          },
        }),
      ]),
    });
    expect(run.code).toBe(0);
    const reply = parsed(run.stdout);
    expect(reply).toMatchObject({
      status: 'completed',
      result: { findings: ['finding for alpha', 'finding for beta', 'finding for gamma'] },
    });
    fanRunId = String(reply.runId);
    // capability-generated: DSH's approval was asked once, with our summary
    expect(run.log).toEqual([
      expect.objectContaining({
        kind: 'approval',
        toolName: 'run_workflow',
        reason: expect.stringContaining('e2e-fan-out'),
      }),
    ]);
    // read-only children got the fail-closed allow-list: never bash/write/our tools
    const childRequests = server.requests.filter((r) => {
      const text = JSON.stringify(r.messages);
      return text.includes('CHILD-TASK investigate') && !text.includes('SCENARIO-');
    });
    expect(childRequests.length).toBeGreaterThanOrEqual(3);
    for (const r of childRequests) {
      const names = (r.tools ?? []).map((t) => t.function.name);
      expect(names.length).toBeGreaterThan(0);
      for (const n of names) expect(['read', 'read_image', 'glob', 'grep', 'lsp']).toContain(n);
      // maxTokens left to the model default (the earlier plugin's fixed ceilings truncated children)
      expect(r.max_tokens).toBe(server.requests[0]?.max_tokens);
    }
    // our run store holds the completed run
    const snapshot = JSON.parse(readFileSync(join(runStoreDir(), fanRunId, 'run.json'), 'utf8'));
    expect(snapshot).toMatchObject({
      runId: fanRunId,
      workflow: 'e2e-fan-out',
      status: 'completed',
      totalSpawned: 3,
    });
    expect(snapshot.cost.tokenUsage.totalTokens).toBeGreaterThan(0);
    expect(existsSync(join(runStoreDir(), fanRunId, 'script.js'))).toBe(true);
  });

  it('runs the built-in parallel-investigation pattern by name, as a user would', async () => {
    const run = await boot({
      task: 'SCENARIO-BUILTIN how does calc work?',
      script: scenario(
        'SCENARIO-BUILTIN',
        [
          () => ({
            name: 'run_workflow',
            arguments: {
              name: 'parallel-investigation',
              args: { question: 'How does calc work?' },
            },
          }),
        ],
        anyChild,
      ),
    });
    expect(run.code).toBe(0);
    const reply = parsed(run.stdout);
    // trusted-package: no approval needed under the default generated-and-local mode
    expect(reply.status, JSON.stringify(reply.error)).toBe('completed');
    const snapshot = JSON.parse(
      readFileSync(join(runStoreDir(), String(reply.runId), 'run.json'), 'utf8'),
    );
    expect(snapshot).toMatchObject({ workflow: 'parallel-investigation', status: 'completed' });
    expect(snapshot.totalSpawned).toBe(4); // three angles, then the synthesis
  });

  it('refuses a read-only task before launch on a provider without toolFilter', async () => {
    const run = await boot({
      task: 'SCENARIO-NOFILTER',
      config: { provider: 'nofilter', approvalMode: 'never' },
      env: { WF_E2E_NOFILTER: '1' },
      script: scenario('SCENARIO-NOFILTER', [
        () => ({
          name: 'run_workflow',
          arguments: {
            source: `async function run(wf) {
  const r = await wf.spawnAgent({ name: 'reader', prompt: 'CHILD-TASK investigate x', readOnly: true });
  return r;
}`,
            manifest: { ...FAN_MANIFEST, name: 'e2e-no-filter' },
          },
        }),
      ]),
    });
    expect(run.code).toBe(0);
    const reply = parsed(run.stdout);
    expect(reply.status).toBe('failed');
    expect(JSON.stringify(reply.error)).toMatch(/toolFilter/);
    expect(run.log.filter((l) => l.kind === 'nofilter-start')).toEqual([]);
  });

  it('returns a structured-output child value, validated by DSH', async () => {
    const source = `async function run(wf) {
  const r = await wf.runAgent({
    name: 'picker',
    prompt: 'CHILD-STRUCTURED pick a fruit',
    readOnly: true,
    outputSchema: { type: 'object', properties: { word: { type: 'string' }, confidence: { type: 'number' } }, required: ['word', 'confidence'], additionalProperties: false },
  });
  return r ? r.structured : null;
}`;
    const run = await boot({
      task: 'SCENARIO-STRUCT',
      config: { approvalMode: 'never' },
      script: scenario(
        'SCENARIO-STRUCT',
        [
          () => ({
            name: 'run_workflow',
            arguments: { source, manifest: { ...FAN_MANIFEST, name: 'e2e-structured' } },
          }),
        ],
        (_r, v) =>
          v.userText.includes('CHILD-STRUCTURED') && v.toolNames.includes('structured_output')
            ? {
                toolCalls: [
                  { name: 'structured_output', arguments: { word: 'PINEAPPLE', confidence: 0.9 } },
                ],
              }
            : undefined,
      ),
    });
    expect(run.code).toBe(0);
    expect(parsed(run.stdout)).toMatchObject({
      status: 'completed',
      result: { word: 'PINEAPPLE', confidence: 0.9 },
    });
  });

  it('full-access sessions run without an approval prompt; other modes with no answerer are denied', async () => {
    const call = () => ({
      name: 'run_workflow',
      arguments: {
        source: FAN_SOURCE,
        manifest: { ...FAN_MANIFEST, name: 'e2e-gate' },
        args: { angles: ['delta'] },
      },
    });
    const writeSource = `async function run(wf) {
  const r = await wf.runAgent({ name: 'writer', prompt: 'CHILD-TASK investigate writer', readOnly: false });
  return { findings: [r ? r.finalText : null] };
}`;
    const full = await boot({
      task: 'SCENARIO-FULL',
      // if we asked, DSH would answer `rejected` (its policy under danger-full-access)
      env: { DSH_PERMISSION_MODE: 'danger-full-access', WF_E2E_APPROVAL: 'rejected' },
      script: scenario('SCENARIO-FULL', [
        call,
        () => ({
          name: 'run_workflow',
          arguments: {
            source: writeSource,
            manifest: { ...FAN_MANIFEST, name: 'e2e-writer', readOnly: false },
          },
        }),
      ]),
    });
    expect(full.code).toBe(0);
    expect(parsed(full.stdout, 0)).toMatchObject({
      status: 'completed',
      result: { findings: ['finding for delta'] },
    });
    expect(parsed(full.stdout, 1)).toMatchObject({
      status: 'completed',
      result: { findings: ['finding for writer'] },
    });
    expect(full.log).toEqual([]);
    // a write child keeps its normal tools but never sees ours (no recursion through run_workflow)
    const writer = server.requests.find((r) => {
      const text = JSON.stringify(r.messages);
      return text.includes('CHILD-TASK investigate writer') && !text.includes('SCENARIO-');
    });
    const writerTools = (writer?.tools ?? []).map((t) => t.function.name);
    expect(writerTools).toEqual(expect.arrayContaining(['bash', 'write', 'read']));
    for (const own of ['run_workflow', 'workflow_list', 'workflow_manage'])
      expect(writerTools).not.toContain(own);

    const before = server.requests.filter((r) =>
      JSON.stringify(r.messages).includes('investigate delta'),
    ).length;
    const denied = await boot({
      task: 'SCENARIO-DENIED',
      script: scenario('SCENARIO-DENIED', [call]),
    });
    expect(denied.code).toBe(0);
    // headless has nobody to answer: the answer names the option that allows the run
    expect(parsed(denied.stdout)).toMatchObject({
      status: 'denied',
      hint: expect.stringContaining('approvalMode: never'),
    });
    const after = server.requests.filter((r) =>
      JSON.stringify(r.messages).includes('investigate delta'),
    ).length;
    expect(after).toBe(before); // no child started
  });

  it('wait:false runs are owned by DSH jobs and finish after the launching step ended', async () => {
    let runId = '';
    const run = await boot({
      task: 'SCENARIO-BG',
      config: { approvalMode: 'never' },
      script: scenario(
        'SCENARIO-BG',
        [
          () => ({
            name: 'run_workflow',
            arguments: {
              source: FAN_SOURCE,
              manifest: { ...FAN_MANIFEST, name: 'e2e-background' },
              args: { angles: ['slow1', 'slow2'] },
              wait: false,
            },
          }),
          (v) => {
            runId = String(toolJson(v, 0).runId);
            return { name: 'job_list', arguments: {} };
          },
          () => ({
            name: 'workflow_manage',
            arguments: { action: 'show', target: runId, wait: true },
          }),
        ],
        (_r, v) => {
          const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
          return m ? { text: `finding for ${m[1]}`, delayMs: 400 } : undefined;
        },
      ),
    });
    expect(run.code).toBe(0);
    const started = parsed(run.stdout, 0);
    expect(started).toMatchObject({
      status: 'running',
      jobId: expect.stringMatching(/^workflow-/),
    });
    expect(results(run.stdout)[1]).toContain(String(started.jobId));
    expect(parsed(run.stdout, 2)).toMatchObject({
      runId: started.runId,
      status: 'completed',
      result: { findings: ['finding for slow1', 'finding for slow2'] },
    });
  });

  it('a hostile inline workflow fails its own run while the host keeps answering', async () => {
    const spin = `async function run(wf) {
  let n = 0;
  for (let i = 0; i >= 0; i++) { n = (n + i) % 7; }
  return n;
}`;
    const run = await boot({
      task: 'SCENARIO-HOSTILE',
      config: { approvalMode: 'never' },
      script: scenario('SCENARIO-HOSTILE', [
        () => ({
          name: 'run_workflow',
          arguments: { source: spin, manifest: { ...FAN_MANIFEST, name: 'e2e-hostile' } },
        }),
        () => ({ name: 'workflow_list', arguments: {} }),
      ]),
    });
    expect(run.code).toBe(0);
    const reply = parsed(run.stdout, 0);
    expect(reply.status).toBe('failed');
    expect(reply.error).toMatchObject({ code: expect.stringMatching(/^WF_/) });
    expect(parsed(run.stdout, 1)).toMatchObject({ truncated: false });
  });

  it('/workflow subcommands work through ctx.commands.execute', async () => {
    const lines = [
      '/workflow help',
      '/workflow runs',
      `/workflow show ${fanRunId}`,
      '/workflow stop',
      '/workflow list',
    ];
    const run = await boot({
      task: 'SCENARIO-CMD',
      script: scenario(
        'SCENARIO-CMD',
        lines.map((line) => () => ({ name: 'e2e_command', arguments: { line } })),
      ),
    });
    expect(run.code).toBe(0);
    const out = lines.map(
      (_l, i) => parsed(run.stdout, i).result as { kind: string; text: string },
    );
    expect(out[0]).toMatchObject({
      kind: 'success',
      text: expect.stringContaining('Usage: /workflow'),
    });
    expect(out[1]?.kind).toBe('success');
    expect(out[2]).toMatchObject({ kind: 'success', text: expect.stringContaining('e2e-fan-out') });
    expect(out[3]).toMatchObject({ kind: 'error', text: expect.stringContaining('no active run') });
    expect(out[4]?.kind).toBe('success');
  });

  it('trusted-local files run only after a userQuestions confirmation', async () => {
    const dir = join(sandbox.cwd, '.dsh', 'workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'local-hello.mjs'),
      `export const manifest = { name: 'local-hello', description: 'trusted local', phases: ['run'], readOnly: true, maxAgents: 1, maxConcurrency: 1, patterns: ['fan-out-and-synthesize'] };
export async function run(wf, args) { return { hello: 'from local', args }; }
`,
    );
    const call = () => ({
      name: 'run_workflow',
      arguments: { name: 'local-hello', args: { n: 1 } },
    });
    const refused = await boot({
      task: 'SCENARIO-LOCAL-NO',
      script: scenario('SCENARIO-LOCAL-NO', [call]),
    });
    expect(refused.code).toBe(0);
    expect(results(refused.stdout)[0]).toMatch(
      /WF_PLUGIN_CONFIRMATION_REQUIRED.*nothing here can answer/,
    );

    const confirmed = await boot({
      task: 'SCENARIO-LOCAL-YES',
      env: { WF_E2E_ANSWER: 'Run', WF_E2E_APPROVAL: 'allowed-once' },
      script: scenario('SCENARIO-LOCAL-YES', [call]),
    });
    expect(confirmed.code).toBe(0);
    expect(parsed(confirmed.stdout)).toMatchObject({
      status: 'completed',
      result: { hello: 'from local', args: { n: 1 } },
    });
    expect(confirmed.log[0]).toMatchObject({ kind: 'question' });
  });

  it('/workflow review captures the git diff into packets and runs scoped-review on real children', async () => {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', sandbox.cwd, ...args], { stdio: 'pipe' });
    git('init', '-q');
    git('config', 'user.email', 'e2e@example.com');
    git('config', 'user.name', 'e2e');
    writeFileSync(join(sandbox.cwd, 'calc.js'), 'export const add = (a, b) => a + b;\n');
    writeFileSync(join(sandbox.cwd, '.gitignore'), '.dsh/\n');
    git('add', 'calc.js', '.gitignore');
    git('commit', '-qm', 'init');
    writeFileSync(join(sandbox.cwd, 'calc.js'), 'export const add = (a, b) => a - b;\n');
    const run = await boot({
      task: 'SCENARIO-REVIEW',
      script: scenario(
        'SCENARIO-REVIEW',
        [() => ({ name: 'e2e_command', arguments: { line: '/workflow review --wait' } })],
        anyChild,
      ),
    });
    expect(run.code).toBe(0);
    const out = parsed(run.stdout).result as { kind: string; text: string };
    expect(out.kind, out.text).toBe('success');
    expect(out.text).toMatch(/^Review of HEAD: Workflow "scoped-review" completed in /);
    const reply = readRun(out.text.replace(/^Review of \S+: /, ''));
    if (!reply) throw new Error(`not a run: ${out.text}`);
    expect(reply.status).toBe('completed');
    const packets = readdirSync(join(sandbox.cwd, '.dsh', 'review-packets'));
    expect(packets).toHaveLength(1);
    expect(packets[0]).toMatch(/^rng-[0-9a-f]{16}$/);
    const snapshot = JSON.parse(readFileSync(join(runStoreDir(), reply.runId, 'run.json'), 'utf8'));
    expect(snapshot).toMatchObject({ workflow: 'scoped-review', status: 'completed' });
    expect(snapshot.totalSpawned).toBeGreaterThanOrEqual(1);
  });

  it('/workflow create: the request is a real user message and its one-shot grant runs one inline workflow', async () => {
    const text = (m: { content?: unknown }) =>
      typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    const call = () => ({
      name: 'run_workflow',
      arguments: {
        source: FAN_SOURCE,
        manifest: { ...FAN_MANIFEST, name: 'e2e-authored' },
        args: { angles: ['omega'] },
      },
    });
    const run = await boot({
      task: 'SCENARIO-CREATE hand this to the workflow author',
      script: (request, v) => {
        if (!v.userText.includes('SCENARIO-CREATE')) {
          const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
          return m ? { text: `finding for ${m[1]}` } : undefined;
        }
        const idx = request.messages.findIndex(
          (m) => m.role === 'user' && text(m).includes('CREATE-REQUEST'),
        );
        if (idx < 0) {
          if (v.toolResults.length === 0)
            return {
              toolCalls: [
                {
                  name: 'e2e_command',
                  arguments: { line: '/workflow create CREATE-REQUEST fan out over omega' },
                },
              ],
            };
          return { text: 'handed off' };
        }
        const after = request.messages.slice(idx).filter((m) => m.role === 'tool').length;
        if (after < 2) return { toolCalls: [call()] };
        return echo(v);
      },
    });
    expect(run.code).toBe(0);
    const all = results(run.stdout);
    expect(readAnswer(all[0] ?? '').result).toMatchObject({ kind: 'success' });
    // the grant let the first inline run through with no approval answerer mounted...
    expect(readAnswer(all[1] ?? '')).toMatchObject({
      status: 'completed',
      result: { findings: ['finding for omega'] },
    });
    // ...exactly once: the second inline run is gated normally (and denied in headless)
    expect(readAnswer(all[2] ?? '')).toMatchObject({ status: 'denied' });
    // the request went in as a real user message (it titles the session and shows in chat)
    const last = server.requests
      .filter((r) => JSON.stringify(r.messages).includes('CREATE-REQUEST'))
      .at(-1);
    const user = last?.messages.find(
      (m) => m.role === 'user' && text(m).includes('CREATE-REQUEST'),
    );
    expect(text(user ?? {})).toContain('CREATE-REQUEST fan out over omega');
    expect(JSON.stringify(last?.messages)).toContain('Workflow authoring request');
  });

  it('every session the suite wrote loads again in DSH, with balanced native events only', async () => {
    const run = await boot({
      task: 'SCENARIO-RESUME',
      script: scenario('SCENARIO-RESUME', [() => ({ name: 'e2e_sessions', arguments: {} })]),
    });
    expect(run.code).toBe(0);
    const sessions = parsed(run.stdout).sessions as {
      id: string;
      ok: boolean;
      error?: string;
      workflow: { type: string; data: Record<string, unknown> }[];
    }[];
    const stored = readdirSync(join(sandbox.dshHome, 'sessions')).length;
    expect(stored).toBeGreaterThan(0);
    expect(sessions.length).toBeGreaterThan(10);
    for (const s of sessions) expect(s, s.error).toMatchObject({ ok: true });

    const FIELDS: Record<string, string[]> = {
      'tool-workflow/run-start': ['name', 'runId'],
      'tool-workflow/agent-start': ['childId', 'label', 'phase', 'runId', 'seq'],
      'tool-workflow/agent-end': ['outcome', 'runId', 'seq'],
      'tool-workflow/run-end': ['runId', 'stopReason'],
    };
    let runs = 0;
    for (const s of sessions) {
      const byRun = new Map<string, { type: string; data: Record<string, unknown> }[]>();
      for (const e of s.workflow) {
        const allowed = FIELDS[e.type];
        expect(allowed, `unexpected event type ${e.type}`).toBeDefined();
        for (const k of Object.keys(e.data)) expect(allowed).toContain(k);
        const id = String(e.data.runId);
        byRun.set(id, [...(byRun.get(id) ?? []), e]);
      }
      for (const [, events] of byRun) {
        runs += 1;
        expect(events[0]?.type).toBe('tool-workflow/run-start');
        expect(events.at(-1)?.type).toBe('tool-workflow/run-end');
        const starts = events
          .filter((e) => e.type === 'tool-workflow/agent-start')
          .map((e) => e.data.seq);
        const ends = events
          .filter((e) => e.type === 'tool-workflow/agent-end')
          .map((e) => e.data.seq);
        expect([...ends].sort()).toEqual([...starts].sort());
      }
    }
    expect(runs).toBeGreaterThanOrEqual(6);
    const fan = sessions.flatMap((s) => s.workflow).filter((e) => e.data.runId === fanRunId);
    expect(fan.map((e) => e.type)).toEqual([
      'tool-workflow/run-start',
      'tool-workflow/agent-start',
      'tool-workflow/agent-start',
      'tool-workflow/agent-start',
      'tool-workflow/agent-end',
      'tool-workflow/agent-end',
      'tool-workflow/agent-end',
      'tool-workflow/run-end',
    ]);
  });
});
