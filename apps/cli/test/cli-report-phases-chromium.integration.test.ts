/// <reference lib="dom" />
// The report's phase table on a real recorded run (the real bin, engine, sandbox, catalog and run
// store) whose phase `round` is entered three times and which nests a catalog workflow that has
// its own `round` phase, read in Debian's headless Chromium. Each phase instance is one row with
// only its own agents and tokens; the expected numbers come from the agents' names in the event
// log, not from the report's attribution, and the rows add up to the run's real totals.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactPath, type Browser, launchChromium } from './helpers/chromium.js';
import { demoCapsule, json, type Project, tempProject, wf } from './helpers/wf-cli.js';

const OUTER = `async function run(wf, args) {
  for (let i = 0; i < 3; i += 1) {
    await wf.phase('round', () =>
      wf.parallel([1, 2].map((k) => () => wf.runAgent({ name: 'outer-' + i + '-' + k, prompt: 'look ' + i + k, readOnly: true }))),
    );
  }
  const inner = await wf.phase('nest', () => wf.workflow('inner-check', {}));
  return { inner: inner ? inner.status : null };
}
`;

const INNER = `async function run(wf, args) {
  return wf.phase('round', () => wf.runAgent({ name: 'inner-1', prompt: 'check it', readOnly: true }));
}
`;

let p: Project;
let browser: Browser;

beforeAll(async () => {
  p = tempProject();
  const outer = demoCapsule({ name: 'rounds', source: OUTER });
  outer.manifest.phases = ['round', 'nest'];
  outer.inputs = { description: 'nothing', examples: [{}] } as never;
  outer.manifest.inputSchema = { type: 'object', properties: {} } as never;
  p.file('rounds.workflow.json', outer);
  const inner = demoCapsule({ name: 'inner-check', source: INNER });
  inner.manifest.phases = ['round'];
  inner.manifest.inputSchema = { type: 'object', properties: {} } as never;
  inner.inputs = { description: 'nothing', examples: [{}] } as never;
  mkdirSync(join(p.dir, '.dsh', 'workflows'), { recursive: true });
  p.file(join('.dsh', 'workflows', 'inner-check.workflow.json'), inner);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  p?.cleanup();
});

interface Row {
  name: string;
  indent: number;
  agents: number;
  failed: number;
  tokens: number;
}

describe('the report phase table in headless Chromium', () => {
  it('a repeated phase and a nested run: one row per instance, no double counting', async () => {
    const ran = await wf(
      ['run', 'rounds.workflow.json', '--delay-ms', '20', '--seed', '4', '--json'],
      p,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const doc = json(ran) as {
      runId: string;
      result: { inner: string };
      cost: { agentsStarted: number; tokenUsage: { totalTokens: number } };
    };
    expect(doc.result.inner).toBe('completed');
    expect(doc.cost.agentsStarted).toBe(7);

    // Ground truth from the recorded events: tokens per agent name.
    const events = readFileSync(
      join(p.dir, '.dsh', 'workflow-runs', doc.runId, 'events.jsonl'),
      'utf8',
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    const names = new Map<string, string>();
    const tokensOf = new Map<string, number>();
    for (const e of events) {
      if (e.type === 'agent-started') names.set(String(e.data.taskId), String(e.data.name));
      if (e.type === 'agent-completed') {
        const usage = e.data.usage as { totalTokens: number };
        tokensOf.set(names.get(String(e.data.taskId)) ?? '?', usage.totalTokens);
      }
    }
    const sum = (prefix: string) =>
      [...tokensOf].filter(([n]) => n.startsWith(prefix)).reduce((s, [, t]) => s + t, 0);
    const total = doc.cost.tokenUsage.totalTokens;
    expect([...tokensOf.values()].reduce((a, b) => a + b, 0)).toBe(total);

    const rep = await wf(['report', doc.runId, '--out', 'rounds.html', '--json'], p);
    expect(rep.code).toBe(0);
    const w = await browser.open(String(json(rep).path));
    expect(w.consoleErrors).toEqual([]);
    expect(w.pageErrors).toEqual([]);
    expect(w.requests).toEqual([]);
    const rows: Row[] = await w.page.$$eval('.phases tbody tr', (trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
        return {
          name: cells[0] ?? '',
          indent: Number.parseInt((tr.querySelector('td') as HTMLElement).style.paddingLeft, 10),
          agents: Number(cells[2]),
          failed: Number(cells[3]),
          tokens: Number((cells[4] ?? '').replaceAll(',', '')),
        };
      }),
    );
    expect(rows.map((r) => [r.name, r.agents, r.failed, r.tokens])).toEqual([
      ['round', 2, 0, sum('outer-0-')],
      ['round', 2, 0, sum('outer-1-')],
      ['round', 2, 0, sum('outer-2-')],
      ['nest', 0, 0, 0],
      ['round', 1, 0, sum('inner-')],
    ]);
    // The nested workflow's round sits inside `nest`; the outer rounds are top level.
    expect(rows.map((r) => r.indent)).toEqual([8, 8, 8, 8, 22]);
    expect(rows.reduce((s, r) => s + r.agents, 0)).toBe(7);
    expect(rows.reduce((s, r) => s + r.tokens, 0)).toBe(total);
    expect(await w.page.locator('.stats').textContent()).toContain(
      `tokens${total.toLocaleString('en-US')}`,
    );
    await w.page.screenshot({
      path: artifactPath('report-phases-repeated-nested.png'),
      fullPage: true,
    });
    await w.page.close();

    // `wf show --json` agrees with the page, row for row.
    const shown = json(await wf(['show', doc.runId, '--json'], p)) as {
      phases: { id: string; name: string; agents: number; tokens: number }[];
    };
    expect(shown.phases.map((ph) => [ph.name, ph.agents, ph.tokens])).toEqual(
      rows.map((r) => [r.name, r.agents, r.tokens]),
    );
    expect(new Set(shown.phases.map((ph) => ph.id)).size).toBe(5);
  }, 180_000);
});
