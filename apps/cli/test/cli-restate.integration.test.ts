// `wf worker --restate` and `wf run --engine restate` through the real bin against a real Restate
// server: the worker registers, the run completes on it, and the worker's run store
// mirror makes it visible to `wf runs` and `wf show` in the worker's directory. Bad flags exit 2.
// A hostile guest's result and error reach the terminal only through the sanitizer (invariant 13).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type RestateServer,
  startRestateServer,
} from '../../../packages/restate/test/helpers/server.js';
import { json, type Project, startWf, tempProject, waitForOutput, wf } from './helpers/wf-cli.js';

let p: Project;
let server: RestateServer;
let worker: ChildProcess | undefined;
/** Everything the worker printed, stdout and stderr. */
let workerOutput = '';

/** The worker serving this file's runs, started once. */
async function ensureWorker(): Promise<void> {
  if (worker) return;
  worker = startWf(
    ['worker', '--restate', server.ingress, '--admin', server.admin, '--delay-ms', '20'],
    p,
  );
  for (const stream of [worker.stdout, worker.stderr])
    stream?.setEncoding('utf8').on('data', (d: string) => {
      workerOutput += d;
    });
  await waitForOutput(worker, 'stderr', (t) => t.includes('wf worker: serving'), 60_000);
}

beforeAll(async () => {
  p = tempProject();
  server = await startRestateServer();
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker?.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await server?.stop();
  p?.cleanup();
});

it('refuses an unknown engine and a worker without --restate (exit 2)', async () => {
  const bad = await wf(['run', 'parallel-investigation', '--engine', 'bogus', '--json'], p);
  expect(bad.code).toBe(2);
  expect(json(bad)).toMatchObject({ ok: false, error: { code: 'WF_CLI_USAGE' } });
  const noUrl = await wf(['worker', '--json'], p);
  expect(noUrl.code).toBe(2);
  expect(noUrl.stdout).toContain('--restate');
}, 60_000);

it('a run submitted with --engine restate completes on a wf worker and is in its run store', async () => {
  await ensureWorker();
  const ran = await wf(
    ['run', 'parallel-investigation', '--engine', 'restate', '--restate', server.ingress, '--json'],
    p,
  );
  const doc = json(ran) as { ok: boolean; runId: string; status: string; engine: string };
  expect(ran.code, ran.stderr).toBe(0);
  expect(doc).toMatchObject({ ok: true, status: 'completed', engine: 'restate' });
  const runs = json(await wf(['runs', '--json'], p)) as {
    runs: { runId: string; status: string }[];
  };
  expect(runs.runs.find((r) => r.runId === doc.runId)?.status).toBe('completed');
  const shown = await wf(['show', doc.runId, '--json'], p);
  expect(shown.code).toBe(0);
}, 120_000);

/** What must never reach a terminal raw; line feeds and tabs are layout. */
const RAW_CONTROL = /(?![\n\t])[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/u;
const HOSTILE =
  '\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u2066\\u200f\\u061c\\u2028\\u0090q\\u001b\\\\\\nFORGED';

/** A result is multi-line text: its second line is its own, not a forged one. */
const RESULT = HOSTILE.replace('FORGED', 'RESULT-LINE-2');

it('prints a hostile guest result and error from Restate only through the sanitizer', async () => {
  await ensureWorker();
  p.file(
    'hostile-result.workflow.js',
    `async function run(wf, args) {\n  await wf.runAgent({ name: 'a${HOSTILE}', prompt: 'p', readOnly: true });\n  return 'result${RESULT}';\n}\n`,
  );
  p.file(
    'hostile-error.workflow.js',
    `async function run(wf, args) {\n  throw new Error('boom${HOSTILE}');\n}\n`,
  );
  const outputs: { what: string; text: string }[] = [];
  let completed = '';
  let failed = '';
  for (const file of ['hostile-result.workflow.js', 'hostile-error.workflow.js'])
    for (const json of [false, true]) {
      const ran = await wf(
        [
          'run',
          file,
          '--engine',
          'restate',
          '--restate',
          server.ingress,
          ...(json ? ['--json'] : []),
        ],
        p,
      );
      outputs.push({ what: `${file} ${json}: stdout`, text: ran.stdout });
      outputs.push({ what: `${file} ${json}: stderr`, text: ran.stderr });
      if (!json) continue;
      const doc = JSON.parse(ran.stdout) as { runId: string; status: string; result?: unknown };
      if (file === 'hostile-result.workflow.js') {
        expect(doc.status, ran.stderr).toBe('completed');
        // The document parses to the guest's own text, controls included.
        expect(doc.result).toBe(JSON.parse(`"result${RESULT}"`));
        completed = doc.runId;
      } else {
        expect(doc.status, ran.stderr).toBe('failed');
        failed = doc.runId;
      }
    }
  // The worker's mirror of those runs, read back by the store verbs.
  for (const args of [['show', completed], ['show', failed], ['events', completed], ['runs']]) {
    const shown = await wf(args, p);
    outputs.push({ what: `wf ${args.join(' ')}: stdout`, text: shown.stdout });
  }
  outputs.push({ what: 'wf worker', text: workerOutput });
  const problems = outputs.flatMap(({ what, text }) => [
    ...(RAW_CONTROL.test(text) ? [`${what}: a raw control`] : []),
    ...(text.split('\n').some((l) => l.trimStart().startsWith('FORGED'))
      ? [`${what}: a forged line`]
      : []),
  ]);
  expect(problems).toEqual([]);
  // Shown as escapes, the text around them unchanged.
  const text = outputs.map((o) => o.text).join('');
  expect(text).toContain('result\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil');
  expect(text).toContain('boom\\u001b]0;pwned\\u0007');
}, 120_000);
