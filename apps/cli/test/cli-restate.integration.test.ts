// `wf worker --restate` and `wf run --engine restate` through the real bin against a real Restate
// server (issue 15): the worker registers, the run completes on it, and the worker's run store
// mirror makes it visible to `wf runs` and `wf show` in the worker's directory. Bad flags exit 2.
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
  worker = startWf(
    ['worker', '--restate', server.ingress, '--admin', server.admin, '--delay-ms', '20'],
    p,
  );
  await waitForOutput(worker, 'stderr', (t) => t.includes('wf worker: serving'), 60_000);
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
