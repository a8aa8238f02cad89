// Invariant 13 in DSH: a hostile inline workflow (ESC/OSC/C1/bidi in its names, phases, logs,
// result and error) run through the real plugin, engine and sandbox; everything the plugin hands
// the host to show (tool output, /workflow answers, child labels, the workflow card's events,
// approval reasons, job labels and output, tool errors) reaches it only through the sanitizer.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostJobOutcome, HostJobs } from '@wf/dsh-adapter';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PluginError } from '../src/plugin/errors.js';
import { createTestHost } from './helpers/host.js';

/** What must never reach the host's terminal raw; line feeds and tabs are layout. */
const RAW_CONTROL = /(?![\n\t])[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;
const HOSTILE =
  '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2066\u200f\u061c\u2028\u0090q\u001b\\';

const SOURCE = `async function run(wf, args) {
  const h = ${JSON.stringify(HOSTILE)};
  await wf.phase('phase' + h, async () => {
    await wf.runAgent({ name: 'agent' + h, prompt: 'p', readOnly: true });
  });
  wf.log('log' + h);
  if (args.fail) throw new Error('boom' + h);
  return 'result' + h + '\\nsecond line';
}`;
const MANIFEST = {
  name: 'hostile-inline',
  description: `described${HOSTILE}`,
  phases: ['main'],
  readOnly: true,
  maxAgents: 4,
  maxConcurrency: 2,
  patterns: ['fan-out-and-synthesize'],
};

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-plugin-text-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('text the plugin hands DSH to show', () => {
  it('passes the sanitizer on every path', async () => {
    const shown: { where: string; text: string }[] = [];
    const see = (where: string, text: unknown) => shown.push({ where, text: String(text) });
    const jobs: { done: Promise<HostJobOutcome>; readOutput?: () => string }[] = [];
    const host = createTestHost({
      cwd: dir,
      services: {
        approval: {
          async request(r: { reason?: string }) {
            see('approval reason', r.reason);
            return 'allowed-once';
          },
        },
        sandboxPolicy: { resolve: () => ({ mode: 'workspace-write', workspaceRoot: dir }) },
        jobs: {
          start(spec) {
            see('job label', spec.label);
            const running = spec.run();
            jobs.push({
              done: running.done,
              ...(running.readOutput ? { readOutput: running.readOutput } : {}),
            });
            return `workflow-${jobs.length}`;
          },
        } satisfies HostJobs,
      },
      onStart: (request) => see('child label', request.label),
    });
    const exec = { agent: host.parent, signal: new AbortController().signal };
    const run = host.tools.get('run_workflow');
    const manage = host.tools.get('workflow_manage');
    const command = host.commands.get('workflow');
    if (!run || !manage || !command) throw new Error('the plugin registered no run tool');
    const render = (where: string, tool: typeof run, value: unknown) => {
      for (const block of tool.output.render({}, value)) see(where, block.text);
    };

    const ok = (await run.execute({ source: SOURCE, manifest: MANIFEST }, exec)) as {
      runId: string;
      status: string;
    };
    expect(ok.status).toBe('completed');
    render('run result', run, ok);
    const failed = await run.execute(
      { source: SOURCE, manifest: MANIFEST, args: { fail: true } },
      exec,
    );
    render('run failure', run, failed);
    const background = (await run.execute(
      { source: SOURCE, manifest: MANIFEST, wait: false },
      exec,
    )) as { runId: string };
    const outcome = await jobs[0]?.done;
    see('job detail', outcome?.detail);
    see('job output', outcome?.output);
    see('job read', jobs[0]?.readOutput?.());
    for (const action of ['show', 'events'] as const)
      render(`manage ${action}`, manage, await manage.execute({ action, target: ok.runId }, exec));
    render('manage list', manage, await manage.execute({ action: 'list' }, exec));
    for (const input of [`show ${ok.runId}`, `events ${background.runId}`, 'runs'])
      see(
        `/workflow ${input}`,
        ((await command({ ...exec, rawInput: input })) as { text?: string }).text,
      );
    // A tool error quoting the guest's input: one line, escaped, still a PluginError.
    const refused = await run
      .execute({ source: SOURCE, manifest: { ...MANIFEST, name: `bad${HOSTILE}\nFORGED` } }, exec)
      .catch((e: unknown) => e);
    expect(PluginError.is(refused)).toBe(true);
    see('tool error', (refused as Error).message);
    for (const e of host.parentSession.events)
      if (e.type.startsWith('tool-workflow/')) see(e.type, JSON.stringify(e.data));
    await host.unload();

    const problems = shown.filter(({ text }) => RAW_CONTROL.test(text)).map((s) => s.where);
    expect(problems).toEqual([]);
    expect((refused as Error).message).not.toContain('\n');
    const all = shown.map((s) => s.text).join('\n');
    // Shown as escapes, the text around them kept: the result, the child, its phase, the log, the error.
    for (const text of ['result', 'agent', 'boom', 'phase', 'log'])
      expect(all).toContain(`${text}\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil`);
    expect(shown.filter((s) => s.where === 'child label')).toHaveLength(3);
  }, 60_000);
});
