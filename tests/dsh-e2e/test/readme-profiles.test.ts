// Both DSH profiles as the README sets them up: the plugin installed as `dsh plugin add` leaves it
// (a profile bundle) and the README's rows for that profile, verbatim, as the profile's
// cordis.patch.yml. Headless is driven by its task and the e2e helper (it parses no slash
// commands); web by its own HTTP/WebSocket API, as its browser client drives it. Each profile runs
// `/workflow parallel-investigation ... --wait` and an inline `run_workflow`; a run still going
// when DSH exits is offered for resume by the next session.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSandbox, REPO_ROOT, runHost, type Sandbox } from './helpers/host.js';
import type { ModelServer, Script } from './helpers/model-server.js';
import { readmeBlock } from './helpers/readme.js';
import { readRun } from './helpers/reply.js';
import { anyChild, results, scenario } from './helpers/scripts.js';
import { helperPatch, installAsReadmeSays, useHostSuite } from './helpers/suite.js';
import { startWebHost } from './helpers/web.js';
import { FAN_SOURCE } from './helpers/workflows.js';

let server: ModelServer;
useHostSuite('wf-dsh-readme-', (s) => {
  server = s.server;
  s.sandbox.cleanup(); // each profile below gets a DSH_HOME of its own
});

const FAN_MANIFEST = {
  name: 'readme-fan-out',
  description: 'Read-only children, then their findings',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 3,
  maxConcurrency: 3,
  patterns: ['fan-out-and-synthesize'],
};
const PI_LINE = '/workflow parallel-investigation {"question": "How does calc work?"} --wait';

/** Fan-out children answer per angle (after `delayMs`); the built-ins' structured children too. */
const child =
  (delayMs = 0): Script =>
  (request, v) => {
    const m = /CHILD-TASK investigate (\w+)/.exec(v.userText);
    if (m) return { text: `finding for ${m[1]}`, ...(delayMs ? { delayMs } : {}) };
    return anyChild(request, v);
  };

const inline = (angles: string[], extra: Record<string, unknown> = {}) => ({
  name: 'run_workflow',
  arguments: { source: FAN_SOURCE, manifest: FAN_MANIFEST, args: { angles }, ...extra },
});

/** Requests of the parent agent of this scenario (its task carries the marker). */
const parentRequests = (marker: string) =>
  server.requests.filter((r) => JSON.stringify(r.messages).includes(marker));

function expectPiCompleted(text: string | undefined): void {
  const run = readRun(text ?? '');
  expect(run, text).toMatchObject({ workflow: 'parallel-investigation', status: 'completed' });
  expect(run?.agents).toMatch(/^4 agents: 4 completed$/); // three angles, then the synthesis
}

describe('headless, installed as the README says', { timeout: 240_000 }, () => {
  let home: Sandbox;

  it('without the hmr row, rc.8 headless exits at boot before any model call (why the row)', async () => {
    const bare = makeSandbox('wf-dsh-bare-headless-');
    try {
      const before = server.requests.length;
      const run = await runHost({
        sandbox: bare,
        modelUrl: server.url,
        task: 'hello',
        patches: [],
        hmrShim: false,
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('user patch-layer watching requires the Cordis HMR service');
      expect(server.requests.length).toBe(before);
    } finally {
      bare.cleanup();
    }
  });

  it('with the README rows: /workflow parallel-investigation --wait and an inline run answer', async () => {
    home = makeSandbox('wf-dsh-readme-headless-');
    installAsReadmeSays(home, 'headless');
    server.setScript(
      scenario(
        'SCENARIO-README-HEADLESS',
        [() => ({ name: 'e2e_command', arguments: { line: PI_LINE } }), () => inline(['north'])],
        child(),
      ),
    );
    const run = await runHost({
      sandbox: home,
      modelUrl: server.url,
      task: 'SCENARIO-README-HEADLESS',
      patches: [helperPatch(home)],
      hmrShim: false,
    });
    expect(run.code, run.stderr).toBe(0);
    const [pi, fan] = results(run.stdout);
    const command = JSON.parse(pi ?? '{}').result as { kind: string; text: string };
    expect(command.kind).toBe('success');
    expectPiCompleted(command.text);
    // the README's approvalMode row: no approval answerer in headless, and the inline run ran
    const reply = readRun(fan ?? '');
    expect(reply, fan).toMatchObject({
      workflow: 'readme-fan-out',
      status: 'completed',
      result: { findings: ['finding for north'] },
    });
    expect(fan?.split('\n')[0]).toMatch(
      /^Workflow "readme-fan-out" completed in .*1 agent: 1 completed\)\.$/,
    );
  });

  let cutRunId = '';
  it('a background run still going when headless exits is stopped as cut short by DSH', async () => {
    server.setScript(
      scenario(
        'SCENARIO-README-EXIT',
        [() => inline(['slow1', 'slow2'], { wait: false })],
        child(60_000),
      ),
    );
    const run = await runHost({
      sandbox: home,
      modelUrl: server.url,
      task: 'SCENARIO-README-EXIT',
      patches: [helperPatch(home)],
      hmrShim: false,
    });
    expect(run.code, run.stderr).toBe(0);
    const started = readRun(results(run.stdout)[0] ?? '');
    expect(started).toMatchObject({
      status: 'running',
      jobId: expect.stringMatching(/^workflow-/),
    });
    cutRunId = started?.runId ?? '';
    const snapshot = JSON.parse(
      readFileSync(join(home.cwd, '.dsh', 'workflow-runs', cutRunId, 'run.json'), 'utf8'),
    );
    expect(snapshot).toMatchObject({
      status: 'stopped',
      error: { message: expect.stringContaining('DSH exited') },
    });
  });

  it('the next session lists it as interrupted and /workflow resume <run> continues it', async () => {
    server.setScript(
      scenario(
        'SCENARIO-README-NEXT',
        [
          () => ({ name: 'e2e_command', arguments: { line: '/workflow runs' } }),
          () => ({
            name: 'e2e_command',
            arguments: { line: `/workflow resume ${cutRunId} --wait` },
          }),
          () => ({ name: 'e2e_command', arguments: { line: '/workflow runs' } }),
        ],
        child(),
      ),
    );
    const run = await runHost({
      sandbox: home,
      modelUrl: server.url,
      task: 'SCENARIO-README-NEXT',
      patches: [helperPatch(home)],
      hmrShim: false,
    });
    expect(run.code, run.stderr).toBe(0);
    // the model is told: the run, and the command the user can type
    const told = parentRequests('SCENARIO-README-NEXT').filter((r) =>
      JSON.stringify(r.messages).includes('interrupted when DSH last exited'),
    );
    expect(told.length).toBeGreaterThan(0);
    expect(JSON.stringify(told[0]?.messages)).toContain(cutRunId);
    const texts = results(run.stdout).map(
      (t) => (JSON.parse(t) as { result: { kind: string; text: string } }).result,
    );
    expect(texts[0]?.text).toContain(`${cutRunId}  readme-fan-out  interrupted`);
    expect(texts[0]?.text).toContain(`/workflow resume ${cutRunId} continues it`);
    const resumed = readRun(texts[1]?.text ?? '');
    expect(resumed, texts[1]?.text).toMatchObject({
      status: 'completed',
      resumedFrom: cutRunId,
      result: { findings: ['finding for slow1', 'finding for slow2'] },
    });
    expect(texts[2]?.text).not.toContain('interrupted');
  });

  it('a denied inline run names approvalMode when the row is missing', async () => {
    // the README's approvalMode row replaced by the hmr row alone (the web rows)
    const bare = makeSandbox('wf-dsh-norow-headless-');
    try {
      installAsReadmeSays(bare, 'headless');
      writeFileSync(
        join(bare.dshHome, 'profiles', 'headless', 'cordis.patch.yml'),
        readmeBlock('web-rows'),
      );
      server.setScript(scenario('SCENARIO-README-DENIED', [() => inline(['east'])]));
      const run = await runHost({
        sandbox: bare,
        modelUrl: server.url,
        task: 'SCENARIO-README-DENIED',
        patches: [],
        hmrShim: false,
      });
      expect(run.code, run.stderr).toBe(0);
      const denied = readRun(results(run.stdout)[0] ?? '');
      expect(denied).toMatchObject({ status: 'denied' });
      expect(denied?.hint).toContain('set approvalMode: never on the wf-workflows row');
    } finally {
      bare.cleanup();
    }
  });

  it('cleans up', () => home.cleanup());
});

describe('web, installed as the README says', { timeout: 240_000 }, () => {
  it('without the hmr row, rc.8 web exits at boot even with no @wf plugin (why the row)', async () => {
    const bare = makeSandbox('wf-dsh-bare-web-');
    try {
      await expect(
        startWebHost({ sandbox: bare, modelUrl: server.url, patches: [], hmrShim: false }),
      ).rejects.toThrow(/user patch-layer watching requires the Cordis HMR service/);
    } finally {
      bare.cleanup();
    }
  });

  let home: Sandbox;
  let reportRunId = '';
  it('with the README row it serves; /workflow parallel-investigation --wait and an inline run answer', async () => {
    home = makeSandbox('wf-dsh-readme-web-');
    installAsReadmeSays(home, 'web');
    server.setScript(scenario('SCENARIO-README-WEB', [() => inline(['west', 'south'])], child()));
    const web = await startWebHost({
      sandbox: home,
      modelUrl: server.url,
      patches: [],
      hmrShim: false,
      approval: 'allowed-once',
    });
    try {
      const session = await web.createSession(home.cwd);
      const pi = await web.command(session, PI_LINE);
      expect(pi.kind).toBe('success');
      expectPiCompleted(pi.text);
      // the model's inline run: DSH's approval prompt reaches the browser, which allows it
      await web.promptAndWait(session, 'SCENARIO-README-WEB run the fan-out');
      expect(web.approvals).toEqual([
        { toolName: 'run_workflow', reason: expect.stringContaining('readme-fan-out') },
      ]);
      const [fan] = await web.toolResults(session);
      expect(fan?.split('\n')[0]).toMatch(
        /^Workflow "readme-fan-out" completed in \S+ \(run run-\S+; 2 agents: 2 completed\)\.$/,
      );
      const reply = readRun(fan ?? '');
      expect(reply).toMatchObject({
        result: { findings: ['finding for west', 'finding for south'] },
      });
      reportRunId = reply?.runId ?? '';
      // the live run rendered in the session's events as DSH's own workflow node
      const native = web.frames
        .filter((f) => f.payload.event?.type.startsWith('tool-workflow/'))
        .map((f) => f.payload.event?.type);
      expect(native).toContain('tool-workflow/run-end');

      const report = await web.command(session, `/workflow report ${reportRunId}`);
      expect(report.kind).toBe('success');
      const path = /: (\/\S+\.report\.html)\n/.exec(report.text ?? '')?.[1] ?? '';
      expect(path).toBe(join(home.cwd, '.dsh', 'workflow-reports', `${reportRunId}.report.html`));
      // the page `wf report` writes from the same run store, byte for byte
      const out = mkdtempSync(join(tmpdir(), 'wf-cli-report-'));
      try {
        execFileSync(
          process.execPath,
          [
            join(REPO_ROOT, 'tooling/repo/wf.mjs'),
            'report',
            reportRunId,
            '--out',
            join(out, 'cli.html'),
          ],
          { cwd: home.cwd, stdio: 'pipe' },
        );
        expect(readFileSync(path, 'utf8')).toBe(readFileSync(join(out, 'cli.html'), 'utf8'));
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    } finally {
      expect(await web.close()).toBe(0);
    }
  });

  it('a run going when web exits is listed as interrupted in the next session and resumes', async () => {
    server.setScript(
      scenario(
        'SCENARIO-README-WEB-EXIT',
        [() => inline(['late1'], { wait: false })],
        child(60_000),
      ),
    );
    let cut = '';
    const first = await startWebHost({
      sandbox: home,
      modelUrl: server.url,
      patches: [],
      hmrShim: false,
      approval: 'allowed-once',
    });
    try {
      const session = await first.createSession(home.cwd);
      await first.promptAndWait(session, 'SCENARIO-README-WEB-EXIT start it in the background');
      cut = readRun((await first.toolResults(session))[0] ?? '')?.runId ?? '';
      expect(cut).toMatch(/^run-/);
    } finally {
      await first.close(); // SIGTERM: DSH disposes the plugin with the run still going
    }
    server.setScript(child());
    const next = await startWebHost({
      sandbox: home,
      modelUrl: server.url,
      patches: [],
      hmrShim: false,
    });
    try {
      const session = await next.createSession(home.cwd);
      const runs = await next.command(session, '/workflow runs');
      expect(runs.text).toContain(`${cut}  readme-fan-out  interrupted`);
      expect(runs.text).toContain(`/workflow resume ${cut} continues it`);
      const resumed = await next.command(session, `/workflow resume ${cut} --wait`);
      expect(readRun(resumed.text ?? '')).toMatchObject({
        status: 'completed',
        resumedFrom: cut,
        result: { findings: ['finding for late1'] },
      });
    } finally {
      await next.close();
      home.cleanup();
    }
    expect(existsSync(home.root)).toBe(false);
  });
});
