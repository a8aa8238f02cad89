// The rest of a run's life in DSH, on the real engine, sandbox and run store: a run reads as a
// summary line and its result; `/workflow report` writes the report `wf report` writes; a denial
// names the option that allows it; runs DSH cut short are offered for resume in the next session.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRunStore } from '@wf/catalog-fs';
import { renderRunReport } from '@wf/report';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_STOP_REASON } from '../src/plugin/interrupted.js';
import { createTestHost, type TestHost } from './helpers/host.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-plugin-life-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Answer = { kind: string; text: string };

function host(
  options: { approval?: string; config?: Record<string, unknown>; gate?: () => Promise<void> } = {},
): TestHost & { say(line: string): Promise<Answer> } {
  const h = createTestHost({
    cwd: dir,
    config: options.config,
    services: {
      approval: options.approval ? { request: async () => options.approval } : undefined,
      sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: dir }) },
    },
    ...(options.gate ? { gate: options.gate } : {}),
  });
  const say = (line: string) =>
    h.commands.get('workflow')?.({
      agent: h.parent,
      rawInput: line,
      signal: new AbortController().signal,
    }) as Promise<Answer>;
  return Object.assign(h, { say });
}

const FAN = `async function run(wf, args) {
  const r = await wf.parallel(args.names.map((n) => () => wf.runAgent({ name: n, phase: 'fan', prompt: 'go ' + n, readOnly: true })));
  return { findings: r.map((x) => (x ? x.finalText : null)) };
}`;
const MANIFEST = {
  name: 'life-fan',
  description: 'fan-out',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 4,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
};

function runTool(h: TestHost) {
  const t = h.tools.get('run_workflow');
  if (!t) throw new Error('run_workflow is not registered');
  return t;
}

describe('a run reads as a summary line, then its result', () => {
  it('the run tool answers with the summary line (status, time, agents) and the result', async () => {
    const h = host({ approval: 'allowed-once' });
    const tool = runTool(h);
    const reply = await tool.execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['a', 'b'] } },
      { agent: h.parent, signal: new AbortController().signal },
    );
    const [text] = tool.output.render({}, reply);
    const lines = (text?.text ?? '').split('\n');
    expect(lines[0]).toMatch(
      /^Workflow "life-fan" completed in \d+(\.\d+)?m?s \(run run-[0-9a-f-]+; 2 agents: 2 completed\)\.$/,
    );
    expect(lines.slice(1, 3)).toEqual(['', 'Result:']);
    expect(JSON.parse(lines.slice(3).join('\n'))).toEqual({ findings: ['done: a', 'done: b'] });
    // the canonical value keeps every field for programs
    expect(reply).toMatchObject({
      workflow: 'life-fan',
      status: 'completed',
      agents: { total: 2, completed: 2, failed: 0 },
    });
  });

  it('a typed /workflow <name> --wait answers the same way, never as one JSON blob', async () => {
    const h = host();
    const ran = await h.say('fan-out-and-synthesize {"request": "q"} --wait');
    expect(ran.kind).toBe('success');
    expect(ran.text.split('\n')[0]).toMatch(/^Workflow "fan-out-and-synthesize" completed in /);
    expect(ran.text).toContain('\nResult:\n');
    expect(ran.text.trimStart().startsWith('{')).toBe(false);
    const bg = await h.say('fan-out-and-synthesize {"request": "q"}');
    expect(bg.text).toMatch(/^Workflow "fan-out-and-synthesize" started in the background/);
    expect(bg.text).toContain('/workflow show run-');
  });

  it('control and bidi characters of a result never reach DSH raw', async () => {
    const h = host({ approval: 'allowed-once' });
    const tool = runTool(h);
    const reply = await tool.execute(
      {
        source: `async function run(wf) { return 'ok \\u001b]0;title\\u0007 \\u202e evil'; }`,
        manifest: { ...MANIFEST, name: 'life-raw' },
      },
      { agent: h.parent, signal: new AbortController().signal },
    );
    const [text] = tool.output.render({}, reply);
    expect(text?.text).not.toMatch(/[\u001b\u0007\u202e]/);
    // terminalText shows each one as its JSON escape (host-text.ts)
    expect(text?.text).toContain('ok \\u001b]0;title\\u0007 \\u202e evil');
  });
});

describe('denials name the option that allows them', () => {
  it('with nobody to answer (headless), the hint names approvalMode and full access', async () => {
    const h = host(); // no approval service: what headless DSH resolves as unavailable
    const tool = runTool(h);
    const reply = await tool.execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['a'] } },
      { agent: h.parent, signal: new AbortController().signal },
    );
    expect(reply).toMatchObject({
      status: 'denied',
      error: { hint: expect.stringContaining('approvalMode: never') },
    });
    const [text] = tool.output.render({}, reply);
    expect(text?.text).toMatch(/^Workflow "life-fan" denied/);
    expect(text?.text).toMatch(/\nHint: nothing in this DSH session can answer an approval prompt/);
    expect(text?.text).toContain('DSH_PERMISSION_MODE=danger-full-access');
  });

  it('a rejected approval names approvalMode and its current value', async () => {
    const h = host({ approval: 'rejected', config: { approvalMode: 'always' } });
    const denied = await h.say('fan-out-and-synthesize {"request": "q"} --wait');
    expect(denied.text).toMatch(/^Workflow "fan-out-and-synthesize" denied/);
    expect(denied.text).toContain('Hint: the approval was rejected.');
    expect(denied.text).toContain('approvalMode (now always)');
  });
});

describe('a background run is approved while its call is open', () => {
  it('wait:false answers only after the approval, which DSH can ask only inside the call', async () => {
    let callOpen = false;
    const asked: boolean[] = [];
    const h = createTestHost({
      cwd: dir,
      services: {
        // DSH asks approvals inside the calling tool call's turn; after it answered, nobody can
        approval: {
          async request() {
            await new Promise((r) => setTimeout(r, 50));
            asked.push(callOpen);
            return callOpen ? 'allowed-once' : 'unavailable';
          },
        },
        sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: dir }) },
      },
    });
    const tool = runTool(h);
    callOpen = true;
    const started = (await tool.execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['bg'] }, wait: false },
      { agent: h.parent, signal: new AbortController().signal },
    )) as { runId: string; status: string };
    callOpen = false;
    expect(asked).toEqual([true]);
    expect(started.status).toBe('running');
    const shown = (await h.tools
      .get('workflow_manage')
      ?.execute(
        { action: 'show', target: started.runId, wait: true },
        { agent: h.parent, signal: new AbortController().signal },
      )) as { status: string };
    expect(shown.status).toBe('completed');
  });

  it('a background run denied at its gate answers denied, not running', async () => {
    const h = host(); // nothing answers approvals
    const reply = (await runTool(h).execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['bg'] }, wait: false },
      { agent: h.parent, signal: new AbortController().signal },
    )) as { status: string; error?: { hint?: string } };
    expect(reply.status).toBe('denied');
    expect(reply.error?.hint).toContain('approvalMode: never');
  });
});

describe('/workflow report', () => {
  it('writes the run report into the project with the renderer wf report uses, and answers its path', async () => {
    const h = host();
    await h.say('fan-out-and-synthesize {"request": "q"} --wait');
    const answer = await h.say('report last');
    expect(answer.kind).toBe('success');
    const path = /: (\/\S+\.report\.html)\n/.exec(answer.text)?.[1] ?? '';
    expect(path.startsWith(join(dir, '.dsh', 'workflow-reports', 'run-'))).toBe(true);
    const html = readFileSync(path, 'utf8');
    expect(html).toContain('<!doctype html>');
    expect(html).toContain('fan-out-and-synthesize');
    // the same page @wf/report renders from the run store's record
    await h.unload();
    const store = await openRunStore({ project: dir });
    const runId = /(run-[0-9a-f-]+)\.report\.html$/.exec(path)?.[1] ?? '';
    const shown = await store.show(runId);
    if (!shown.ok || !shown.run.snapshot) throw new Error('the run is not in the store');
    const events = await store.events(runId);
    await store.close();
    const again = renderRunReport({ run: shown.run.snapshot, events });
    expect(html.replace(/<section class="result">[\s\S]*?<\/section>/, '')).toBe(
      again.replace(/<section class="result">[\s\S]*?<\/section>/, ''),
    );
  });

  it('names what it cannot find, and what it cannot write', async () => {
    const h = host();
    expect(await h.say('report')).toMatchObject({
      kind: 'error',
      text: expect.stringContaining('WF_PLUGIN_NOT_FOUND'),
    });
    await h.say('fan-out-and-synthesize {"request": "q"} --wait');
    // a file where the reports folder goes
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, '.dsh'), { recursive: true });
    writeFileSync(join(dir, '.dsh', 'workflow-reports'), 'not a folder');
    const out = await h.say('report');
    expect(out.kind).toBe('error');
    expect(out.text).toMatch(
      /^WF_PLUGIN_REPORT_UNWRITABLE: cannot write the report of run run-\S+ to \//,
    );
  });
});

describe('runs DSH cut short are offered for resume in the next session', () => {
  it('unload records them as interrupted by DSH; the next session lists them and resumes one', async () => {
    let open = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const first = host({ approval: 'allowed-once', gate: () => gate });
    const started = (await runTool(first).execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['x', 'y'] }, wait: false },
      { agent: first.parent, signal: new AbortController().signal },
    )) as { runId: string; status: string };
    expect(started.status).toBe('running');
    // DSH exits: the plugin unloads with the run still going
    const unloading = first.unload();
    open();
    await unloading;
    const store = await openRunStore({ project: dir });
    const shown = await store.show(started.runId);
    await store.close();
    expect(shown.ok && shown.run.snapshot).toMatchObject({
      status: 'stopped',
      error: { message: EXIT_STOP_REASON },
    });

    // nobody answers approvals in the next session: a typed resume is the user's own intent
    const next = host();
    // the model is told, per request, once the project's runs have been read
    const notice = next.contexts.find((c) => c.name === 'wf-workflows:interrupted-runs');
    let text = '';
    for (let i = 0; i < 100 && !text; i += 1) {
      text = notice?.text({ agent: next.parent }) ?? '';
      if (!text) await new Promise((r) => setTimeout(r, 20));
    }
    expect(text).toContain(started.runId);
    expect(text).toContain('`/workflow resume <run>`');
    const runs = await next.say('runs');
    expect(runs.text).toMatch(new RegExp(`${started.runId}  life-fan  interrupted`));
    expect(runs.text).toContain(`/workflow resume ${started.runId} continues it from its journal`);

    const resumed = await next.say(`resume ${started.runId} --wait`);
    expect(resumed.kind).toBe('success');
    expect(resumed.text.split('\n')[0]).toMatch(/^Workflow "life-fan" completed in /);
    expect(resumed.text).toContain(`Resumed from run ${started.runId}.`);
    // continued: no longer offered
    expect((await next.say('runs')).text).not.toContain('interrupted');
    for (let i = 0; i < 100 && text; i += 1) {
      text = notice?.text({ agent: next.parent }) ?? '';
      if (text) await new Promise((r) => setTimeout(r, 20));
    }
    expect(text).toBe('');
    expect(existsSync(join(dir, '.dsh', 'workflow-runs'))).toBe(true);
  });

  it('a run the user stopped is not offered', async () => {
    let open = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const h = host({ approval: 'allowed-once', gate: () => gate });
    await runTool(h).execute(
      { source: FAN, manifest: MANIFEST, args: { names: ['x'] }, wait: false },
      { agent: h.parent, signal: new AbortController().signal },
    );
    expect((await h.say('stop')).kind).toBe('success');
    open();
    await new Promise((r) => setTimeout(r, 50));
    await h.unload();
    const next = host();
    const runs = await next.say('runs');
    expect(runs.text).toContain('stopped');
    expect(runs.text).not.toContain('interrupted');
  });
});
