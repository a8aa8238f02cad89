// The run-store verbs through the real bin: runs, show, events (--follow), report, save, list,
// delete-run, prune; --json shapes; a corrupt run directory; an active run that cannot be deleted.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  demoCapsule,
  json,
  type Project,
  startWf,
  tempProject,
  waitForOutput,
  wf,
} from './helpers/wf-cli.js';

let p: Project;
let first: string;
let second: string;

async function runOnce(args: string[] = []): Promise<string> {
  const r = await wf(['run', 'angles.workflow.json', '--delay-ms', '0', '--json', ...args], p);
  expect(r.code).toBe(0);
  return String(json(r).runId);
}

beforeAll(async () => {
  p = tempProject();
  p.file('angles.workflow.json', demoCapsule());
  first = await runOnce(['--args', '{"question":"first"}']);
  second = await runOnce(['--args', '{"question":"second","angles":["a","b"]}']);
}, 240_000);

afterAll(() => p?.cleanup());

describe('wf runs / show / events', () => {
  it('wf runs lists recent runs, newest first, as a table and as JSON', async () => {
    const r = await wf(['runs'], p);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+WORKFLOW\s+STATUS\s+STARTED\s+TOOK\s+AGENTS\s+TOKENS$/);
    expect(lines.findIndex((l) => l.startsWith(second))).toBeLessThan(
      lines.findIndex((l) => l.startsWith(first)),
    );
    const doc = json(await wf(['runs', '--json'], p)) as {
      ok: boolean;
      runs: Record<string, unknown>[];
      total: number;
    };
    expect(doc.ok).toBe(true);
    expect(doc.total).toBeGreaterThanOrEqual(2);
    expect(doc.runs.find((x) => x.runId === second)).toMatchObject({
      workflow: 'angles-demo',
      status: 'completed',
      active: false,
      agents: 3,
    });
  });

  it('wf show gives summary, phases, agents and cost; --json has the full result', async () => {
    const r = await wf(['show', first], p);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`run ${first}`);
    expect(r.stdout).toMatch(/status\s+completed/);
    expect(r.stdout).toMatch(/cost\s+5 agents started, 5 completed/);
    expect(r.stdout).toMatch(/^phases\n {2}angles .*4 agents\n {2}synthesis .*1 agent$/m);
    expect(r.stdout).toMatch(/task-5\s+synthesis\s+synthesis\s+completed/);
    const doc = json(await wf(['show', first, '--json'], p)) as {
      run: { runId: string; status: string; cost: { agentsStarted: number } };
      result: { synthesis: string; angles: number };
      phases: { name: string; agents: number }[];
      agents: { taskId: string; outcome: string; tokens: { total: number } }[];
      eventCount: number;
    };
    expect(doc.run).toMatchObject({
      runId: first,
      status: 'completed',
      cost: { agentsStarted: 5 },
    });
    expect(doc.result.angles).toBe(4);
    expect(doc.phases.map((x) => [x.name, x.agents])).toEqual([
      ['angles', 4],
      ['synthesis', 1],
    ]);
    expect(doc.agents).toHaveLength(5);
    expect(doc.agents.every((a) => a.outcome === 'completed' && a.tokens.total > 0)).toBe(true);
    expect(doc.eventCount).toBeGreaterThan(10);
  });

  it('wf events prints the log; --json is JSON Lines with monotonic seq', async () => {
    const r = await wf(['events', first], p);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(
      /^\s+1\s+\+0ms\s+workflow-started\s+\{"workflow":"angles-demo"/,
    );
    const j = await wf(['events', first, '--json'], p);
    const events = j.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; type: string });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.type).toBe('workflow-completed');
    const after = await wf(['events', first, '--json', '--after', String(events.length - 2)], p);
    expect(after.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('wf events --follow streams a live run and ends when the run ends', async () => {
    const run = startWf(['run', 'angles.workflow.json', '--delay-ms', '1500'], p);
    const runDone = collect(run);
    // The plain progress names the run as soon as the engine has begun it.
    const text = await waitForOutput(run, 'stderr', (t) => /started \(run (run-[\w-]+)\)/.test(t));
    const id = /started \(run (run-[\w-]+)\)/.exec(text)?.[1];
    expect(id).toBeDefined();
    const follow = await wf(
      ['events', id as string, '--follow', '--json', '--interval-ms', '50'],
      p,
    );
    expect(follow.code).toBe(0);
    const types = follow.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types[0]).toBe('workflow-started');
    expect(types.at(-1)).toBe('workflow-completed');
    expect((await runDone).code).toBe(0);
  });

  it('unknown run ids exit 3 with a hint, on every run verb', async () => {
    for (const verb of [
      ['show'],
      ['events'],
      ['report'],
      ['delete-run'],
      ['save', 'x', 'new-name'],
      ['resume'],
    ]) {
      const args =
        verb[0] === 'save' ? ['save', 'run-nope', 'new-name'] : [verb[0] as string, 'run-nope'];
      const r = await wf(args, p);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr).toContain('WF_CLI_RUN_NOT_FOUND');
      expect(r.stderr).toContain('wf runs');
    }
  });
});

describe('wf report', () => {
  it('writes a self-contained HTML timeline with one bar per agent', async () => {
    const r = await wf(['report', first, '--out', 'first.html', '--json'], p);
    expect(r.code).toBe(0);
    const doc = json(r) as { path: string; bytes: number };
    expect(doc.path).toBe(join(p.dir, 'first.html'));
    const html = readFileSync(doc.path, 'utf8');
    expect(Buffer.byteLength(html)).toBe(doc.bytes);
    expect(html.match(/class="bar o-completed/g)).toHaveLength(5);
    expect(html).toContain('angles-demo');
    expect(html).not.toMatch(/<script|https?:/);
    const d = await wf(['report', second], p);
    expect(d.code).toBe(0);
    expect(existsSync(join(p.dir, `${second}.report.html`))).toBe(true);
    // `last` names the most recently started run.
    const last = json(await wf(['report', 'last', '--out', 'last.html', '--json'], p));
    const newest = (json(await wf(['runs', '--json'], p)) as { runs: { runId: string }[] }).runs[0]
      ?.runId;
    expect(last.runId).toBe(newest);
  });

  it('refuses an unwritable --out path with exit 2', async () => {
    const r = await wf(['report', first, '--out', 'no/such/dir/x.html'], p);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot write the report to no\/such\/dir\/x\.html/);
  });
});

describe('wf save and wf list', () => {
  it('saves a run as a catalog capsule, refuses to overwrite, replaces on --replace, and runs it', async () => {
    const s = await wf(['save', first, 'my-angles', '--json'], p);
    expect(s.code).toBe(0);
    const doc = json(s) as { path: string; name: string; scope: string };
    expect(doc).toMatchObject({ ok: true, name: 'my-angles', scope: 'project', fromRunId: first });
    const saved = JSON.parse(readFileSync(doc.path, 'utf8')) as {
      manifest: { name: string };
      provenance: { fromRunId: string };
    };
    expect(saved.manifest.name).toBe('my-angles');
    expect(saved.provenance.fromRunId).toBe(first);

    const again = await wf(['save', first, 'my-angles'], p);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('WF_CLI_NAME_TAKEN');
    expect((await wf(['save', second, 'my-angles', '--replace'], p)).code).toBe(0);
    expect((await wf(['save', first, 'Bad_Name'], p)).code).toBe(2);

    const ran = await wf(
      ['run', 'my-angles', '--args', '{"question":"saved"}', '--delay-ms', '0', '--json'],
      p,
    );
    expect(ran.code).toBe(0);
    expect(json(ran)).toMatchObject({ status: 'completed', workflow: 'my-angles' });
  });

  it('wf list shows scope, trust and validity; an invalid capsule is listed with its error', async () => {
    const catalog = join(p.dir, '.dsh', 'workflows');
    writeFileSync(join(catalog, 'broken-one.workflow.json'), '{"format":"dsh.workflow"}');
    const r = await wf(['list'], p);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+SCOPE\s+TRUST\s+STATE\s+DESCRIPTION$/m);
    expect(r.stdout).toMatch(
      /^my-angles\s+project\s+capability-generated\s+ok\s+Looks at a question/m,
    );
    expect(r.stdout).toMatch(/^broken-one\s+project\s+capability-generated\s+INVALID\s+\S/m);
    const doc = json(await wf(['list', '--json'], p)) as {
      workflows: { name: string; valid: boolean; error?: string; scope: string }[];
    };
    const broken = doc.workflows.find((w) => w.name === 'broken-one');
    expect(broken).toMatchObject({ valid: false, scope: 'project' });
    expect(broken?.error).toBeTruthy();
    const bad = await wf(['run', 'broken-one'], p);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('WF_CLI_WORKFLOW_INVALID');
  });
});

describe('corrupt runs, delete-run and prune', () => {
  it('a corrupt run directory gets exit 5 and a message naming the run; runs still lists the others', async () => {
    const victim = await runOnce();
    writeFileSync(
      join(p.dir, '.dsh', 'workflow-runs', victim, 'run.json'),
      '{"format":"wf.run","vers',
    );
    const r = await wf(['show', victim], p);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`WF_CLI_RUN_CORRUPT: run ${victim}`);
    expect(r.stderr).toContain('delete-run --force');
    const rep = await wf(['report', victim, '--json'], p);
    expect(rep.code).toBe(5);
    expect(json(rep)).toMatchObject({ ok: false, error: { code: 'WF_CLI_RUN_CORRUPT' } });
    const list = await wf(['runs', '--json', '--all'], p);
    expect(list.code).toBe(0);
    const runs = (json(list) as { runs: { runId: string; status: string }[] }).runs;
    expect(runs.find((x) => x.runId === victim)?.status).toBe('unreadable');
    expect(runs.find((x) => x.runId === first)?.status).toBe('completed');
    const del = await wf(['delete-run', victim, '--force', '--json'], p);
    expect(del.code).toBe(0);
  });

  it('an active run cannot be deleted, not even with --force (exit 4)', async () => {
    const run = startWf(['run', 'angles.workflow.json', '--delay-ms', '8000'], p);
    const runDone = collect(run);
    const text = await waitForOutput(run, 'stderr', (t) => /started \(run (run-[\w-]+)\)/.test(t));
    const id = /started \(run (run-[\w-]+)\)/.exec(text)?.[1] as string;
    for (const args of [
      ['delete-run', id],
      ['delete-run', id, '--force'],
    ]) {
      const r = await wf(args, p);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('WF_CLI_RUN_ACTIVE');
    }
    run.kill('SIGINT');
    expect((await runDone).code).toBe(130);
    const after = await wf(['delete-run', id, '--json'], p);
    expect(after.code).toBe(0);
    expect(json(after)).toMatchObject({ ok: true, deleted: id });
    expect((await wf(['show', id], p)).code).toBe(3);
  });

  it('prune keeps the newest ended runs; --dry-run deletes nothing', async () => {
    const before = (json(await wf(['runs', '--json', '--all'], p)) as { total: number }).total;
    const dry = json(await wf(['prune', '--keep', '1', '--dry-run', '--json'], p)) as {
      pruned: string[];
      dryRun: boolean;
    };
    expect(dry.dryRun).toBe(true);
    expect(dry.pruned.length).toBe(before - 1);
    expect((json(await wf(['runs', '--json', '--all'], p)) as { total: number }).total).toBe(
      before,
    );
    const real = await wf(['prune', '--keep', '1'], p);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(new RegExp(`^pruned ${before - 1} runs`));
    expect((json(await wf(['runs', '--json', '--all'], p)) as { total: number }).total).toBe(1);
    expect((await wf(['prune', '--older-than', 'soon'], p)).code).toBe(2);
  });
});
