/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The report in a real browser: Debian's headless Chromium loads the page with no console error and
// no request, draws one visible bar per agent, executes nothing from hostile run data, and leaves
// a screenshot in artifacts/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderRunReport } from '@wf/report';
import { syntheticEvents } from '../../../packages/report/test/fixtures/run-events.js';
import { artifactPath, type Browser, launchChromium } from './helpers/chromium.js';

let browser: Browser;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wf-report-'));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

function hundredAgents() {
  const agents = Array.from({ length: 99 }, (_, i) => ({
    name: `angle ${String(i + 1).padStart(3, '0')} with a fairly long descriptive name`,
    phase: i < 60 ? 'explore' : 'verify',
    start: 20 + (i % 60) * 25 + (i >= 60 ? 2400 : 0),
    end: 20 + (i % 60) * 25 + (i >= 60 ? 2400 : 0) + 500 + ((i * 37) % 400),
    status:
      i % 13 === 5
        ? ('failed' as const)
        : i % 29 === 7
          ? ('stopped' as const)
          : ('completed' as const),
    tokens: 800 + ((i * 97) % 900),
  }));
  return syntheticEvents({
    workflow: 'parallel-investigation',
    phases: [
      { name: 'explore', start: 10, end: 2380 },
      { name: 'verify', start: 2390, end: 4300 },
      { name: 'synthesis', start: 4310, end: 5200 },
    ],
    agents: [
      ...agents,
      {
        name: 'synthesis',
        phase: 'synthesis',
        kind: 'synthesis',
        start: 4320,
        end: 5150,
        tokens: 4000,
      },
    ],
    end: 5210,
    result: { synthesis: 'Three findings survived verification.', findings: [], degraded: true },
  });
}

describe('the run report in headless Chromium', () => {
  it('loads a 100-agent run with no console errors, no network, one visible bar per agent', async () => {
    const events = hundredAgents();
    const file = join(dir, 'hundred.html');
    writeFileSync(
      file,
      renderRunReport({ run: { runId: 'run-hundred', status: 'completed' }, events }),
    );
    const w = await browser.open(file);
    expect(w.consoleErrors).toEqual([]);
    expect(w.pageErrors).toEqual([]);
    expect(w.requests).toEqual([]);
    const bars = await w.page.$$eval('.bar', (els) =>
      els.map((el) => {
        const r = el.getBoundingClientRect();
        return {
          id: el.getAttribute('data-task-id'),
          width: r.width,
          height: r.height,
          left: r.left,
        };
      }),
    );
    expect(bars).toHaveLength(100);
    expect(new Set(bars.map((b) => b.id)).size).toBe(100);
    for (const bar of bars) {
      expect(bar.width).toBeGreaterThan(1);
      expect(bar.height).toBeGreaterThan(5);
    }
    // Later agents start further right: the timeline is drawn to scale.
    const first = bars.find((b) => b.id === 'task-1');
    const late = bars.find((b) => b.id === 'task-61');
    expect(late?.left).toBeGreaterThan((first?.left ?? 0) + 300);
    expect(await w.page.locator('.band').count()).toBe(3);
    // Rows stay readable at 100 agents: at least 14 px each.
    const rowHeights = await w.page.$$eval('.lanes .row:not(.phase-row)', (els) =>
      els.map((el) => el.getBoundingClientRect().height),
    );
    expect(Math.min(...rowHeights)).toBeGreaterThanOrEqual(14);
    await w.page.screenshot({ path: artifactPath('report-100-agents.png'), fullPage: true });
    await w.page.close();
  });

  it('renders hostile run data as text and runs none of it', async () => {
    const hostile = [
      '<script>alert("name")</script>',
      '"><img src=x onerror=alert("attr")>',
      '<style>body{display:none}</style>',
      '<a href="https://evil.example/">x</a>',
    ];
    const phase = hostile[1] as string;
    const events = syntheticEvents({
      workflow: hostile[0] as string,
      phases: [{ name: phase, start: 0, end: 50 }],
      agents: hostile.map((name, i) => ({
        name,
        phase,
        start: i * 5,
        end: i * 5 + 20,
      })),
      logs: [{ at: 2, message: hostile.join('') }],
      end: 60,
      result: { summary: hostile.join('\n') },
    });
    const file = join(dir, 'hostile.html');
    writeFileSync(file, renderRunReport({ run: { runId: 'run-hostile' }, events }));
    const w = await browser.open(file);
    expect(w.dialogs).toEqual([]);
    expect(w.requests).toEqual([]);
    expect(w.pageErrors).toEqual([]);
    const counts = await w.page.evaluate(() => ({
      scripts: document.querySelectorAll('script').length,
      imgs: document.querySelectorAll('img').length,
      anchors: document.querySelectorAll('a').length,
      styles: document.querySelectorAll('style').length,
      handlers: [...document.querySelectorAll('*')].filter((el) =>
        [...el.attributes].some((a) => a.name.startsWith('on')),
      ).length,
    }));
    expect(counts).toEqual({ scripts: 0, imgs: 0, anchors: 0, styles: 1, handlers: 0 });
    expect(await w.page.locator('body').isVisible()).toBe(true);
    const labels = await w.page.$$eval('.lanes .row .label', (els) =>
      els.map((el) => el.textContent ?? ''),
    );
    expect(labels.some((l) => l.includes('<script>alert("name")</script>'))).toBe(true);
    expect(await w.page.locator('.prose').textContent()).toBe(hostile.join('\n'));
    await w.page.close();
  });
});
