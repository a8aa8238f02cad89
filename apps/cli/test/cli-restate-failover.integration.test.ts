// Failover as users run it: `wf worker` processes behind HAProxy started with the shipped
// configuration (packages/restate/deploy/haproxy.cfg), all recording into one directory, and
// `wf run --engine restate` submitting through the real bin. The worker executing a run is
// SIGKILLed after 1, 4, 8 and 11 of its 12 children finished, and replaced in place (same port,
// same directory, as a supervisor restarts it) or elsewhere (another port behind the balancer):
// every run completes with the embedded engine's result for its seed (1 or 7), and no child that
// had finished 100 ms before the kill runs again (counted from the workers' own child lines).
// A worker that would register its own address beside the balancer's is refused.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
  REPO,
  startWf,
  tempProject,
  waitForOutput,
  wf,
} from './helpers/wf-cli.js';

const HAPROXY_CFG = join(REPO, 'packages', 'restate', 'deploy', 'haproxy.cfg');
const DELAY_MS = '250';
const CHILDREN = 12;

// 12 children over 3 phases: 4 side by side, 4 one after another, 4 side by side; Math.random in
// the result, so a continued run that took another course would show.
const WORKFLOW = `async function run(wf, args) {
  const a = await wf.phase('survey', () => wf.parallel([1, 2, 3, 4].map((i) => () =>
    wf.runAgent({ name: 'survey-' + i, prompt: 'Survey part ' + i, readOnly: true }))));
  const b = [];
  await wf.phase('check', async () => {
    for (let i = 0; i < 4; i += 1)
      b.push(await wf.runAgent({ name: 'check-' + i, prompt: 'Check ' + a[i].finalText, readOnly: true }));
  });
  const c = await wf.phase('write', () => wf.parallel(b.map((r, i) => () =>
    wf.runAgent({ name: 'write-' + i, prompt: 'Write up ' + r.finalText, readOnly: true }))));
  return { texts: c.map((r) => r.finalText), pick: Math.random() };
}
`;

interface Worker {
  readonly port: number;
  readonly proc: ChildProcess;
  out: string;
}

let p: Project;
let server: RestateServer;
let haproxy: ChildProcess | undefined;
let haproxyOut = '';
let balancer: string;
/** The balancer's four worker slots; workers come and go on them. */
let slots: number[] = [];
let workers: Worker[] = [];
/** Every worker's output, dead ones' included: the child lines are counted over all of them. */
const outputs: Worker[] = [];
const embedded = new Map<string, string>();
const takeoverMs: number[] = [];
const continuedRuns: string[] = [];

async function startWorker(port: number): Promise<Worker> {
  const proc = startWf(
    [
      'worker',
      '--restate',
      server.ingress,
      '--admin',
      server.admin,
      '--port',
      String(port),
      '--advertise',
      balancer,
      '--verbose',
    ],
    p,
  );
  const w: Worker = { port, proc, out: '' };
  proc.stderr?.on('data', (d) => {
    w.out += String(d);
  });
  outputs.push(w);
  await waitForOutput(proc, 'stderr', (t) => t.includes('wf worker: serving'), 60_000);
  return w;
}

async function kill(w: Worker): Promise<void> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
  const exited = new Promise((r) => w.proc.once('exit', r));
  w.proc.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  const which = spawnSync('haproxy', ['-v']);
  if (which.error)
    throw new Error('haproxy is not installed: .ci/run installs it (apt-get install haproxy)');
  p = tempProject();
  p.file('failover.workflow.js', WORKFLOW);
  server = await startRestateServer();
  const balancerPort = await freePort();
  balancer = `http://127.0.0.1:${balancerPort}`;
  slots = [await freePort(), await freePort(), await freePort(), await freePort()];
  haproxy = spawn('haproxy', ['-f', HAPROXY_CFG], {
    env: {
      ...process.env,
      WF_BALANCER: `127.0.0.1:${balancerPort}`,
      ...Object.fromEntries(slots.map((s, i) => [`WF_WORKER_${i + 1}`, `127.0.0.1:${s}`])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  haproxy.stderr?.on('data', (d) => {
    haproxyOut = (haproxyOut + String(d)).slice(-10_000);
  });
  workers = [await startWorker(slots[0] as number), await startWorker(slots[1] as number)];
  for (const seed of ['1', '7']) {
    const ran = json(
      await wf(
        [
          'run',
          'failover.workflow.js',
          '--json',
          '--no-progress',
          '--seed',
          seed,
          '--delay-ms',
          '0',
        ],
        p,
      ),
    );
    expect(ran.status).toBe('completed');
    embedded.set(seed, JSON.stringify(ran.result));
  }
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(outputs.map(kill));
  if (haproxy && haproxy.exitCode === null) {
    const exited = new Promise((r) => haproxy?.once('exit', r));
    haproxy.kill('SIGTERM');
    await exited;
  }
  await server?.stop();
  p?.cleanup();
  if (takeoverMs.length > 0)
    process.stdout.write(
      `failover through HAProxy: another worker continued the run ${takeoverMs.join(', ')} ms after the kill\n`,
    );
});

/** `started`/`completed` child lines of one run, in the order the test saw them, with times. */
interface ChildLine {
  readonly kind: 'started' | 'completed';
  readonly key: string;
  readonly at: number;
}
const seen = new Map<string, ChildLine[]>();

function watchChildren(w: Worker, runId: string): void {
  const lines = seen.get(runId) ?? [];
  seen.set(runId, lines);
  let done = 0;
  const scan = () => {
    const text = w.out;
    const re = /wf worker: child (\S+) (started|completed)/g;
    re.lastIndex = done;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      done = re.lastIndex;
      const key = String(m[1]);
      if (key.startsWith(`${runId}/`))
        lines.push({ kind: m[2] as 'started' | 'completed', key, at: Date.now() });
    }
  };
  scan();
  w.proc.stderr?.on('data', scan);
}

async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The worker whose latest `run <id> started|continued here` line is the newest. */
function executing(runId: string): Worker | undefined {
  const line = new RegExp(`wf worker: run ${runId} (started|continued) here`);
  return workers.filter((w) => line.test(w.out)).at(-1);
}

const CASES = [1, 4, 8, 11].flatMap((after, i) => [
  { after, place: 'in place' as const, seed: i % 2 === 0 ? '1' : '7' },
  { after, place: 'elsewhere' as const, seed: i % 2 === 0 ? '7' : '1' },
]);

it.each(CASES)(
  'SIGKILL after $after children, replaced $place (seed $seed): the embedded result, no completed child again',
  async ({ after, place, seed }) => {
    const submitted = startWf(
      [
        'run',
        'failover.workflow.js',
        '--engine',
        'restate',
        '--restate',
        server.ingress,
        '--seed',
        seed,
        '--delay-ms',
        DELAY_MS,
        '--json',
      ],
      p,
    );
    const note = await waitForOutput(submitted, 'stderr', (t) =>
      /submitted to Restate as (\S+);/.test(t),
    );
    const finished = collect(submitted, 120_000);
    const runId = /submitted to Restate as (\S+);/.exec(note)?.[1] as string;
    for (const w of outputs) watchChildren(w, runId);
    const lines = () => seen.get(runId) ?? [];
    await until(
      `${after} children of ${runId} to complete`,
      () => lines().filter((l) => l.kind === 'completed').length >= after,
    );
    await until(`a worker to execute ${runId}`, () => executing(runId) !== undefined);
    const victim = executing(runId) as Worker;
    await kill(victim);
    const killedAt = Date.now();
    const continued = new RegExp(`wf worker: run ${runId} continued here`);
    let continuedAt: number | undefined;
    const watch = setInterval(() => {
      if (continuedAt === undefined && outputs.some((w) => w !== victim && continued.test(w.out)))
        continuedAt = Date.now();
    }, 5);
    const completedBefore = lines()
      .filter((l) => l.kind === 'completed' && l.at <= killedAt - 100)
      .map((l) => l.key);

    // The supervisor's replacement: on the victim's port, or on a free slot of the balancer.
    const survivors = workers.filter((w) => w !== victim);
    const free = slots.find((s) => !workers.some((w) => w.port === s)) as number;
    const replacement = await startWorker(place === 'in place' ? victim.port : free);
    watchChildren(replacement, runId);
    workers = [...survivors, replacement];

    const result = await finished;
    clearInterval(watch);
    const doc = json(result);
    expect(result.code, `${result.stderr}\nhaproxy: ${haproxyOut}`).toBe(0);
    expect(doc.status).toBe('completed');
    expect(JSON.stringify(doc.result)).toBe(embedded.get(seed));

    const by = workers.find((w) => continued.test(w.out));
    expect(by, 'a live worker continued the run').toBeDefined();
    const starts = new Map<string, number>();
    for (const l of lines().filter((x) => x.kind === 'started'))
      starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
    for (const key of completedBefore)
      expect(starts.get(key), `${key} completed before the kill`).toBe(1);
    expect(
      new Set(
        lines()
          .filter((l) => l.kind === 'completed')
          .map((l) => l.key),
      ).size,
    ).toBe(CHILDREN);
    // Takeover: from the kill to the continued line, as the test saw it.
    if (continuedAt !== undefined) takeoverMs.push(continuedAt - killedAt);

    // One record of the run in the shared directory, completed.
    const run = JSON.parse(
      readFileSync(join(p.dir, '.dsh', 'workflow-runs', runId, 'run.json'), 'utf8'),
    );
    expect(run.status).toBe('completed');
    continuedRuns.push(runId);
  },
  150_000,
);

it('one view: each run continued after a kill shows whole from Restate, in any directory', async () => {
  const elsewhere = tempProject();
  try {
    for (const runId of continuedRuns) {
      const shown = json(
        await wf(['show', runId, '--restate', server.ingress, '--json'], elsewhere),
      ) as { run: { status: string; attempts: number }; agents: { outcome: string }[] };
      expect(shown.run.status).toBe('completed');
      expect(shown.run.attempts).toBeGreaterThanOrEqual(2);
      expect(shown.agents.length).toBe(CHILDREN);
      // completed in the attempt that ran it, whichever it was (a replay does not make it cached)
      for (const a of shown.agents) expect(a.outcome).toBe('completed');
    }
  } finally {
    elsewhere.cleanup();
  }
}, 120_000);

it('a worker registering its own address beside the balancer is refused: no failover across addresses', async () => {
  const r = await wf(['worker', '--restate', server.ingress, '--admin', server.admin, '--json'], p);
  expect(r.code, r.stderr).toBe(2);
  expect(json(r)).toMatchObject({ ok: false, error: { code: 'WF_CLI_USAGE' } });
  expect(String((json(r).error as { message: string }).message)).toContain('no failover');
}, 60_000);
