// One truth for every number the CLI prints about a run, on real recorded runs (the real bin,
// engine, sandbox and run store): the summary, `wf runs`, `wf show`, `wf events` and `wf report`
// print the same duration; `show` labels simulated tokens as such and real ones as spent; the
// documented `--json` failure shape (`error`, `exitCode`) holds for `check` and for Ctrl-C.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openRunStore } from '@wf/catalog-fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  demoCapsule,
  json,
  type Project,
  startWf,
  tempProject,
  wf,
} from './helpers/wf-cli.js';

let p: Project;

beforeAll(() => {
  p = tempProject();
  p.file('angles.workflow.json', demoCapsule());
});
afterAll(() => p?.cleanup());

describe('one duration on every surface', () => {
  it('summary, runs, show, events and report print the same duration for one run', async () => {
    const ran = await wf(
      ['run', 'angles.workflow.json', '--args', '{"question":"q"}', '--delay-ms', '60'],
      p,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const summary = /run (run-[\w-]+) completed in (\S+) ·/.exec(ran.stdout);
    expect(summary, ran.stdout).not.toBeNull();
    const runId = summary?.[1] as string;
    const took = summary?.[2] as string;

    // The exact milliseconds first: one number behind every surface.
    const listed = json(await wf(['runs', '--json'], p)) as {
      runs: { runId: string; startedAt: number; endedAt: number; durationMs: number }[];
    };
    const row = listed.runs.find((r) => r.runId === runId);
    expect(row).toBeDefined();
    const ms = row?.durationMs as number;
    expect(ms).toBe((row?.endedAt as number) - (row?.startedAt as number));
    const shownJson = json(await wf(['show', runId, '--json'], p)) as {
      run: { startedAt: number; endedAt: number; cost: { wallClockDurationMs: number } };
    };
    expect(shownJson.run.endedAt - shownJson.run.startedAt).toBe(ms);
    expect(shownJson.run.cost.wallClockDurationMs).toBe(ms);
    const lines = (await wf(['events', runId, '--json'], p)).stdout.trim().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { type: string; time: number });
    expect(events[0]?.type).toBe('workflow-started');
    expect(events.at(-1)?.type).toBe('workflow-completed');
    expect((events.at(-1)?.time as number) - (events[0]?.time as number)).toBe(ms);

    // Then the text each surface prints.
    const runsText = (await wf(['runs'], p)).stdout;
    const runsRow = runsText.split('\n').find((l) => l.startsWith(runId)) ?? '';
    expect(runsRow.split(/\s{2,}/)).toContain(took);
    const showText = (await wf(['show', runId], p)).stdout;
    expect(showText).toMatch(new RegExp(`started .* · ${escapeRe(took)}\\n`));
    const eventsText = (await wf(['events', runId], p)).stdout.trim().split('\n');
    expect(eventsText.at(-1)).toMatch(
      new RegExp(`^\\s*\\d+\\s+\\+${escapeRe(took)}\\s+workflow-completed`),
    );
    const rep = json(await wf(['report', runId, '--out', 'one.html', '--json'], p));
    const html = readFileSync(String(rep.path), 'utf8');
    expect(html).toContain(`<span class="took">${took}</span>`);
  }, 120_000);
});

describe('cost labels', () => {
  it('show says simulated tokens were not spent, and real ones were', async () => {
    const ran = await wf(
      ['run', 'angles.workflow.json', '--args', '{"question":"q"}', '--delay-ms', '0'],
      p,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const shown = (await wf(['show', 'last'], p)).stdout;
    expect(shown).toMatch(/tokens .*simulated agents: counted, no model called, none spent/);
    expect(shown).not.toContain('spent by real agents');

    // A run recorded by DSH's real subagents (the store format the plugin writes).
    const store = await openRunStore({ project: p.dir });
    const t0 = Date.now();
    await store.begin({
      runId: 'run-real-dsh',
      workflow: 'angles-demo',
      trust: 'capability-generated',
      manifest: demoCapsule().manifest,
      source: demoCapsule().source,
      args: { question: 'q' },
      seed: 1,
      startTime: t0,
      startedAt: t0,
    });
    const data = { taskId: 'task-1', name: 'scope', provider: 'dsh:subagents' };
    store.event({ seq: 1, runId: 'run-real-dsh', type: 'workflow-started', time: t0, data: {} });
    store.event({ seq: 2, runId: 'run-real-dsh', type: 'agent-started', time: t0 + 5, data });
    const usage = { inputTokens: 900, outputTokens: 100, totalTokens: 1000 };
    const end = { ...data, status: 'completed', usage };
    store.event({
      seq: 3,
      runId: 'run-real-dsh',
      type: 'agent-completed',
      time: t0 + 50,
      data: end,
    });
    await store.finish('run-real-dsh', {
      status: 'completed',
      endedAt: t0 + 60,
      cost: {
        wallClockDurationMs: 60,
        agentsStarted: 1,
        agentsCompleted: 1,
        cacheHits: 0,
        tokenUsage: usage,
        peakConcurrency: 1,
      },
    });
    await store.close();
    const real = await wf(['show', 'run-real-dsh'], p);
    expect(real.stdout).toMatch(/tokens\s+1,000 .*spent by real agents \(dsh:subagents\)/);
    expect(real.stdout).not.toContain('none spent');
    expect(real.stdout).toMatch(/started .* · 60ms\n/);

    // A run on Restate's simulated workers: its provider is named restate:simulated, and its
    // record says simulated; its tokens were counted, not spent.
    const again = await openRunStore({ project: p.dir });
    await again.begin({
      runId: 'run-restate-sim',
      workflow: 'angles-demo',
      trust: 'capability-generated',
      manifest: demoCapsule().manifest,
      source: demoCapsule().source,
      args: { question: 'q' },
      seed: 1,
      startTime: t0,
      startedAt: t0,
      provider: 'restate:simulated',
      simulated: true,
    });
    const sim = { ...data, provider: 'restate:simulated' };
    again.event({ seq: 1, runId: 'run-restate-sim', type: 'agent-started', time: t0, data: sim });
    again.event({
      seq: 2,
      runId: 'run-restate-sim',
      type: 'agent-completed',
      time: t0 + 5,
      data: { ...sim, status: 'completed', usage },
    });
    await again.finish('run-restate-sim', {
      status: 'completed',
      endedAt: t0 + 6,
      cost: {
        wallClockDurationMs: 6,
        agentsStarted: 1,
        agentsCompleted: 1,
        cacheHits: 0,
        tokenUsage: usage,
        peakConcurrency: 1,
      },
    });
    await again.close();
    const restate = await wf(['show', 'run-restate-sim'], p);
    expect(restate.stdout).toMatch(/tokens\s+1,000 .*simulated agents: counted, no model called/);
    expect(restate.stdout).not.toContain('spent by real agents');
  }, 60_000);
});

describe('documented --json failure shapes', () => {
  it('check --json failures carry error and exitCode', async () => {
    p.file('bad.workflow.js', "import fs from 'node:fs';\nasync function run(wf) { return 1; }\n");
    const bad = await wf(['check', 'bad.workflow.js', '--json'], p);
    expect(bad.code).toBe(1);
    expect(json(bad)).toMatchObject({
      ok: false,
      exitCode: 1,
      error: { code: 'WF_CLI_CHECK_FAILED', message: expect.stringContaining('bad.workflow.js') },
    });
    const usage = await wf(['check', 'bad.workflow.js', '--profile', 'strictest', '--json'], p);
    expect(usage.code).toBe(2);
    expect(json(usage)).toMatchObject({ ok: false, exitCode: 2, error: { code: 'WF_CLI_USAGE' } });
    const missing = await wf(['check', 'nowhere.workflow.js', '--json'], p);
    expect(missing.code).toBe(2);
    expect(json(missing)).toMatchObject({
      ok: false,
      exitCode: 2,
      error: { code: 'WF_CLI_USAGE' },
    });
    const good = await wf(['check', 'angles.workflow.json', '--json'], p);
    expect(good.code).toBe(0);
    expect(json(good)).not.toHaveProperty('error');
  }, 60_000);

  it('Ctrl-C during run --json reports WF_CLI_INTERRUPTED with exit code 130', async () => {
    const child = startWf(
      [
        'run',
        'angles.workflow.json',
        '--args',
        '{"question":"slow"}',
        '--delay-ms',
        '8000',
        '--json',
      ],
      p,
    );
    const done = collect(child, 60_000);
    await waitForAgents(p, 4, 30_000);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    const doc = json(r);
    expect(doc).toMatchObject({
      ok: false,
      status: 'stopped',
      exitCode: 130,
      error: {
        code: 'WF_CLI_INTERRUPTED',
        details: { runError: { code: 'WF_ENGINE_RUN_STOPPED' } },
      },
    });
  }, 90_000);
});

/** Waits until some recorded run of the project has started `count` agents. */
async function waitForAgents(project: Project, count: number, timeoutMs: number): Promise<void> {
  const root = join(project.dir, '.dsh', 'workflow-runs');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(root)) {
      for (const id of readdirSync(root)) {
        const file = join(root, id, 'events.jsonl');
        if (!existsSync(file)) continue;
        const started = readFileSync(file, 'utf8').match(/"type":"agent-started"/g) ?? [];
        const ended = /"type":"workflow-(completed|failed|stopped)"/.test(
          readFileSync(file, 'utf8'),
        );
        if (started.length >= count && !ended) return;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no run started ${count} agents within ${timeoutMs} ms`);
}

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
