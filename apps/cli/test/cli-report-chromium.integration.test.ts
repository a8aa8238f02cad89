/// <reference lib="dom" />
// `wf report` on a real recorded 100-agent run (the real bin, engine, sandbox and run store),
// opened in Debian's headless Chromium: no console error, no request, one visible bar per agent,
// the phases drawn as bands, and a screenshot left in artifacts/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactPath, type Browser, launchChromium } from './helpers/chromium.js';
import { demoCapsule, json, type Project, tempProject, wf } from './helpers/wf-cli.js';

const HOSTILE = `async function run(wf, args) {
  const r = await wf.runAgent({ name: '<img src=x onerror=alert(1)>\\u001b]0;owned\\u0007', prompt: '</script><script>alert(2)</script>', readOnly: true });
  wf.log('<iframe src="https://evil.example/"></iframe>\\u001b[2J');
  return { summary: '<script>alert(3)</script>\\u001b[2J\\u001b]52;c;cHduZWQ=\\u0007', text: r ? r.finalText : null };
}
`;

let p: Project;
let browser: Browser;

const HUNDRED = `async function run(wf, args) {
  const ids = [];
  for (let i = 0; i < args.count; i += 1) ids.push('reviewer-' + String(i + 1).padStart(3, '0'));
  const found = await wf.phase('review', () =>
    wf.parallel(ids.map((name) => () => wf.runAgent({ name, prompt: 'Review part ' + name, readOnly: true }))),
  );
  const verified = await wf.phase('verify', () =>
    wf.parallel(found.slice(0, 10).map((f, i) => () => wf.runAgent({ name: 'verify-' + (i + 1), prompt: 'Verify ' + (f ? f.taskId : 'none'), readOnly: true }))),
  );
  const merged = await wf.phase('synthesis', () => wf.synthesize({ inputs: verified.map((v) => (v ? v.finalText : null)), rubric: 'merge' }));
  return { synthesis: merged.text, reviewed: found.length };
}
`;

beforeAll(async () => {
  p = tempProject();
  const capsule = demoCapsule({ name: 'hundred-agents', source: HUNDRED, maxAgents: 100 });
  capsule.manifest.phases = ['review', 'verify', 'synthesis'];
  capsule.manifest.maxConcurrency = 8;
  capsule.manifest.inputSchema = {
    type: 'object',
    properties: { count: { type: 'integer' } },
    required: ['count'],
    additionalProperties: false,
  } as never;
  capsule.inputs = { description: 'how many reviewers', examples: [{ count: 89 }] } as never;
  p.file('hundred.workflow.json', capsule);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  p?.cleanup();
});

describe('wf report in headless Chromium', () => {
  it('shows a recorded 100-agent run: one bar per agent, no errors, no network', async () => {
    const ran = await wf(
      ['run', 'hundred.workflow.json', '--delay-ms', '30', '--seed', '11', '--json'],
      p,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const runId = String(json(ran).runId);
    expect(json(ran)).toMatchObject({ cost: { agentsStarted: 100 } });
    const rep = await wf(['report', runId, '--out', 'hundred.html', '--json'], p);
    expect(rep.code).toBe(0);
    const w = await browser.open(String(json(rep).path));
    expect(w.consoleErrors).toEqual([]);
    expect(w.pageErrors).toEqual([]);
    expect(w.requests).toEqual([]);
    const bars = await w.page.$$eval('.bar', (els) =>
      els.map((el) => ({
        id: el.getAttribute('data-task-id'),
        cls: el.className,
        width: el.getBoundingClientRect().width,
      })),
    );
    expect(bars).toHaveLength(100);
    expect(new Set(bars.map((b) => b.id)).size).toBe(100);
    expect(bars.every((b) => b.width >= 2 && b.cls.includes('o-completed'))).toBe(true);
    expect(bars.filter((b) => b.cls.includes('k-synthesis'))).toHaveLength(1);
    expect(await w.page.locator('.band').count()).toBe(3);
    expect(await w.page.locator('.stats').textContent()).toContain('agents100');
    expect(await w.page.locator('.prose').textContent()).toContain('synthesis');
    await w.page.screenshot({ path: artifactPath('report-cli-100-agents.png'), fullPage: true });
    await w.page.close();
  }, 120_000);

  it('a hostile workflow cannot inject into the terminal or the report', async () => {
    p.file('hostile.workflow.js', HOSTILE);
    const ran = await wf(['run', 'hostile.workflow.js', '--delay-ms', '0'], p);
    expect(ran.code, ran.stderr).toBe(0);
    // Terminal: the result, names and logs arrive with every control character escaped.
    for (const out of [ran.stdout, ran.stderr])
      expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(ran.stdout).toContain('<script>alert(3)</script>\\u001b[2J\\u001b]52;c;cHduZWQ=\\u0007');
    const shown = await wf(['show', 'last'], p);
    expect(shown.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    const rep = await wf(['report', 'last', '--out', 'hostile.html', '--json'], p);
    const w = await browser.open(String(json(rep).path));
    expect(w.dialogs).toEqual([]);
    expect(w.requests).toEqual([]);
    expect(w.pageErrors).toEqual([]);
    const found = await w.page.evaluate(() => ({
      active: document.querySelectorAll('script, img, iframe, object, embed, a, link').length,
      label: document.querySelector('.lanes .row:not(.phase-row) .label')?.textContent ?? '',
      prose: document.querySelector('.prose')?.textContent ?? '',
    }));
    expect(found.active).toBe(0);
    expect(found.label).toContain('<img src=x onerror=alert(1)>');
    expect(found.prose).toContain('<script>alert(3)</script>');
    await w.page.close();
  }, 60_000);
});
