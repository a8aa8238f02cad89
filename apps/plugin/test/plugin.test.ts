// The DSH plugin's surfaces, applied to a host-shaped context: real @wf engine, sandbox, catalog
// and run store on disk, real rc.8 `Session`s for the parent and the children; only the DSH
// subagent transport is scripted. The real host itself is exercised by tests/dsh-e2e.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '@deepseek-ai/dsh-session';
import { openRunStore } from '@wf/catalog-fs';
import type { HostAgent, HostJobs } from '@wf/dsh-adapter';
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pluginDefault, {
  apply as publicApply,
  Config,
  inject,
  name,
  parseConfig,
} from '../src/index.js';
import type { ToolDefinition, PluginHost } from '../src/plugin/host-context.js';
import { PLUGIN_ERROR_CODES } from '../src/plugin/errors.js';
import { promptSection } from '../src/plugin/prompt.js';
import { splitArgs } from '../src/plugin/command.js';
import { RECENT_RUNS } from '../src/plugin/runs-index.js';
import { createTestHost, store } from './helpers/host.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-plugin-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function agentFor(session: Session, extra: Partial<HostAgent> = {}): HostAgent {
  return { id: String(session.id), session, ...extra };
}

interface Harness {
  readonly ctx: PluginHost;
  readonly tools: Map<string, ToolDefinition>;
  readonly sections: { name: string; order: number; text: string }[];
  readonly commands: Map<
    string,
    (inv: { agent: HostAgent; rawInput: string; signal: AbortSignal }) => Promise<unknown>
  >;
  readonly parent: HostAgent;
  readonly parentSession: Session;
  readonly starts: { label?: string | undefined; toolFilter?: unknown; agentOptions?: unknown }[];
  readonly approvals: string[];
  readonly jobs: { label: string; done: Promise<unknown> }[];
  unload(): Promise<void>;
  /** Children wait on this before answering. */
  gate: Promise<void>;
}

function harness(
  options: {
    config?: Record<string, unknown>;
    approval?: string;
    sandboxMode?: string;
    questions?: (q: unknown) => Promise<unknown>;
    withJobs?: boolean;
  } = {},
): Harness {
  const starts: Harness['starts'] = [];
  const approvals: string[] = [];
  const jobs: Harness['jobs'] = [];
  const services: Record<string, unknown> = {
    approval: options.approval
      ? {
          async request(r: { reason?: string }) {
            approvals.push(r.reason ?? '');
            return options.approval;
          },
        }
      : undefined,
    sandboxPolicy: {
      resolve: () => ({ mode: options.sandboxMode ?? 'workspace-write', workspaceRoot: dir }),
    },
    userQuestions: options.questions ? { ask: options.questions } : undefined,
    jobs: options.withJobs
      ? ({
          start(spec) {
            const hooks = spec.run();
            jobs.push({ label: spec.label, done: hooks.done });
            return `workflow-${jobs.length}`;
          },
        } satisfies HostJobs)
      : undefined,
  };
  const host = createTestHost({
    cwd: dir,
    config: options.config,
    services,
    rejectDuplicateTools: true,
    onStart: (request) =>
      starts.push({
        label: request.label,
        toolFilter: request.toolFilter,
        agentOptions: request.agentOptions,
      }),
    gate: () => h.gate,
  });
  const h: Harness = { ...host, starts, approvals, jobs, gate: Promise.resolve() };
  return h;
}

const exec = (h: Harness, signal = new AbortController().signal) => ({ agent: h.parent, signal });

function tool(h: Harness, toolName: string): ToolDefinition {
  const t = h.tools.get(toolName);
  if (!t) throw new Error(`tool ${toolName} is not registered`);
  return t;
}

const FAN = `async function run(wf, args) {
  const r = await wf.parallel(args.names.map((n) => () => wf.runAgent({ name: n, phase: 'fan', prompt: 'go ' + n, readOnly: true })));
  return r.map((x) => (x ? x.finalText : null));
}`;
const MANIFEST = {
  name: 'unit-fan',
  description: 'unit fan-out',
  phases: ['fan'],
  readOnly: true,
  maxAgents: 4,
  maxConcurrency: 4,
  patterns: ['fan-out-and-synthesize'],
};

/** The inline fan-out through the run tool, waiting for its reply. */
const runFan = async (h: Harness, names: string[], wait?: false) =>
  (await h.tools
    .get('run_workflow')
    ?.execute(
      { source: FAN, manifest: MANIFEST, args: { names }, ...(wait === false ? { wait } : {}) },
      exec(h),
    )) as {
    runId: string;
    status: string;
    result: unknown;
  };

/**
 * Asserts the harness gate really holds the run: once a child has started, the run is still
 * running a moment later. Without this, a gate that let children answer at once would leave the
 * tests below green while they no longer exercise a live run (stop, abort, unload, delete).
 */
async function expectHeld(h: Harness, runId: string): Promise<void> {
  await expect.poll(() => h.starts.length, { timeout: 10_000 }).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 150));
  const shown = (await tool(h, 'workflow_manage').execute(
    { action: 'show', target: runId },
    exec(h),
  )) as { status: string };
  expect(shown.status).toBe('running');
}

const nativeEvents = (s: Session) =>
  s.events
    .filter((e) => e.type.startsWith('tool-workflow/'))
    .map((e) => [e.type.slice(14), e.data]);

describe('plugin module shape (what DSH imports)', () => {
  it('exports name, inject, Config and apply, also as the default export', () => {
    expect(name).toBe('wf-workflows');
    expect(inject).toEqual(['tools', 'subagents', 'systemPrompt', 'commands']);
    expect(typeof publicApply).toBe('function');
    expect(pluginDefault).toMatchObject({ name, inject, Config });
    // Config is a Standard Schema: DSH validates the patch row's config with it
    const std = (Config as unknown as { '~standard': { validate(v: unknown): unknown } })[
      '~standard'
    ];
    expect(std.validate(undefined)).toMatchObject({
      value: { approvalMode: 'generated-and-local', runToolName: 'run_workflow' },
    });
    expect(std.validate({ approvalMode: 'sometimes' })).toMatchObject({
      issues: [expect.objectContaining({})],
    });
  });

  it('config: defaults leave maxTokens unset; bad values are named by path', () => {
    const ok = parseConfig(undefined);
    expect(ok.ok && ok.config).toMatchObject({ tiers: {}, wallMs: 1_800_000, provider: 'spawn' });
    const bad = parseConfig({
      approvalMode: 'sometimes',
      tiers: { fast: { maxTokens: 0 } },
      runToolName: 'Run!',
      extra: 1,
    });
    expect(bad.ok).toBe(false);
    const paths = bad.ok ? [] : bad.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(['approvalMode', 'tiers.fast.maxTokens', 'runToolName']),
    );
  });

  it('the prompt section names the configured tools and never uses {{ (strict interpolation)', () => {
    const parsed = parseConfig({ runToolName: 'wf_run' });
    const text = parsed.ok ? promptSection(parsed.config) : '';
    expect(text).toContain('`wf_run`');
    expect(text).not.toContain('{{');
  });

  it('registers three tools, the command and the prompt section after the host workflow guidance', () => {
    const h = harness({ config: { listToolName: 'wf_list' } });
    expect([...h.tools.keys()]).toEqual(['wf_list', 'run_workflow', 'workflow_manage']);
    expect([...h.commands.keys()]).toEqual(['workflow']);
    expect(h.sections).toEqual([
      expect.objectContaining({ name: 'tool:wf-workflows', order: 116 }),
    ]);
    for (const t of h.tools.values()) expect(t.output.schema).toBeDefined();
  });

  it('every error code the plugin produces has a page in docs/errors', () => {
    for (const code of Object.keys(PLUGIN_ERROR_CODES)) {
      const page = readFileSync(
        new URL(`../../../docs/errors/${code}.md`, import.meta.url),
        'utf8',
      );
      expect(page).toContain(code);
      expect(page).toMatch(/Mitigation/);
    }
  });
});

describe('run_workflow', () => {
  it('validates arguments itself (DSH raw register does not) and names the field', async () => {
    const h = harness();
    const run = h.tools.get('run_workflow');
    await expect(run?.execute({ nam: 'x' }, exec(h))).rejects.toThrow(/nam/);
    await expect(run?.execute({ name: 'a', source: 'b' }, exec(h))).rejects.toThrow(
      /exactly one of `name`/,
    );
    await expect(
      run?.execute({ source: FAN, manifest: { ...MANIFEST, maxAgents: 0 } }, exec(h)),
    ).rejects.toThrow(/maxAgents/);
    expect(h.starts).toEqual([]);
  });

  it('runs an inline fan-out on the DSH transport, with native events and a run on disk', async () => {
    const h = harness({ approval: 'allowed-once' });
    const reply = (await h.tools
      .get('run_workflow')
      ?.execute(
        { source: FAN, manifest: MANIFEST, args: { names: ['a', 'b', 'c'] } },
        exec(h),
      )) as { runId: string; status: string; result: unknown };
    expect(reply).toMatchObject({ status: 'completed', result: ['done: a', 'done: b', 'done: c'] });
    expect(h.approvals).toEqual([expect.stringContaining('unit-fan')]);
    expect(h.starts.map((s) => s.toolFilter)).toEqual([
      { allow: ['read', 'glob', 'grep'] },
      { allow: ['read', 'glob', 'grep'] },
      { allow: ['read', 'glob', 'grep'] },
    ]);
    expect(h.starts.every((s) => s.agentOptions === undefined)).toBe(true);
    const ev = nativeEvents(h.parentSession);
    expect(ev[0]).toEqual(['run-start', { runId: reply.runId, name: 'unit-fan' }]);
    expect(ev.at(-1)).toEqual(['run-end', { runId: reply.runId, stopReason: 'completed' }]);
    expect(ev.filter(([t]) => t === 'agent-start')).toHaveLength(3);
    expect(ev.filter(([t]) => t === 'agent-end')).toHaveLength(3);
    const snap = JSON.parse(
      readFileSync(join(dir, '.dsh', 'workflow-runs', reply.runId, 'run.json'), 'utf8'),
    );
    expect(snap).toMatchObject({ status: 'completed', workflow: 'unit-fan' });
  });

  it('gates by sandbox mode: full access never asks; a rejected approval denies with no child', async () => {
    const full = harness({
      approval: 'rejected',
      sandboxMode: 'danger-full-access',
      config: { approvalMode: 'always' },
    });
    const r1 = await runFan(full, ['x']);
    expect(r1.status).toBe('completed');
    expect(full.approvals).toEqual([]);
    const gated = harness({ approval: 'rejected' });
    const r2 = await runFan(gated, ['x']);
    expect(r2.status).toBe('denied');
    expect(gated.starts).toEqual([]);
    expect(nativeEvents(gated.parentSession).map(([t]) => t)).toEqual(['run-start', 'run-end']);
  });

  it('wait:false is owned by DSH jobs and survives the launching call signal', async () => {
    const h = harness({ approval: 'allowed-once', withJobs: true });
    let release!: () => void;
    h.gate = new Promise<void>((r) => {
      release = r;
    });
    const call = new AbortController();
    const reply = (await h.tools
      .get('run_workflow')
      ?.execute(
        { source: FAN, manifest: MANIFEST, args: { names: ['bg'] }, wait: false },
        exec(h, call.signal),
      )) as { runId: string; status: string; jobId: string };
    expect(reply).toMatchObject({ status: 'running', jobId: 'workflow-1' });
    await expectHeld(h, reply.runId);
    call.abort(); // the step that launched it is over
    await expectHeld(h, reply.runId);
    release();
    await expect(h.jobs[0]?.done).resolves.toMatchObject({ status: 'completed' });
    const shown = (await h.tools
      .get('workflow_manage')
      ?.execute({ action: 'show', target: reply.runId, wait: true }, exec(h))) as {
      status: string;
    };
    expect(shown.status).toBe('completed');
  });

  it('unload stops every active run and awaits it; no new runs afterwards', async () => {
    const h = harness({ approval: 'allowed-once' });
    h.gate = new Promise<void>(() => {}); // children never answer on their own
    const reply = await runFan(h, ['stuck'], false);
    await expectHeld(h, reply.runId);
    await h.unload();
    const ev = nativeEvents(h.parentSession);
    expect(ev.at(-1)).toEqual(['run-end', { runId: reply.runId, stopReason: 'cancelled' }]);
    await expect(
      h.tools
        .get('run_workflow')
        ?.execute({ source: FAN, manifest: MANIFEST, args: { names: ['x'] } }, exec(h)),
    ).rejects.toThrow(/WF_PLUGIN_UNLOADING/);
  });

  it('refuses calls from child agents (workflows nest through wf.workflow only)', async () => {
    const h = harness();
    const child = store.create(undefined, {
      meta: { cwd: dir, origin: 'subagent', parentSession: h.parentSession.id },
    });
    await expect(
      h.tools
        .get('run_workflow')
        ?.execute(
          { name: 'parallel-investigation' },
          { agent: agentFor(child), signal: new AbortController().signal },
        ),
    ).rejects.toThrow(/not available to child agents/);
  });

  it('trusted-local files are confirmed through userQuestions first, refused where nothing answers', async () => {
    const wfDir = join(dir, '.dsh', 'workflows');
    mkdirSync(wfDir, { recursive: true });
    const marker = join(dir, 'imported.txt');
    writeFileSync(
      join(wfDir, 'local-x.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'imported');\nexport const manifest = { name: 'local-x', description: 'x', phases: ['run'], readOnly: true, maxAgents: 1, maxConcurrency: 1, patterns: ['fan-out-and-synthesize'] };\nexport async function run() { return 'local ran'; }\n`,
    );
    const none = harness();
    await expect(
      tool(none, 'run_workflow').execute({ name: 'local-x' }, exec(none)),
    ).rejects.toThrow(/WF_PLUGIN_CONFIRMATION_REQUIRED.*No option skips this confirmation/);
    const declined = harness({
      questions: async () => ({
        answers: [{ id: 'workflow-trusted-local', selected: ['Cancel'] }],
      }),
    });
    await expect(
      tool(declined, 'run_workflow').execute({ name: 'local-x' }, exec(declined)),
    ).rejects.toThrow(/not confirmed/);
    // invariant 10: never imported without confirmation
    expect(() => readFileSync(marker)).toThrow();
    const yes = harness({
      approval: 'allowed-once',
      questions: async () => ({ answers: [{ id: 'workflow-trusted-local', selected: ['Run'] }] }),
    });
    const r = (await tool(yes, 'run_workflow').execute({ name: 'local-x' }, exec(yes))) as {
      status: string;
      result: unknown;
    };
    expect(r).toMatchObject({ status: 'completed', result: 'local ran' });
  });

  it('a run store that cannot open is a visible error, not runs kept in memory', async () => {
    // a regular file where the run directory belongs: openRunStore refuses it
    mkdirSync(join(dir, '.dsh'), { recursive: true });
    writeFileSync(join(dir, '.dsh', 'workflow-runs'), 'not a directory');
    const h = harness({ approval: 'allowed-once' });
    await expect(runFan(h, ['a'])).rejects.toThrow(
      /WF_PLUGIN_RUN_STORE_UNAVAILABLE: .*workflow-runs.*cannot be opened/,
    );
    expect(h.starts).toEqual([]);
    await expect(tool(h, 'workflow_manage').execute({ action: 'list' }, exec(h))).rejects.toThrow(
      /WF_PLUGIN_RUN_STORE_UNAVAILABLE/,
    );
    // listing workflows needs no run store
    expect(await tool(h, 'workflow_list').execute({}, exec(h))).toMatchObject({
      entries: expect.arrayContaining([
        expect.objectContaining({ name: 'parallel-investigation' }),
      ]),
    });
    // fixed on disk, the next call opens the store (no restart)
    rmSync(join(dir, '.dsh', 'workflow-runs'));
    expect(await runFan(h, ['a'])).toMatchObject({ status: 'completed' });
  });
});

describe('/workflow command', () => {
  it('splits words, a trailing JSON value and flags', () => {
    expect(splitArgs('alpha "two words" --wait {"a": [1, 2]}')).toMatchObject({
      words: ['alpha', 'two words'],
      json: { a: [1, 2] },
      flags: new Set(['wait']),
    });
    expect(splitArgs('--keep 3')).toMatchObject({ words: [], keep: 3 });
  });

  it('help, list, runs, show and stop answer as command results', async () => {
    const h = harness({ approval: 'allowed-once' });
    const cmd = h.commands.get('workflow');
    const say = (rawInput: string) =>
      cmd?.({ agent: h.parent, rawInput, signal: new AbortController().signal }) as Promise<{
        kind: string;
        text: string;
      }>;
    expect(await say('')).toMatchObject({
      kind: 'success',
      text: expect.stringContaining('Usage: /workflow'),
    });
    expect((await say('list')).text).toContain('parallel-investigation');
    expect(await say('stop')).toMatchObject({
      kind: 'error',
      text: expect.stringContaining('no active run'),
    });
    const started = await say('fan-out-and-synthesize {"request": "q"} --wait');
    expect(started).toMatchObject({
      kind: 'success',
      text: expect.stringMatching(/^Workflow "fan-out-and-synthesize" completed in /),
    });
    expect((await say('runs')).text).toMatch(/^run-\S+ {2}fan-out-and-synthesize {2}completed/);
    expect((await say('show')).text).toMatch(/^Workflow "fan-out-and-synthesize" completed in /);
  });
});

describe('/workflow command approval', () => {
  const typed = (h: Harness) => (rawInput: string) =>
    h.commands.get('workflow')?.({
      agent: h.parent,
      rawInput,
      signal: new AbortController().signal,
    }) as Promise<{ kind: string; text: string }>;

  it('approvalMode always asks even for a typed run (the command grant yields to it); a rejection denies', async () => {
    const asks = harness({ approval: 'rejected' });
    const ran = await typed(asks)('fan-out-and-synthesize {"request": "q"} --wait');
    expect(ran.text).toMatch(/^Workflow "fan-out-and-synthesize" completed/);
    expect(asks.approvals).toEqual([]);

    const always = harness({ approval: 'rejected', config: { approvalMode: 'always' } });
    const denied = await typed(always)('fan-out-and-synthesize {"request": "q"} --wait');
    expect(denied.text).toMatch(/^Workflow "fan-out-and-synthesize" denied/);
    expect(always.approvals).toEqual([expect.stringContaining('fan-out-and-synthesize')]);
    expect(always.starts).toEqual([]);
  });
});

describe('workflow_manage', () => {
  const manage = (h: Harness, args: Record<string, unknown>) =>
    tool(h, 'workflow_manage').execute(args, exec(h)) as Promise<Record<string, unknown>>;

  it('lists, shows and replays events of runs; save, rename, revise and delete saved capsules', async () => {
    const h = harness({ approval: 'allowed-once' });
    const first = await runFan(h, ['a']);
    const listed = (await manage(h, { action: 'list' })).runs as {
      runId: string;
      status: string;
    }[];
    expect(listed[0]).toMatchObject({ runId: first.runId, status: 'completed' });
    expect(await manage(h, { action: 'show', target: first.runId })).toMatchObject({
      result: ['done: a'],
    });
    const events = (await manage(h, { action: 'events', target: first.runId })).events as {
      type: string;
    }[];
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['workflow-started', 'agent-started', 'workflow-completed']),
    );

    expect(
      await manage(h, { action: 'save', target: first.runId, name: 'saved-fan' }),
    ).toMatchObject({ saved: 'saved-fan' });
    const names = (
      (await tool(h, 'workflow_list').execute({}, exec(h))) as {
        entries: { name: string; source: string }[];
      }
    ).entries;
    expect(names).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'saved-fan', source: 'project' })]),
    );
    // a saved capsule runs by name (capability-generated: approval asked again)
    const byName = (await h.tools
      .get('run_workflow')
      ?.execute({ name: 'saved-fan', args: { names: ['n'] } }, exec(h))) as {
      status: string;
      result: unknown;
    };
    expect(byName).toMatchObject({ status: 'completed', result: ['done: n'] });

    expect(
      await manage(h, { action: 'rename', target: 'saved-fan', name: 'renamed-fan' }),
    ).toMatchObject({ to: 'renamed-fan' });
    const revised = FAN.replace('x.finalText : null', 'x.finalText.toUpperCase() : null');
    expect(
      await manage(h, { action: 'revise', target: 'renamed-fan', source: revised }),
    ).toMatchObject({ revised: 'renamed-fan' });
    const after = (await h.tools
      .get('run_workflow')
      ?.execute({ name: 'renamed-fan', args: { names: ['r'] } }, exec(h))) as {
      result: unknown;
    };
    expect(after.result).toEqual(['DONE: R']);
    await expect(manage(h, { action: 'delete', target: 'renamed-fan' })).rejects.toThrow(
      /WF_PLUGIN_AMBIGUOUS/,
    );
    expect(
      await manage(h, { action: 'delete', target: 'renamed-fan', scope: 'project' }),
    ).toMatchObject({
      deleted: 'renamed-fan',
    });
    await expect(tool(h, 'run_workflow').execute({ name: 'renamed-fan' }, exec(h))).rejects.toThrow(
      /renamed-fan/,
    );
  });

  it('rerun and resume-run re-execute a recorded run; a later process still finds it on disk', async () => {
    const h = harness({ approval: 'allowed-once' });
    const first = await runFan(h, ['p', 'q']);
    const rerun = (await manage(h, { action: 'rerun', target: first.runId })) as {
      runId: string;
      status: string;
      result: unknown;
    };
    expect(rerun).toMatchObject({ status: 'completed', result: ['done: p', 'done: q'] });
    expect(rerun.runId).not.toBe(first.runId);
    const launchedBefore = h.starts.length;
    // a fresh plugin instance (a new DSH process) over the same project directory
    const later = harness({ approval: 'allowed-once' });
    (later as { parent: HostAgent }).parent = agentFor(
      store.create(undefined, { meta: { cwd: dir } }),
    );
    const shown = await manage(later, { action: 'show', target: first.runId });
    expect(shown).toMatchObject({ runId: first.runId, status: 'completed' });
    const resumed = (await manage(later, { action: 'resume-run', target: first.runId })) as {
      runId: string;
      status: string;
      result: unknown;
    };
    expect(resumed).toMatchObject({
      status: 'completed',
      result: ['done: p', 'done: q'],
      resumedFrom: { runId: first.runId, at: expect.any(Number) },
    });
    // journal replay answers the recorded children: none is launched again
    expect(later.starts).toEqual([]);
    expect(h.starts.length).toBe(launchedBefore);
    // the run views say where a resumed run came from, in this process and in a later one
    expect(await manage(later, { action: 'show', target: resumed.runId })).toMatchObject({
      resumedFrom: { runId: first.runId },
    });
    const again = harness({ approval: 'allowed-once' });
    (again as { parent: HostAgent }).parent = agentFor(
      store.create(undefined, { meta: { cwd: dir } }),
    );
    const listed = (await manage(again, { action: 'list' })).runs as Record<string, unknown>[];
    expect(listed.find((r) => r.runId === resumed.runId)).toMatchObject({
      resumedFrom: { runId: first.runId, at: expect.stringMatching(/^\d{4}-/) },
    });
    expect(listed.find((r) => r.runId === first.runId)?.resumedFrom).toBeUndefined();
  });

  it('resume-run refuses a run the wf command line recorded with simulated agents', async () => {
    // Recorded into the project's run store as `wf run` does: simulated agents, stopped mid-way.
    const runStore = await openRunStore({ project: dir });
    const engine = createEngine({
      agents: createSimulatedAgents({ delayMs: 60_000 }),
      recorder: runStore,
    });
    const handle = await engine.start({
      workflow: { manifest: MANIFEST, source: FAN },
      args: { names: ['s', 't'] },
      trust: 'capability-generated',
    });
    for await (const e of handle.events) if (e.type === 'agent-started') handle.stop('Ctrl-C');
    expect((await handle.done).status).toBe('stopped');
    await engine.close();
    await runStore.close();

    const h = harness({ approval: 'allowed-once' });
    const listed = (await manage(h, { action: 'list' })).runs as Record<string, unknown>[];
    expect(listed.find((r) => r.runId === handle.runId)).toMatchObject({ simulated: true });
    await expect(manage(h, { action: 'resume-run', target: handle.runId })).rejects.toThrow(
      /WF_ENGINE_RESUME_PROVIDER_MISMATCH.*simulated agents/,
    );
    // refused before launch: no child, no new run in the list
    expect(h.starts).toEqual([]);
    expect((await manage(h, { action: 'list' })).runs).toHaveLength(1);
  });

  it('list reads the newest runs through the run store index; older runs are still found by id and name', async () => {
    // More stored runs than a listing reads (RECENT_RUNS): the reply has the newest ones and says
    // how many there are, and every run stays reachable by id (its run.json alone) or name.
    const runStore = await openRunStore({ project: dir });
    const T0 = 1_800_000_000_000;
    const stored = RECENT_RUNS + 10;
    const idOf = (i: number) => `run-${String(i).padStart(3, '0')}`;
    for (let i = 0; i < stored; i++) {
      await runStore.begin({
        runId: idOf(i),
        workflow: i === 0 ? 'oldest-flow' : 'seeded-flow',
        trust: 'capability-generated',
        manifest: MANIFEST,
        source: FAN,
        args: { names: [] },
        seed: 1,
        startTime: T0 + i * 1000,
        startedAt: T0 + i * 1000,
      });
      await runStore.finish(idOf(i), {
        status: 'completed',
        cost: {
          wallClockDurationMs: 5,
          agentsStarted: 0,
          agentsCompleted: 0,
          cacheHits: 0,
          tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          peakConcurrency: 0,
        },
        endedAt: T0 + i * 1000 + 5,
      });
    }
    await runStore.close();

    const h = harness({ approval: 'allowed-once' });
    const listed = await manage(h, { action: 'list' });
    const runs = listed.runs as { runId: string }[];
    expect(runs).toHaveLength(RECENT_RUNS);
    expect(runs[0]?.runId).toBe(idOf(stored - 1));
    expect(runs.at(-1)?.runId).toBe(idOf(stored - RECENT_RUNS));
    expect(listed).toMatchObject({ total: stored, note: expect.stringContaining(`of ${stored}`) });
    expect(await manage(h, { action: 'show', target: 'last' })).toMatchObject({
      runId: idOf(stored - 1),
    });
    // Outside the listing window: by id, and by a workflow name only the oldest run has.
    expect(await manage(h, { action: 'show', target: idOf(0) })).toMatchObject({
      runId: idOf(0),
      status: 'completed',
    });
    expect(await manage(h, { action: 'show', target: 'oldest-flow' })).toMatchObject({
      runId: idOf(0),
    });
    await expect(manage(h, { action: 'show', target: 'seeded-flow' })).rejects.toThrow(
      /WF_PLUGIN_AMBIGUOUS/,
    );
  });

  it('never deletes an active run; pause/resume/stop act on the active one', async () => {
    const h = harness({ approval: 'allowed-once', withJobs: true });
    h.gate = new Promise<void>(() => {});
    const bg = await runFan(h, ['hold'], false);
    await expectHeld(h, bg.runId);
    await expect(manage(h, { action: 'delete', target: bg.runId })).rejects.toThrow(
      /WF_PLUGIN_RUN_ACTIVE/,
    );
    expect(await manage(h, { action: 'pause' })).toMatchObject({
      runId: bg.runId,
      action: 'pause',
    });
    expect(await manage(h, { action: 'resume' })).toMatchObject({
      runId: bg.runId,
      action: 'resume',
    });
    expect(await manage(h, { action: 'stop' })).toMatchObject({ runId: bg.runId, action: 'stop' });
    expect(await manage(h, { action: 'show', target: bg.runId, wait: true })).toMatchObject({
      status: 'stopped',
    });
    expect(await manage(h, { action: 'delete', target: bg.runId })).toMatchObject({
      deletedRun: bg.runId,
    });
    expect(await manage(h, { action: 'prune', keep: 0 })).toMatchObject({
      pruned: expect.any(Array),
    });
  });
});
