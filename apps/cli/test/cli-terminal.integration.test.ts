// Invariant 13 on the real bin: a run store, a catalog, an archive and file names seeded with
// hostile text (ESC/CSI/OSC/DCS, C1, bidi controls, line separators, line breaks that would forge
// a line of output), then every verb's output, as text and as --json, checked byte by byte: no
// control character reaches the terminal raw, and no planted line break starts a line of its own.
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { terminalText } from '@wf/bridge/terminal-text';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  demoCapsule,
  json,
  type Project,
  tempProject,
  type WfResult,
  wf,
} from './helpers/wf-cli.js';

/** What must never reach a terminal raw; line feeds and tabs are layout. */
const RAW_CONTROL = /(?![\n\t])[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;
/** A planted line break followed by this must never start a line of output. */
const FORGED = 'FORGED';

/** Hostile text: an OSC title, a screen clear, 8-bit CSI, bidi overrides, separators, a DCS. */
const hostileText = (tag: string) =>
  `${tag}\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2066\u200f\u061c\u2028\u0090q\u001b\\`;
/** The same for a one-line field (a name, an id, a code), with a line break that would forge a line. */
const hostile = (tag: string) => `${hostileText(tag)}\n${FORGED} ${tag}`;

// The guest: hostile phase, agent and log names, a hostile result (its second line is legitimate).
const HOSTILE_RUN = `async function run(wf, args) {
  const h = (tag) => ${JSON.stringify(hostile('TAG')).replaceAll('TAG', '" + tag + "')};
  await wf.phase(h('phase'), async () => {
    await wf.runAgent({ name: h('agent'), prompt: 'p', readOnly: true });
  });
  wf.log(h('log'));
  return 'result\\u001b]52;c;cHduZWQ=\\u0007 \\u202eevil\\u202c\\r\\nRESULT-LINE-2\\u009d0;t\\u009c';
}
`;

// A guest error raised on a line whose source text holds raw controls (the excerpt shows it).
const FAILING_RUN = `async function run(wf, args) {
  await wf.runAgent({ name: 'one', prompt: 'p', readOnly: true });
  throw new Error('boom \\u001b]0;pwned\\u0007 \\u202eevil'); // \u001b[2J\u202e\u0085 raw in the source
}
`;

let p: Project;
const outputs: { what: string; result: WfResult }[] = [];

async function verb(args: readonly string[]): Promise<WfResult> {
  const result = await wf(args, p);
  // Labelled through the sanitizer: a failure message must not paint the terminal either.
  outputs.push({ what: terminalText(`wf ${args.join(' ')}`), result });
  return result;
}

/** Every verb with and without --json (events: JSON Lines). */
async function both(args: readonly string[]): Promise<[WfResult, WfResult]> {
  return [await verb(args), await verb([...args, '--json'])];
}

function runDir(runId: string): string {
  return join(p.dir, '.dsh', 'workflow-runs', runId);
}

/** Rewrites run.json of a run with hostile values in every field a verb prints. */
function plantRunJson(runId: string): void {
  const file = join(runDir(runId), 'run.json');
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  Object.assign(snap, {
    workflow: hostile('workflow'),
    execution: hostile('execution'),
    provider: hostile('provider'),
    simulated: true,
    error: { code: hostile('code'), message: hostile('message') },
    resumedFrom: { runId: hostile('resumed'), at: 0 },
    // Result text is multi-line by nature: no forged line in it.
    resultSummary: hostileText('summary'),
    cost: {
      wallClockDurationMs: hostile('wall'),
      agentsStarted: hostile('started'),
      agentsCompleted: hostile('completed'),
      cacheHits: hostile('hits'),
      peakConcurrency: hostile('peak'),
      tokenUsage: {
        inputTokens: hostile('in'),
        outputTokens: hostile('out'),
        totalTokens: hostile('total'),
      },
    },
  });
  writeFileSync(file, JSON.stringify(snap));
  // A copy whose status and result summary are all there is to show (no result.json).
  const copy = `${runId}-planted`;
  cpSync(runDir(runId), runDir(copy), { recursive: true });
  writeFileSync(
    join(runDir(copy), 'run.json'),
    JSON.stringify({ ...snap, runId: copy, status: hostile('status') }),
  );
  writeFileSync(join(runDir(copy), 'result.json'), '{}');
  // Its start record says real agents ran it, under a hostile provider name (wf resume names it).
  const start = JSON.parse(readFileSync(join(runDir(copy), 'start.json'), 'utf8')) as object;
  writeFileSync(
    join(runDir(copy), 'start.json'),
    JSON.stringify({ ...start, runId: copy, provider: hostile('provider'), simulated: false }),
  );
  // A planted event: a hostile type and data beside the recorded ones.
  const events = join(runDir(runId), 'events.jsonl');
  const last = readFileSync(events, 'utf8').trim().split('\n').at(-1) ?? '{}';
  const { seq, time } = JSON.parse(last) as { seq: number; time: number };
  appendFileSync(
    events,
    `${JSON.stringify({ seq: seq + 1, runId, type: hostile('type'), time: time + 1, data: { note: hostile('data') } })}\n`,
  );
}

/** Seeds the catalog: a hostile file name, a hostile description and a hostile archive id. */
function plantCatalog(): void {
  const catalog = join(p.dir, '.dsh', 'workflows');
  mkdirSync(join(catalog, '.archive'), { recursive: true });
  writeFileSync(join(catalog, `${hostile('file')}.workflow.json`), JSON.stringify(demoCapsule()));
  const described = demoCapsule({ name: 'described' });
  described.manifest.description = hostile('description');
  writeFileSync(join(catalog, 'described.workflow.json'), JSON.stringify(described));
  // Any name before `--<stamp>-<hash>` is an archive id; the catalog reads it with `.`, which
  // matches no line terminator, so this one has none.
  const archiveName = hostileText('archive').replace(/[\n\r\u2028\u2029]/g, '');
  writeFileSync(
    join(catalog, '.archive', `${archiveName}--20260101T000000000Z-0123abcd.workflow.json`),
    JSON.stringify(demoCapsule()),
  );
}

/** Every verb, on hostile runs, records, catalog entries and file names. */
async function driveEveryVerb(): Promise<void> {
  const [, ranJson] = await both(['run', 'hostile.workflow.js', '--delay-ms', '0']);
  const [, failedJson] = await both(['run', 'failing.workflow.js', '--delay-ms', '0']);
  const completedRun = String(json(ranJson).runId);
  const failedRun = String(json(failedJson).runId);
  await both(['resume', failedRun, '--delay-ms', '0']);
  const hostileFile = `${hostile('check')}.js`;
  writeFileSync(join(p.dir, hostileFile), FAILING_RUN);
  await both(['check', hostileFile, '--smoke']);
  await both(['check', `${hostile('missing')}.js`]);
  await both(['run', `./${hostile('missing')}.js`]);

  plantRunJson(completedRun);
  await both(['runs']);
  await both(['show', completedRun]);
  await both(['show', completedRun, '--agents']);
  await both(['show', `${completedRun}-planted`]);
  await both(['show', failedRun]);
  await both(['events', completedRun]);
  await both(['events', failedRun]);
  await both(['report', completedRun, '--out', `${hostile('report')}.html`]);
  await both(['show', hostile('target')]);
  await both(['resume', completedRun]);
  await both(['resume', `${completedRun}-planted`]);
  await both(['resume', `${completedRun}-planted`, '--simulate', '--delay-ms', '0']);

  await both(['list']);
  const [, archivedJson] = await both(['archived']);
  const archived = (json(archivedJson).archived ?? []) as { id: string }[];
  const planted = archived.find((a) => a.id.startsWith('archive'))?.id ?? 'archive--none';
  await both(['restore', planted]);
  await both(['restore', planted, '--as', 'restored-one']);
  await verb(['save', failedRun, 'saved-one']);
  await verb(['rename', 'saved-one', 'renamed-one', '--json']);
  await verb(['delete', 'renamed-one']);
  await both(['archived', 'renamed-one']);
  await both(['delete', hostile('name')]);
  await both(['rename', hostile('from'), 'fine-name']);
  await both(['prune', '--keep', '1', '--dry-run']);
  await both(['delete-run', failedRun]);
  await verb([hostile('verb')]);
  await verb(['runs', `--${hostile('flag')}`]);
  await verb(['show', completedRun, `--${hostile('flag')}=1`]);
}

/** The output of the first invocation whose command line starts with `prefix`. */
function output(prefix: string): WfResult {
  const found = outputs.find((o) => o.what.startsWith(`wf ${prefix}`));
  if (!found) throw new Error(`no invocation of wf ${prefix}`);
  return found.result;
}

beforeAll(async () => {
  p = tempProject();
  p.file('hostile.workflow.js', HOSTILE_RUN);
  p.file('failing.workflow.js', FAILING_RUN);
  plantCatalog();
  await driveEveryVerb();
}, 240_000);

afterAll(() => p?.cleanup());

describe('every verb keeps hostile text off the terminal', () => {
  it('printed no raw control and no forged line anywhere', () => {
    expect(outputs.length).toBeGreaterThan(55);
    // Every offence, so a failure names every path that leaks, not only the first.
    const problems: string[] = [];
    for (const { what, result } of outputs) {
      for (const [stream, text] of [
        ['stdout', result.stdout],
        ['stderr', result.stderr],
      ] as const) {
        const raw = RAW_CONTROL.exec(text);
        if (raw)
          problems.push(
            `${what}: ${stream}: raw U+${raw[0].codePointAt(0)?.toString(16)} at ${raw.index}`,
          );
        if (text.split('\n').some((line) => line.trimStart().startsWith(FORGED)))
          problems.push(`${what}: ${stream}: a forged line`);
      }
      // A --json document still parses (events: one document per line).
      if (what.endsWith('--json'))
        for (const doc of what.startsWith('wf events')
          ? result.stdout.trim().split('\n')
          : [result.stdout])
          try {
            JSON.parse(doc);
          } catch {
            problems.push(`${what}: stdout: not JSON`);
          }
    }
    expect(problems).toEqual([]);
  });

  it('shows every control as its escape, the text around it unchanged', () => {
    const ran = output('run hostile.workflow.js');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      'result\\u001b]52;c;cHduZWQ=\\u0007 \\u202eevil\\u202c\nRESULT-LINE-2',
    );
    expect(ran.stderr).toContain(
      'agent\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u2066\\u200f\\u061c\\u2028\\u0090q\\u001b\\\\nFORGED agent',
    );
    const failed = output('run failing.workflow.js');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('boom \\u001b]0;pwned\\u0007 \\u202eevil');
    // The source excerpt: the raw controls of the source line escaped, the caret under the column.
    expect(failed.stderr).toContain('\\u001b[2J\\u202e\\u0085 raw in the source');
    const shown = output('show run-');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('  cost       started\\u001b]0;pwned\\u0007');
    expect(shown.stdout).toContain('  agents     simulated (provider\\u001b]0;pwned');
    expect(output('archived').stdout).toContain('archive\\u001b]0;pwned\\u0007');
    // wf resume names the provider a planted start record claims, escaped, on the error's line.
    const mismatch = outputs.find((o) => /^wf resume \S+-planted$/.test(o.what))?.result;
    expect(mismatch?.stderr).toContain('WF_CLI_RESUME_PROVIDER_MISMATCH: run run-');
    expect(mismatch?.stderr).toContain('(provider\\u001b]0;pwned\\u0007');
    // A --json document parses to the recorded value, controls included.
    const shownJson = outputs.find(
      (o) => o.what.startsWith('wf show run-') && o.what.endsWith('--json'),
    );
    const doc = JSON.parse(shownJson?.result.stdout ?? '{}') as { run?: { workflow?: string } };
    expect(doc.run?.workflow).toBe(hostile('workflow'));
  });
});
