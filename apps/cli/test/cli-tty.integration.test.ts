// The live progress on a real pseudo-terminal: `wf run` inside a detached tmux session (its own
// server socket, no user config), screens captured while it runs and after it exits. tmux missing
// is a failure, not a skip: .ci/run installs it.
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCapsule, type Project, tempProject, WF_BIN } from './helpers/wf-cli.js';

const SOCKET = `wf-tty-${process.pid}`;
let p: Project;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', '-u', ...args], {
    encoding: 'utf8',
  });
}

function screen(session: string): string {
  return tmux('capture-pane', '-p', '-t', session);
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

beforeAll(async () => {
  const found = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      'tmux is required for the TTY progress test: apt-get install -y tmux (.ci/run does this)',
    );
  }
  p = tempProject();
  p.file('angles.workflow.json', demoCapsule());
}, 240_000);

afterAll(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  p?.cleanup();
});

async function until(
  session: string,
  predicate: (s: string) => boolean,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = screen(session);
    if (predicate(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out; the screen was:\n${last}`);
}

describe('live progress on a TTY', () => {
  it('redraws a compact tree while the run is live and leaves the final tree, the result and the run id', async () => {
    const session = 'live';
    const command = [
      `cd ${shellQuote(p.dir)}`,
      `export LANG=C.UTF-8 HOME=${shellQuote(p.env.HOME as string)} DSH_HOME=${shellQuote(p.home)}`,
      `${shellQuote(process.execPath)} ${shellQuote(WF_BIN)} run angles.workflow.json --args '{"question":"tty?","angles":["scope","evidence","risk","recommendation","history","cost"]}' --delay-ms 500 --seed 5`,
      'echo WF_EXIT=$?',
      'sleep 120',
    ].join('; ');
    tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', command);

    // Mid-run: a frame with running agents under the open phase.
    const live = await until(session, (s) => /● \w+\s+running/.test(s));
    expect(live).toMatch(/^angles-demo · running · [\d.]+m?s · run-[\w-]+ · simulated agents$/m);
    expect(live).toMatch(/^└─ angles · .*agents: \d+ running/m);

    const final = await until(session, (s) => s.includes('WF_EXIT='));
    const lines = final.split('\n').map((l) => l.trimEnd());
    expect(lines).toContain('WF_EXIT=0');
    // Redrawn in place: one header, one footer, no stale frames above them.
    expect(lines.filter((l) => l.startsWith('angles-demo · '))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('agents '))).toHaveLength(1);
    const header = lines.findIndex((l) => l.startsWith('angles-demo · '));
    expect(lines[header]).toMatch(
      /^angles-demo · completed · [\d.]+m?s · (run-[\w-]+) · simulated agents$/,
    );
    expect(lines.slice(header + 1, header + 10)).toEqual([
      expect.stringMatching(/^├─ angles done · [\d.]+m?s · 6 agents: 6 done$/),
      expect.stringMatching(/^│ {2}├─ ✔ scope +[\d.]+m?s · \d+ tok$/),
      expect.stringMatching(/^│ {2}├─ ✔ evidence /),
      expect.stringMatching(/^│ {2}├─ ✔ risk /),
      expect.stringMatching(/^│ {2}├─ ✔ recommendation /),
      expect.stringMatching(/^│ {2}├─ ✔ history /),
      expect.stringMatching(/^│ {2}└─ ✔ cost /),
      expect.stringMatching(/^└─ synthesis done · [\d.]+m?s · 1 agent: 1 done$/),
      expect.stringMatching(/^ {3}└─ ✔ synthesis /),
    ]);
    expect(lines[header + 10]).toMatch(
      /^agents 7: 0 running, 7 done, 0 failed · tokens [\d,]+ \(in [\d,]+, out [\d,]+\) · peak 4$/,
    );
    expect(final).toContain('simulated agents: no model is called');
    expect(final).toMatch(/^Result:$/m);
    const id = /^angles-demo · completed · .* · (run-[\w-]+) · /m.exec(final)?.[1];
    expect(final).toContain(`run ${id} completed in `);
    // The cursor was shown again and no escape sequence leaked as text.
    expect(final).not.toMatch(/\[\?25|\[\d+A|\[J/);
  }, 60_000);

  it('Ctrl-C on the terminal stops the run: the note sits above one final frame, exit 130', async () => {
    const session = 'interrupt';
    const command = [
      `cd ${shellQuote(p.dir)}`,
      `export LANG=C.UTF-8 HOME=${shellQuote(p.env.HOME as string)} DSH_HOME=${shellQuote(p.home)}`,
      `${shellQuote(process.execPath)} ${shellQuote(WF_BIN)} run angles.workflow.json --delay-ms 5000`,
      'echo WF_EXIT=$?',
      'sleep 120',
    ].join('; ');
    tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', command);
    await until(session, (s) => (s.match(/● \w+\s+running/g) ?? []).length >= 4);
    tmux('send-keys', '-t', session, 'C-c');
    const final = await until(session, (s) => s.includes('WF_EXIT='));
    const lines = final.split('\n').map((l) => l.trimEnd());
    expect(lines).toContain('WF_EXIT=130');
    const note = lines.findIndex((l) => l.startsWith('wf: Ctrl-C: stopping run run-'));
    const header = lines.findIndex((l) => l.startsWith('angles-demo · '));
    expect(note).toBeGreaterThan(-1);
    expect(header).toBeGreaterThan(note);
    expect(lines.filter((l) => l.startsWith('angles-demo · '))).toHaveLength(1);
    expect(lines[header]).toMatch(/^angles-demo · stopped · /);
    expect(final).toMatch(/■ scope +stopped /);
    expect(final).toMatch(/^agents 4: 0 running, 0 done, 0 failed, 4 stopped/m);
    expect(final).toMatch(/^run run-[\w-]+ stopped in /m);
  }, 60_000);
});
