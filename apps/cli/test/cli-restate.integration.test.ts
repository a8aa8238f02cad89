// `wf worker --restate` and `wf run --engine restate` through the real bin against a real Restate
// server (one for the file): the worker registers, the run completes on it and is in the worker's
// run store; a run means the same on both engines (seed, delay and limits reach the workers); a
// wrong URL, a server down, unreachable or not Restate, and a server without a worker each end in
// a named error with exit 69 within seconds; the worker logs one line per run by default. A
// hostile guest's result and error reach the terminal only through the sanitizer (invariant 13).
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  freePort,
  type RestateServer,
  startRestateServer,
} from '../../../packages/restate/test/helpers/server.js';
import {
  collect,
  json,
  type Project,
  startWf,
  tempProject,
  waitForOutput,
  wf,
} from './helpers/wf-cli.js';

let p: Project;
let server: RestateServer;
let worker: ChildProcess | undefined;
/** Everything the worker printed, stdout and stderr. */
let workerOutput = '';
const closers: (() => Promise<void>)[] = [];

/**
 * The worker serving this file's runs, started once. Runs without their own delay would take
 * 5 s per child here: wf run sends its own.
 */
async function ensureWorker(): Promise<void> {
  if (worker) return;
  worker = startWf(
    ['worker', '--restate', server.ingress, '--admin', server.admin, '--delay-ms', '5000'],
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
  if (worker && worker.exitCode === null && worker.signalCode === null) {
    const exited = new Promise((r) => worker?.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await Promise.allSettled(closers.map((c) => c()));
  await server?.stop();
  p?.cleanup();
});

type Doc = {
  ok: boolean;
  runId: string;
  status: string;
  engine?: string;
  result?: unknown;
  error?: { code: string; message: string; details?: { code?: string } };
  exitCode?: number;
};

const onRestate = (target: string, extra: string[] = []) =>
  wf(['run', target, '--engine', 'restate', '--restate', server.ingress, '--json', ...extra], p);

/** A port where an HTTP server answers every request 404 (not Restate). */
async function notRestate(): Promise<string> {
  const s: Server = createServer((_, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<h1>not here</h1>');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  closers.push(
    () =>
      new Promise((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** A port that accepts connections and never answers (a server hung or behind a dead link). */
async function silent(): Promise<string> {
  const sockets = new Set<Socket>();
  const s: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  closers.push(
    () =>
      new Promise((r) => {
        for (const socket of sockets) socket.destroy();
        s.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function unavailable(result: Awaited<ReturnType<typeof wf>>, code: string): void {
  expect(result.code, result.stderr).toBe(69);
  expect(json(result)).toMatchObject({
    ok: false,
    error: { code: 'WF_CLI_ENGINE_UNAVAILABLE', details: { code } },
    exitCode: 69,
  });
}

it('refuses an unknown engine and a worker without --restate (exit 2)', async () => {
  const bad = await wf(['run', 'parallel-investigation', '--engine', 'bogus', '--json'], p);
  expect(bad.code).toBe(2);
  expect(json(bad)).toMatchObject({ ok: false, error: { code: 'WF_CLI_USAGE' } });
  const noUrl = await wf(['worker', '--json'], p);
  expect(noUrl.code).toBe(2);
  expect(noUrl.stdout).toContain('--restate');
}, 60_000);

// Each of these waited up to 120 s in silence, then said "a bug in wf" (exit 70); the test's
// 30 s bound is what fails fast means here.
it('a wrong URL, a server that is down, silent or not Restate: exit 69 with the reason', async () => {
  const down = `http://127.0.0.1:${await freePort()}`;
  const [refused, hung, other, admin, workerDown] = await Promise.all([
    wf(['run', 'parallel-investigation', '--engine', 'restate', '--restate', down, '--json'], p),
    wf(
      [
        'run',
        'parallel-investigation',
        '--engine',
        'restate',
        '--restate',
        await silent(),
        '--json',
      ],
      p,
    ),
    wf(
      [
        'run',
        'parallel-investigation',
        '--engine',
        'restate',
        '--restate',
        await notRestate(),
        '--json',
      ],
      p,
    ),
    wf(
      ['run', 'parallel-investigation', '--engine', 'restate', '--restate', server.admin, '--json'],
      p,
    ),
    wf(['worker', '--restate', down, '--json'], p),
  ]);
  unavailable(refused, 'WF_RESTATE_UNREACHABLE');
  expect((json(refused) as Doc).error?.message).toContain('connection refused');
  unavailable(hung, 'WF_RESTATE_UNREACHABLE');
  unavailable(other, 'WF_RESTATE_NOT_RESTATE');
  unavailable(admin, 'WF_RESTATE_NOT_RESTATE');
  expect((json(admin) as Doc).error?.message).toContain('admin API');
  // The worker exits instead of serving nobody.
  unavailable(workerDown, 'WF_RESTATE_UNREACHABLE');
}, 30_000);

it('a server without a worker: WF_RESTATE_NO_WORKER, exit 69', async () => {
  unavailable(await onRestate('parallel-investigation'), 'WF_RESTATE_NO_WORKER');
}, 30_000);

it('a worker whose admin URL is the ingress exits 69 (it cannot register)', async () => {
  const r = await wf(
    ['worker', '--restate', server.ingress, '--admin', server.ingress, '--json'],
    p,
  );
  unavailable(r, 'WF_RESTATE_NOT_RESTATE');
}, 30_000);

it('a run submitted with --engine restate completes on a wf worker and is in its run store', async () => {
  await ensureWorker();
  const ran = await onRestate('parallel-investigation', ['--delay-ms', '0']);
  const doc = json(ran) as Doc;
  expect(ran.code, ran.stderr).toBe(0);
  expect(doc).toMatchObject({ ok: true, status: 'completed', engine: 'restate' });
  const runs = json(await wf(['runs', '--json'], p)) as {
    runs: { runId: string; status: string }[];
  };
  expect(runs.runs.find((r) => r.runId === doc.runId)?.status).toBe('completed');
  const shown = await wf(['show', doc.runId, '--json'], p);
  expect(shown.code).toBe(0);
}, 120_000);

it('the same seed gives the embedded engine result on Restate, for several seeds', async () => {
  for (const seed of ['1', '7', '42']) {
    const flags = ['--seed', seed, '--delay-ms', '0'];
    const embedded = json(
      await wf(['run', 'parallel-investigation', '--json', '--no-progress', ...flags], p),
    ) as Doc;
    const restate = json(await onRestate('parallel-investigation', flags)) as Doc;
    expect(embedded.status).toBe('completed');
    expect(restate.status, `seed ${seed}`).toBe('completed');
    expect(JSON.stringify(restate.result), `seed ${seed}`).toBe(JSON.stringify(embedded.result));
  }
  // Seeds that differ give different results (the comparison above can fail).
  const one = json(await onRestate('parallel-investigation', ['--seed', '1', '--delay-ms', '0']));
  const two = json(await onRestate('parallel-investigation', ['--seed', '2', '--delay-ms', '0']));
  expect(JSON.stringify(one.result)).not.toBe(JSON.stringify(two.result));
}, 180_000);

it('--delay-ms reaches the worker: its children take the run delay, not the worker default', async () => {
  const ran = json(await onRestate('parallel-investigation', ['--delay-ms', '20'])) as Doc;
  expect(ran.status).toBe('completed');
  const shown = json(await wf(['show', ran.runId, '--json'], p)) as {
    agents: { durationMs?: number }[];
  };
  expect(shown.agents.length).toBeGreaterThan(0);
  // jitter gives 0.5x-2x the base: the worker's 5000 ms would be at least 2500 ms per child.
  for (const a of shown.agents) expect(a.durationMs).toBeLessThan(2_500);
}, 120_000);

it('the limit flags mean the same on both engines (max agents, token budget, child wall)', async () => {
  const plain = json(
    await wf(['run', 'parallel-investigation', '--json', '--no-progress', '--delay-ms', '300'], p),
  ) as Doc;
  for (const flags of [
    ['--max-agents', '2'],
    ['--token-budget', '50'],
    ['--child-wall-ms', '1'],
  ]) {
    const all = ['--delay-ms', '300', ...flags];
    const embedded = json(
      await wf(['run', 'parallel-investigation', '--json', '--no-progress', ...all], p),
    ) as Doc;
    const restate = json(await onRestate('parallel-investigation', all)) as Doc;
    const both = `${flags.join(' ')}: ${JSON.stringify({ embedded, restate }).slice(0, 3000)}`;
    // Each flag changes the embedded run, so the same outcome on Restate means it arrived there.
    expect(JSON.stringify([embedded.status, embedded.result]), both).not.toBe(
      JSON.stringify([plain.status, plain.result]),
    );
    expect(restate.status, both).toBe(embedded.status);
    expect(restate.error?.code, both).toBe(embedded.error?.code);
    expect(JSON.stringify(restate.result), both).toBe(JSON.stringify(embedded.result));
  }
}, 180_000);

it('one view of a run: the submitter records it, and --restate shows it whole from Restate', async () => {
  // The submitter's directory is not the worker's.
  const q = tempProject();
  try {
    const ran = await wf(
      [
        'run',
        'parallel-investigation',
        '--engine',
        'restate',
        '--restate',
        server.ingress,
        '--json',
        '--delay-ms',
        '0',
      ],
      q,
    );
    const doc = json(ran) as Doc;
    expect(ran.code, ran.stderr).toBe(0);
    const mine = json(await wf(['runs', '--json'], q)) as {
      runs: { runId: string; status: string; agents?: number }[];
    };
    const here = mine.runs.find((r) => r.runId === doc.runId);
    expect(here).toMatchObject({ status: 'completed' });
    expect(here?.agents).toBeGreaterThan(0);
    const local = json(await wf(['show', doc.runId, '--json'], q)) as {
      agents: { outcome: string }[];
      result: unknown;
    };
    expect(JSON.stringify(local.result)).toBe(JSON.stringify(doc.result));
    // From Restate, anywhere: the same run.
    const remote = json(
      await wf(['show', doc.runId, '--restate', server.ingress, '--json'], q),
    ) as {
      run: { status: string; engine: string };
      agents: { outcome: string }[];
      result: unknown;
    };
    expect(remote.run).toMatchObject({ status: 'completed', engine: 'restate' });
    expect(remote.agents.map((a) => a.outcome)).toEqual(local.agents.map((a) => a.outcome));
    expect(JSON.stringify(remote.result)).toBe(JSON.stringify(doc.result));
    const listed = json(
      await wf(['runs', '--restate', server.ingress, '--admin', server.admin, '--json'], q),
    ) as { runs: { runId: string; status: string }[] };
    expect(listed.runs.find((r) => r.runId === doc.runId)?.status).toBe('completed');
    const events = await wf(['events', doc.runId, '--restate', server.ingress, '--json'], q);
    const types = events.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types[0]).toBe('workflow-started');
    expect(types.at(-1)).toBe('workflow-completed');
    const report = await wf(['report', doc.runId, '--restate', server.ingress, '--json'], q);
    expect(report.code, report.stderr).toBe(0);
    // An unknown run is not found (exit 3), on the server as here.
    const missing = await wf(['show', 'run-nope', '--restate', server.ingress, '--json'], q);
    expect(missing.code).toBe(3);
    // Deleted from Restate: gone there, still in the submitter's own store.
    const del = ['delete-run', doc.runId, '--restate', server.ingress, '--admin', server.admin];
    expect((await wf([...del, '--json'], q)).code).toBe(0);
    expect((await wf(['show', doc.runId, '--restate', server.ingress, '--json'], q)).code).toBe(3);
    expect((await wf(['show', doc.runId, '--json'], q)).code).toBe(0);
  } finally {
    q.cleanup();
  }
}, 120_000);

it('wf pause, wf resume --restate and wf stop operate a Restate run; Ctrl-C of wf run stops it', async () => {
  const submit = () =>
    startWf(
      [
        'run',
        'parallel-investigation',
        '--engine',
        'restate',
        '--restate',
        server.ingress,
        '--json',
        '--delay-ms',
        '4000',
      ],
      p,
    );
  const running = submit();
  const note = await waitForOutput(running, 'stderr', (t) =>
    /submitted to Restate as (\S+);/.test(t),
  );
  const finished = collect(running, 60_000);
  const runId = /submitted to Restate as (\S+);/.exec(note)?.[1] as string;
  const verb = async (name: string) =>
    json(await wf([name, runId, '--restate', server.ingress, '--json'], p)) as {
      ok: boolean;
      control: string;
    };
  expect(await verb('pause')).toMatchObject({ ok: true, control: 'paused' });
  expect(await verb('resume')).toMatchObject({ ok: true, control: 'running' });
  expect(await verb('stop')).toMatchObject({ ok: true, control: 'stopping' });
  const result = await finished;
  expect(json(result)).toMatchObject({ status: 'stopped' });
  expect(result.code).toBe(1);
  const missing = await wf(['stop', 'run-nope', '--restate', server.ingress, '--json'], p);
  expect(missing.code).toBe(3);

  // Ctrl-C: the run is stopped, wf run exits 130.
  const interrupted = submit();
  await waitForOutput(interrupted, 'stderr', (t) => t.includes('submitted to Restate'));
  const ended = collect(interrupted, 60_000);
  await new Promise((r) => setTimeout(r, 500));
  interrupted.kill('SIGINT');
  const out = await ended;
  expect(out.code, out.stderr).toBe(130);
  expect(json(out)).toMatchObject({ status: 'stopped' });
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

it('the worker logs one line per run by default (no SDK lines per child)', () => {
  // After the serving line (the SDK's one warning about unsigned requests comes before it):
  // one line per run, nothing else.
  const after = workerOutput.slice(workerOutput.indexOf('wf worker: serving'));
  const lines = after.split('\n').filter((l) => l.trim() !== '');
  const runLines = lines.filter((l) => l.startsWith('wf worker: run '));
  expect(runLines.length).toBeGreaterThanOrEqual(6);
  expect(lines.length, workerOutput).toBe(runLines.length + 1);
});

it('a run whose deployment does not answer (its worker died) says why it waits, naming the address', async () => {
  await ensureWorker();
  const dead = worker as ChildProcess;
  const exited = new Promise((r) => dead.once('exit', r));
  dead.kill('SIGKILL');
  await exited;
  const waiting = startWf(
    [
      'run',
      'parallel-investigation',
      '--engine',
      'restate',
      '--restate',
      server.ingress,
      '--admin',
      server.admin,
      '--json',
    ],
    p,
  );
  try {
    const said = await waitForOutput(waiting, 'stderr', (t) => t.includes('is waiting:'), 30_000);
    expect(said).toMatch(/is waiting: nothing answers at http:\/\/127\.0\.0\.1:\d+/);
  } finally {
    waiting.kill('SIGKILL');
  }
}, 60_000);
