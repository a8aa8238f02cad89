// The journal stores each answer once: a task result's `finalText` and `text` are the
// same string, so only `text` is written and `finalText` is put back on read. Runs recorded before
// that change (test/fixtures/runs-v1-journal, recorded by the earlier wf) resume unchanged: no
// migration step, and the replayed guest sees the very objects the original run saw.
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from './helpers/wf-cli.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'runs-v1-journal');
const OLD_RUN = 'run-31a7820d-d92d-4a0a-bc6f-d26be954b0c5';

let p: cli.Project;
let newRun: { runId: string; result: unknown } | undefined;
const runsDir = () => join(p.dir, '.dsh', 'workflow-runs');
const journalOf = (runId: string) =>
  readFileSync(join(runsDir(), runId, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n');

beforeAll(() => {
  p = cli.tempProject();
  cpSync(join(FIXTURE, OLD_RUN), join(runsDir(), OLD_RUN), { recursive: true });
  cpSync(join(FIXTURE, 'answers.workflow.js'), join(p.dir, 'answers.workflow.js'));
});
afterAll(() => p?.cleanup());

describe('journal without duplicate answers', () => {
  it('the fixture really is the old format: every answer stored twice', () => {
    const lines = journalOf(OLD_RUN);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.match(/simulated task result/g)).toHaveLength(2);
  });

  it('a new run journals each answer once; the guest still sees finalText === text', async () => {
    const r = await cli.wf(
      ['run', 'answers.workflow.js', '--delay-ms', '0', '--seed', '7', '--json'],
      p,
    );
    const doc = cli.json(r) as { runId: string; result: { same: boolean; keys: string }[] };
    expect(r.code, r.stderr).toBe(0);
    expect(doc.result.map((x) => x.same)).toEqual([true, true, true]);
    expect(doc.result[0]?.keys).toMatch(/,finalText,text,/);
    newRun = doc;
    const lines = journalOf(doc.runId);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain('"finalText"');
      expect(line.match(/simulated task result/g)).toHaveLength(1);
    }
  });

  it('an old-format run resumes without migration: same answers, same shapes, stored once', async () => {
    const original = JSON.parse(readFileSync(join(runsDir(), OLD_RUN, 'result.json'), 'utf8')) as {
      result: unknown;
    };
    const r = await cli.wf(['resume', OLD_RUN, '--delay-ms', '0', '--json'], p);
    expect(r.code, r.stderr).toBe(0);
    const doc = cli.json(r) as { runId: string; status: string; result: unknown };
    expect(doc.status).toBe('completed');
    // The replayed answers came from the old journal (no child re-ran): identical result,
    // including the key order the guest observed.
    expect(JSON.stringify(doc.result)).toBe(JSON.stringify(original.result));
    const resumed = journalOf(doc.runId);
    expect(resumed).toHaveLength(3);
    for (const line of resumed) expect(line).not.toContain('"finalText"');
    // the old run is left exactly as it was
    expect(journalOf(OLD_RUN).join('\n')).toContain('"finalText"');
    expect(readdirSync(runsDir()).length).toBeGreaterThanOrEqual(3);
  });

  it('a new-format run resumes with finalText restored where the guest saw it', async () => {
    expect(newRun).toBeDefined();
    const r = await cli.wf(['resume', String(newRun?.runId), '--delay-ms', '0', '--json'], p);
    expect(r.code, r.stderr).toBe(0);
    const doc = cli.json(r) as { result: { same: boolean; keys: string }[] };
    expect(JSON.stringify(doc.result)).toBe(JSON.stringify(newRun?.result));
  });
});
