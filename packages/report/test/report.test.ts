import { describe, expect, it } from 'vitest';
import { renderRunReport } from '../src/render.js';
import { foldRunEvents } from '../src/run-model.js';
import { syntheticEvents } from './fixtures/run-events.js';

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(2)>',
  "'><svg onload=alert(3)>",
  '</style><iframe src="https://evil.example/"></iframe>',
  '<!-- --><meta http-equiv="refresh" content="0;url=https://evil.example/">',
  '\u001b[31mred\u0007',
];

const PAGE_TAGS = new Set(
  'html head meta title style body header h1 h2 span p code dl div dt dd section svg path details summary table thead tbody tr th td pre ul li footer'.split(
    ' ',
  ),
);
const PAGE_ATTRS = new Set(
  'lang charset http-equiv content name class title style data-task-id data-phase-id aria-hidden viewbox preserveaspectratio role aria-label d'.split(
    ' ',
  ),
);

function fanOut(n: number) {
  return syntheticEvents({
    workflow: 'fan-out-and-synthesize',
    phases: [
      { name: 'angles', start: 5, end: 5 + n * 10 + 400 },
      { name: 'synthesis', start: n * 10 + 410, end: n * 10 + 900 },
    ],
    agents: [
      ...Array.from({ length: n }, (_, i) => ({
        name: `angle-${i + 1}`,
        phase: 'angles',
        start: 10 + i * 10,
        end: 10 + i * 10 + 300 + (i % 7) * 13,
        status: i % 17 === 3 ? ('failed' as const) : ('completed' as const),
        tokens: 200 + i,
      })),
      {
        name: 'synthesis',
        phase: 'synthesis',
        kind: 'synthesis',
        start: n * 10 + 420,
        end: n * 10 + 880,
      },
    ],
    end: n * 10 + 950,
    result: { synthesis: 'merged answer', findings: [{ angle: 'scope', text: 'ok' }] },
  });
}

describe('foldRunEvents', () => {
  it('builds phases, one span per agent, tokens and peak concurrency', () => {
    const events = syntheticEvents({
      phases: [{ name: 'p', start: 0, end: 100 }],
      agents: [
        { name: 'a', phase: 'p', start: 0, end: 50, tokens: 10 },
        { name: 'b', phase: 'p', start: 10, end: 60, tokens: 20 },
        { name: 'c', phase: 'p', start: 20, end: 30, status: 'failed', tokens: 0 },
        { name: 'd', phase: 'p', start: 70, end: 90, tokens: 5 },
      ],
      end: 100,
    });
    const model = foldRunEvents(events);
    expect(model.status).toBe('completed');
    expect(model.agents.map((a) => [a.name, a.outcome])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'failed'],
      ['d', 'completed'],
    ]);
    expect(model.peakConcurrency).toBe(3);
    expect(model.tokens.total).toBe(35);
    expect(model.phases).toHaveLength(1);
    expect(model.agents[2]?.error?.code).toBe('WF_TEST_FAILED');
    // The step chart returns to zero once everything has ended.
    expect(model.concurrency.at(-1)?.active).toBe(0);
  });

  it('closes agents still open when the run stops, and skips malformed lines', () => {
    const events: unknown[] = syntheticEvents({
      agents: [{ name: 'slow', start: 0 }],
      end: 500,
      status: 'stopped',
    });
    events.push(null, { type: 7 }, 'garbage', { seq: Number.NaN, type: 'agent-started' });
    const model = foldRunEvents(events);
    expect(model.status).toBe('stopped');
    expect(model.agents[0]?.outcome).toBe('stopped');
    expect(model.agents[0]?.endedAt).toBe(model.endedAt);
    expect(model.skippedEvents).toBe(4);
  });

  it('a continued run: a child that ended in an earlier attempt keeps its outcome and tokens', () => {
    const ev = (seq: number, type: string, data: Record<string, unknown>) => ({
      seq,
      runId: 'r',
      type,
      time: 1000 + seq,
      data,
    });
    const usage = { usage: { inputTokens: 10, outputTokens: 5 } };
    const model = foldRunEvents([
      ev(1, 'workflow-started', { workflow: 'w' }),
      ev(2, 'agent-started', { taskId: 'task-1', name: 'a' }),
      ev(3, 'agent-completed', { taskId: 'task-1', status: 'completed', ...usage }),
      ev(4, 'agent-started', { taskId: 'task-2', name: 'b' }),
      // the worker died; the next attempt replays task-1 and reruns task-2
      ev(5, 'workflow-started', { workflow: 'w' }),
      ev(6, 'cache-hit', { taskId: 'task-1', status: 'completed', ...usage }),
      ev(7, 'cache-hit', { taskId: 'task-3', status: 'completed' }),
      ev(8, 'agent-started', { taskId: 'task-2', name: 'b' }),
      ev(9, 'agent-completed', { taskId: 'task-2', status: 'completed' }),
    ]);
    expect(model.agents.map((a) => [a.taskId, a.outcome])).toEqual([
      ['task-1', 'completed'],
      ['task-2', 'completed'],
      ['task-3', 'cached'],
    ]);
    expect(model.tokens.total).toBe(15);
  });

  it('orders by seq even when the lines arrive shuffled', () => {
    const events = syntheticEvents({ agents: [{ name: 'x', start: 0, end: 10 }], end: 20 });
    const model = foldRunEvents([...events].reverse());
    expect(model.agents[0]?.outcome).toBe('completed');
    expect(model.status).toBe('completed');
  });
});

describe('renderRunReport', () => {
  it('draws exactly one bar per agent for a 100-agent run', () => {
    const events = fanOut(99);
    const html = renderRunReport({ run: { runId: 'run-100', status: 'completed' }, events });
    const bars = [...html.matchAll(/class="bar o-(\w+)[^"]*" data-task-id="([^"]+)"/g)];
    expect(bars).toHaveLength(100);
    expect(new Set(bars.map((m) => m[2])).size).toBe(100);
    expect(bars.filter((m) => m[1] === 'failed')).toHaveLength(6);
    expect(html).toContain('k-synthesis');
    expect(html).toContain('merged answer');
  });

  it('is self-contained: a CSP forbidding scripts and fetches, no external reference', () => {
    const html = renderRunReport({ run: { runId: 'r' }, events: fanOut(5) });
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;/,
    );
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import|https?:/i);
  });

  it('escapes every untrusted string: names, result, logs, errors, ids', () => {
    const evil = HOSTILE.join(' ');
    const events = syntheticEvents({
      runId: `run-${evil}`,
      workflow: evil,
      phases: [{ name: evil, start: 0, end: 10 }],
      agents: HOSTILE.map((name, i) => ({ name, phase: evil, start: i, end: i + 5 })),
      logs: [{ at: 3, message: evil }],
      end: 20,
      result: { summary: evil, nested: { [evil]: evil } },
    });
    const html = renderRunReport({
      run: { runId: evil, workflow: evil, status: evil, error: { code: evil, message: evil } },
      events,
    });
    expect(html).not.toMatch(/\u001b|\u0007/);
    // Only the renderer's own tags exist, and no attribute outside the renderer's own set: with
    // every quoted attribute value removed, what is left are the tags and attribute names.
    const skeleton = html.replace(/="[^"]*"/g, '=""');
    const tags = new Set(
      [...skeleton.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map((m) => m[1]?.toLowerCase()),
    );
    expect([...tags].filter((t) => !PAGE_TAGS.has(t ?? ''))).toEqual([]);
    const attrs = new Set(
      [...skeleton.matchAll(/\s([a-zA-Z-]+)=""/g)].map((m) => m[1]?.toLowerCase()),
    );
    expect([...attrs].filter((a) => !PAGE_ATTRS.has(a ?? ''))).toEqual([]);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // The status is not a known one: its class is neutral, its text escaped.
    expect(html).toContain('class="status s-unknown"');
    // Exactly the page's own elements: one <style>, one <title>.
    expect(html.match(/<style>/g)).toHaveLength(1);
    expect(html.match(/<title>/g)).toHaveLength(1);
  });

  it('survives hostile numbers and shapes without throwing', () => {
    const html = renderRunReport({
      run: { runId: 5, startedAt: 'yesterday', cost: { tokenUsage: 'lots' }, result: undefined },
      events: [
        {
          seq: 1,
          type: 'agent-started',
          time: Number.POSITIVE_INFINITY,
          data: { taskId: 't', name: {} },
        },
        {
          seq: 2,
          type: 'agent-completed',
          time: -5,
          data: { taskId: 't', usage: { inputTokens: -3 } },
        },
        { seq: 3, type: 'workflow-completed', time: 1e308, data: 'x' },
      ],
    });
    expect(html).toContain('data-task-id="t"');
    expect(html).not.toMatch(/NaN|Infinity/);
  });

  it('labels the token figure real or simulated from the recorded provider', () => {
    const events = fanOut(3);
    const figure = (run: Record<string, unknown>) =>
      /<dt>tokens<\/dt><dd>([^<]*)<\/dd>/.exec(renderRunReport({ run, events }))?.[1];
    expect(figure({ runId: 'sim', provider: 'simulated', simulated: true })).toBe(
      '703 (simulated: none spent)',
    );
    expect(figure({ runId: 'real', provider: 'dsh:spawn', simulated: false })).toBe(
      '703 (real: spent)',
    );
    // an older record that does not say: the number alone, no guess
    expect(figure({ runId: 'old' })).toBe('703');
  });

  it('says so when a run has no agents and no result', () => {
    const html = renderRunReport({ run: { runId: 'empty' }, events: [] });
    expect(html).toContain('No agent ran in this run.');
    expect(html).toContain('No result recorded.');
  });

  it('caps the event log and the result, saying how much was left out', () => {
    const events = fanOut(30);
    const html = renderRunReport(
      { run: { runId: 'r', result: 'x'.repeat(5000) }, events },
      { maxLogRows: 10, maxResultChars: 1000 },
    );
    expect(html).toContain(`${events.length - 10} more events not shown`);
    expect(html).toContain('4000 more characters not shown');
  });
});
