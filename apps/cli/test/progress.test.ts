import { createEngine, createSimulatedAgents, type HostWorkflowApi } from '@wf/engine';
import { describe, expect, it } from 'vitest';
import { renderProgressFrame } from '../src/progress/frame.js';
import { createProgressView } from '../src/progress/view.js';
import { foldRunEvents } from '@wf/report';
import { syntheticEvents } from '../../../packages/report/test/fixtures/run-events.js';

const T0 = 1_760_000_000_000;

function midRun(n: number) {
  // Half the agents finished, a quarter running, one failed; the second phase still open.
  return syntheticEvents({
    t0: T0,
    workflow: 'fan-out-and-synthesize',
    phases: [
      { name: 'angles', start: 0, end: 900 },
      { name: 'verify', start: 1000 },
    ],
    agents: [
      ...Array.from({ length: n }, (_, i) => ({
        name: `angle-${i}`,
        phase: 'angles',
        start: i,
        end: 500 + i,
        tokens: 100,
      })),
      ...Array.from({ length: n }, (_, i) => ({
        name: `check-${i}`,
        phase: 'verify',
        start: 1000 + i,
        ...(i % 2 === 0 ? { end: 1500 + i, tokens: 50 } : {}),
        ...(i === 2 ? { status: 'failed' as const } : {}),
      })),
    ],
  });
}

class Screen {
  readonly chunks: string[] = [];
  constructor(
    readonly isTTY: boolean,
    readonly columns = 100,
    readonly rows = 30,
  ) {}
  write(chunk: string) {
    this.chunks.push(chunk);
    return true;
  }
  get text() {
    return this.chunks.join('');
  }
}

describe('renderProgressFrame', () => {
  it('draws a tree of phases and agents with counts, tokens and elapsed', () => {
    const model = foldRunEvents(midRun(3));
    const lines = renderProgressFrame(model, {
      now: T0 + 2000,
      width: 120,
      maxLines: 40,
      unicode: true,
    });
    expect(lines[0]).toBe(`fan-out-and-synthesize · running · 2s · run-synthetic`);
    expect(lines[1]).toBe('├─ angles done · 900ms · 3 agents: 3 done');
    expect(lines[2]).toMatch(/^│ {2}├─ ✔ angle-0 +500ms · 100 tok$/);
    expect(lines).toContain('└─ verify · 1s · 3 agents: 1 running, 1 done, 1 failed');
    expect(lines.some((l) => /[├└]─ ● check-1 +running 999ms$/.test(l))).toBe(true);
    expect(
      lines.some((l) => /✖ check-2 +failed 500ms · 50 tok · WF_TEST_FAILED boom/.test(l)),
    ).toBe(true);
    expect(lines.at(-1)).toBe(
      'agents 6: 1 running, 4 done, 1 failed · tokens 400 (in 301, out 99) · peak 3',
    );
  });

  it('always fits the terminal: 100 agents on 20 rows and 60 columns', () => {
    const model = foldRunEvents(midRun(50));
    for (const [rows, cols] of [
      [20, 60],
      [8, 40],
      [3, 20],
    ] as const) {
      const lines = renderProgressFrame(model, {
        now: T0 + 2000,
        width: cols,
        maxLines: rows,
        unicode: true,
      });
      expect(lines.length).toBeLessThanOrEqual(Math.max(rows, 3));
      for (const line of lines) expect([...line].length).toBeLessThan(Math.max(cols, 21));
    }
    const lines = renderProgressFrame(model, {
      now: T0 + 2000,
      width: 100,
      maxLines: 20,
      unicode: true,
    });
    // The finished phase collapses to one line; the open one shows its running agents.
    expect(lines[1]).toBe('├─ angles done · 900ms · 50 agents: 50 done');
    expect(lines.join('\n')).toMatch(/… \d+ more/);
  });

  it('neutralises control characters in untrusted names', () => {
    const events = syntheticEvents({
      workflow: 'x\u001b[2J\u001b[Hy',
      agents: [{ name: 'evil\u001b]0;pwned\u0007\r\nname', start: 0 }],
    });
    const lines = renderProgressFrame(foldRunEvents(events), {
      now: T0 + 10,
      width: 80,
      maxLines: 10,
    });
    const text = lines.join('\n');
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text).toContain('evil\\u001b]0;pwned\\u0007');
    expect(lines[0]).toContain('x\\u001b[2J\\u001b[Hy');
  });

  it('uses plain ASCII when the terminal is not UTF-8', () => {
    const lines = renderProgressFrame(foldRunEvents(midRun(2)), {
      now: T0 + 2000,
      width: 80,
      maxLines: 20,
    });
    expect(lines.join('\n')).toMatch(/^[\x20-\x7e\n]*$/);
    expect(lines[1]).toMatch(/^\|- angles done \| 900ms/);
  });
});

/** Invariant 13's set less the line feed: what no view may write but its own cursor controls. */
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;
/** The TTY view's own controls: cursor up, clear below, hide and show the cursor, carriage return. */
const VIEW_CONTROLS = /\r|\u001b\[\d+A|\u001b\[J|\u001b\[\?25[lh]/g;
const HOSTILE =
  '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2066\u200f\u061c\u2028\u0090q\u001b\\\nFORGED';

/** A run whose every guest-named field, log and error is hostile, with a warning and a failure. */
function hostileRun() {
  const events = syntheticEvents({
    t0: T0,
    workflow: `wf${HOSTILE}`,
    phases: [{ name: `phase${HOSTILE}`, start: 0 }],
    agents: [
      { name: `agent${HOSTILE}`, phase: `phase${HOSTILE}`, start: 0, end: 40 },
      { name: `failing${HOSTILE}`, phase: `phase${HOSTILE}`, start: 1, end: 50, status: 'failed' },
    ],
    logs: [{ at: 20, message: `log${HOSTILE}` }],
    end: 70,
    status: 'failed',
  }) as { seq: number; type: string; time: number; data?: Record<string, unknown> }[];
  const failed = events.find((e) => e.data?.status === 'failed');
  if (failed?.data) failed.data.error = { code: `CODE${HOSTILE}`, message: `message${HOSTILE}` };
  const end = events.at(-1);
  if (end?.data) end.data.error = { code: `END${HOSTILE}`, message: `end${HOSTILE}` };
  const warning = {
    seq: 0,
    type: 'limit-warning',
    time: T0 + 30,
    data: { limit: 'tokenBudget', message: `warn${HOSTILE}` },
  };
  return [
    ...events.filter((e) => e.time <= T0 + 30),
    warning,
    ...events.filter((e) => e.time > T0 + 30),
  ];
}

describe('createProgressView', () => {
  it('writes no control of a hostile run but its own cursor moves, on a TTY and off one', async () => {
    for (const tty of [true, false]) {
      const screen = new Screen(tty, 80, 24);
      let now = T0;
      const view = createProgressView({
        out: screen,
        unicode: true,
        now: () => now,
        intervalMs: 1,
      });
      for (const e of hostileRun()) {
        now = e.time;
        view.event(e as never);
        await new Promise((r) => setTimeout(r, 2));
      }
      view.note(`note${HOSTILE}`);
      view.finish();
      const text = screen.text.replace(VIEW_CONTROLS, '');
      expect(text, `tty ${tty}`).not.toMatch(RAW_CONTROL);
      expect(
        text.split('\n').filter((l) => /^\W*FORGED/.test(l)),
        `tty ${tty}`,
      ).toEqual([]);
      // (the frame clips a name to 28 characters, escapes included)
      expect(text).toContain('agent\\u001b]0;pwned\\u0007');
      expect(text).toContain(tty ? 'warn\\u001b]0;pwned' : 'log: log\\u001b]0;pwned');
    }
  });

  it('prints one plain line per meaningful event when not a TTY', () => {
    const screen = new Screen(false);
    const view = createProgressView({ out: screen, now: () => T0 });
    for (const e of syntheticEvents({
      t0: T0,
      agents: [{ name: 'a', start: 0, end: 1500, tokens: 12 }],
      end: 1600,
    }))
      view.event(e);
    view.finish();
    expect(screen.text.split('\n')).toEqual([
      '[    0ms] workflow demo started (run run-synthetic)',
      '[    0ms] agent task-1 a started',
      '[   1.5s] agent task-1 a completed in 1.5s, 12 tokens',
      '[   1.6s] workflow completed',
      '',
    ]);
    expect(screen.text).not.toContain('\u001b');
  });

  it('redraws in place on a TTY and leaves the final frame with the cursor restored', async () => {
    const screen = new Screen(true, 80, 24);
    let now = T0;
    const view = createProgressView({ out: screen, unicode: true, now: () => now, intervalMs: 1 });
    const events = syntheticEvents({
      t0: T0,
      agents: [
        { name: 'a', start: 0, end: 50 },
        { name: 'b', start: 5, end: 60 },
      ],
      end: 70,
    });
    for (const e of events) {
      now = e.time;
      view.event(e);
      await new Promise((r) => setTimeout(r, 3));
    }
    view.finish();
    const text = screen.text;
    expect(text.startsWith('\u001b[?25l')).toBe(true);
    expect(text.endsWith('\n\u001b[?25h')).toBe(true);
    // Each redraw moves back to the top of the previous frame and clears below it.
    expect(text).toMatch(/\r\u001b\[\d+A\u001b\[J/);
    const last = text.slice(text.lastIndexOf('\u001b[J') + 3);
    expect(last).toContain('demo · completed · 70ms');
    expect(last).toContain('agents 2: 0 running, 2 done, 0 failed');
  });

  it('never draws after finish, even with a redraw scheduled before a note (the Ctrl-C path)', async () => {
    const screen = new Screen(true, 80, 24);
    let now = T0;
    const view = createProgressView({ out: screen, unicode: true, now: () => now, intervalMs: 20 });
    const events = syntheticEvents({ t0: T0, agents: [{ name: 'a', start: 0, end: 50 }], end: 70 });
    const [first, ...rest] = events;
    view.event(first!); // first draw
    now += 1;
    view.event(rest[0]!); // within the interval: a redraw is scheduled
    view.note('wf: Ctrl-C: stopping run'); // draws at once while that redraw is still pending
    for (const e of rest.slice(1)) view.event(e);
    view.finish();
    const atFinish = screen.text;
    expect(atFinish.endsWith('\n\u001b[?25h')).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    expect(screen.text).toBe(atFinish);
  });
});

describe('limit warnings in the live view', () => {
  /** A real engine run reaching 80% of its token budget (5 children of 200 tokens, budget 1000). */
  async function budgetRun(feed: (e: never) => void) {
    const agents = createSimulatedAgents({
      respond: () => ({ usage: { inputTokens: 150, outputTokens: 50 } }),
    });
    const engine = createEngine({ agents });
    const handle = await engine.start({
      workflow: {
        manifest: {
          name: 'budgeted',
          description: 'spends its budget',
          phases: ['work'],
          readOnly: false,
          maxAgents: 5,
          maxConcurrency: 1,
          tokenBudget: 1_000,
          patterns: ['loop-until-done'],
        },
        run: async (wf: HostWorkflowApi) => {
          for (let i = 0; i < 5; i += 1)
            await wf.runAgent({ name: `w${i}`, prompt: 'p', maxTokens: 200 });
        },
      },
      trust: 'trusted-local',
    });
    for await (const e of handle.events) feed(e as never);
    expect((await handle.done).status).toBe('completed');
    await engine.close();
  }

  it('prints the engine warning at 80% of the token budget as its own line (plain)', async () => {
    const screen = new Screen(false);
    const view = createProgressView({ out: screen });
    await budgetRun((e) => view.event(e));
    view.finish();
    const lines = screen.text.split('\n');
    const warnings = lines.filter((l) => l.includes('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('warning: token budget: 800 of the run');
    expect(warnings[0]).toContain('1000 tokens spent (80%)');
    // after the 4th child, before the 5th
    const at = lines.indexOf(warnings[0] as string);
    expect(lines.slice(0, at).filter((l) => l.includes(' completed in '))).toHaveLength(4);
  });

  it('keeps the warning above the redrawn frame on a TTY', async () => {
    const screen = new Screen(true, 100, 30);
    const view = createProgressView({ out: screen, unicode: true, intervalMs: 1 });
    await budgetRun((e) => view.event(e));
    view.finish();
    const text = screen.text;
    expect(text).toContain('warning: token budget: 800 of the run');
    // printed once, as a line of its own that the later frames are drawn below
    expect(text.split('warning: token budget').length - 1).toBe(1);
    const after = text.slice(text.indexOf('warning: token budget'));
    expect(after).toContain('budgeted · completed');
  });
});
