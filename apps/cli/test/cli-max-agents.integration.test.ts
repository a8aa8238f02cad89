// `wf run --max-agents N`: a capsule whose manifest allows 1,000 agents passes `wf check`
// but stopped at the engine's default cap of 100; the user raises the cap for one run, and
// without the flag the run says so before it starts. `wf show` of such a run is a summary per
// phase; `--agents` lists every agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const AGENTS = 150;
let p: cli.Project;
let wideRun: string | undefined;

beforeAll(() => {
  p = cli.tempProject();
  p.file(
    'wide.workflow.json',
    cli.demoCapsule({
      name: 'wide',
      maxAgents: 1000,
      source: `async function run(wf, args) {
  const n = ${AGENTS};
  const out = await wf.parallel(Array.from({ length: n }, (_, i) => () => wf.runAgent({ name: 'a' + i, prompt: 'p', readOnly: true })), { concurrency: 4 });
  return { done: out.filter(Boolean).length };
}`,
    }),
  );
});
afterAll(() => p?.cleanup());

const run = (extra: string[]) =>
  cli.wf(
    [
      'run',
      'wide.workflow.json',
      '--delay-ms',
      '0',
      '--args',
      JSON.stringify({ question: 'q' }),
      ...extra,
    ],
    p,
  );

describe('wf run --max-agents', () => {
  it('without the flag the default cap of 100 holds, and the run warns before it starts', async () => {
    const r = await run(['--no-progress']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'wide: its manifest allows 1000 agents, this run stops at 100 (the default); --max-agents 1000 allows them all',
    );
    expect(r.stderr + r.stdout).toMatch(/maxAgents is 100/);
  }, 120_000);

  it('--max-agents 1000 lets the capsule start every agent it asked for', async () => {
    const r = await run(['--max-agents', '1000', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = cli.json(r) as { result: { done: number }; cost: { agentsStarted: number } };
    expect(doc.result.done).toBe(AGENTS);
    expect(doc.cost.agentsStarted).toBe(AGENTS);
    wideRun = (doc as unknown as { runId: string }).runId;
  }, 120_000);

  it('wf show summarises the large run per phase; --agents lists each agent', async () => {
    expect(wideRun).toBeDefined();
    const short = await cli.wf(['show', String(wideRun)], p);
    expect(short.code, short.stderr).toBe(0);
    expect(short.stdout).toContain(`agents (${AGENTS}, per phase; --agents lists each)`);
    expect(short.stdout).toMatch(new RegExp(`\\(no phase\\)\\s+${AGENTS}\\s+${AGENTS} completed`));
    expect(short.stdout).not.toMatch(/^ {2}task-\d+/m);
    expect(short.stdout.split('\n').length).toBeLessThan(40);
    const full = await cli.wf(['show', String(wideRun), '--agents'], p);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout.match(/^ {2}task-\d+/gm)).toHaveLength(AGENTS);
  }, 60_000);

  it('a bad --max-agents is a usage error naming the flag', async () => {
    const r = await run(['--max-agents', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-agents must be an integer >= 1, got "0"');
  });
});
