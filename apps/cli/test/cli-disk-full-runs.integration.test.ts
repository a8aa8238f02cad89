// "Done" means durable, at scale (invariant 12): 100 `wf run`s, each started with a random amount
// of free space between 0 and 128 KiB on a small tmpfs (as root, as in CI; skipped elsewhere), two
// at a time on two disks. No run may print completed (exit 0) without its terminal record and
// result on disk; a run whose end could not be recorded still prints the uninterrupted result
// and, once space returns, `wf resume` replays every child it recorded and ends with that same
// result; a run whose start could not be recorded left nothing behind. Simulated agents with no
// delay keep it fast; WF_DISK_FULL_RUNS changes the count.
import { mkdirSync, readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmallDisk, smallDisk } from './helpers/tmpfs.js';
import { json, type Project, tempProject, wf } from './helpers/wf-cli.js';

const RUNS = Number(process.env.WF_DISK_FULL_RUNS ?? 100);
const MAX_FREE = 128 * 1024;
const SEED = Number(process.env.WF_DISK_FULL_SEED ?? 20261206);

/** Eight children with 1.5 KB prompts and a synthesis: about 48 KiB on disk when recorded. */
const WORKFLOW = `async function run(wf, args) {
  const parts = await wf.parallel(Array.from({ length: 8 }, (_, i) => () =>
    wf.runAgent({ name: 'part-' + i, prompt: 'Investigate part ' + i + ': ' + 'x'.repeat(1500) })));
  const merged = await wf.synthesize({ inputs: parts.map((p) => p.finalText), rubric: 'merge' });
  return { synthesis: merged.text, parts: parts.map((p) => p.finalText) };
}
`;
/** Journal methods whose answers are children a resume replays instead of running again. */
const CHILD_METHODS = new Set(['runAgent', 'synthesize', 'spawnAgent', 'wait']);

/** A small deterministic PRNG (mulberry32): the same free-space draws on every run of the test. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const root = process.platform === 'linux' && process.getuid?.() === 0;

describe.runIf(root)('100 runs on a nearly full disk', () => {
  let base: Project;
  let disks: SmallDisk[] = [];
  let reference: unknown;

  beforeAll(async () => {
    base = tempProject();
    base.file('w.workflow.js', WORKFLOW);
    const uninterrupted = await wf(['run', 'w.workflow.js', '--delay-ms', '0', '--json'], base);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    reference = json(uninterrupted).result;
    disks = [0, 1].map((i) => smallDisk(join(base.dir, '..', `disk-${i}`), 2 * 1024 * 1024));
  }, 240_000);
  afterAll(async () => {
    for (const disk of disks) {
      disk.release();
      await disk.unmount();
    }
    base?.cleanup();
  });

  interface Tally {
    completed: number;
    unrecorded: number;
    notStarted: number;
    replayed: number;
  }

  const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

  /** The children a run recorded: journal lines a resume replays. */
  function recordedChildren(runDir: string): number {
    const text = readFileSync(join(runDir, 'journal.jsonl'), 'utf8');
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    return whole
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { method: string; outcome: { ok: boolean } })
      .filter((e) => CHILD_METHODS.has(e.method) && e.outcome.ok).length;
  }

  async function oneRun(disk: SmallDisk, i: number, free: number, tally: Tally): Promise<void> {
    const dir = join(disk.path, `p${i}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'w.workflow.js'), WORKFLOW);
    const project: Project = { ...base, dir };
    const runs = join(dir, '.dsh', 'workflow-runs');
    const label = `run ${i} with ${free} bytes free`;
    disk.fill(free);
    let r: Awaited<ReturnType<typeof wf>>;
    try {
      r = await wf(['run', 'w.workflow.js', '--delay-ms', '0', '--json'], project);
    } finally {
      disk.release();
    }
    const doc = json(r) as {
      runId?: string;
      status?: string;
      result?: unknown;
      error?: { code: string };
    };
    const runDir = join(runs, doc.runId ?? 'none');
    if (r.code === 0) {
      // Reported done: its end and its result are on disk.
      expect(readJson(join(runDir, 'run.json')).status, label).toBe('completed');
      expect(readJson(join(runDir, 'result.json')).result, label).toEqual(reference);
      expect(doc.result, label).toEqual(reference);
      tally.completed++;
    } else if (r.code === 6 && doc.error?.code === 'WF_CLI_RUN_UNRECORDED') {
      // Not reported done, nothing on disk says it ended; the result is printed all the same.
      expect(doc.status, label).toBe('completed');
      expect(doc.result, label).toEqual(reference);
      expect(readJson(join(runDir, 'run.json')).status, label).not.toBe('completed');
      expect(existsSync(join(runDir, 'result.json')), label).toBe(false);
      // Space is back: the resume replays every child it recorded, to the uninterrupted result.
      const children = recordedChildren(runDir);
      const resumed = await wf(
        ['resume', doc.runId as string, '--delay-ms', '0', '--json'],
        project,
      );
      expect(resumed.code, `${label}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
      const again = json(resumed) as { result: unknown; cost: { cacheHits: number } };
      expect(again.result, label).toEqual(reference);
      expect(again.cost.cacheHits, label).toBe(children);
      tally.unrecorded++;
      tally.replayed += children;
    } else if (r.code === 6 && doc.error?.code === 'WF_CLI_STORAGE_FAILED') {
      // Its start could not be recorded: it did not run, and nothing of it is listed.
      const listed = json(await wf(['runs', '--json'], project)) as { runs: unknown[] };
      expect(listed.runs, label).toEqual([]);
      expect(
        (existsSync(runs) ? readdirSync(runs) : []).filter((n) => !n.startsWith('.runs-index')),
        label,
      ).toEqual([]);
      tally.notStarted++;
    } else {
      throw new Error(`${label}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    }
    rmSync(dir, { recursive: true, force: true });
  }

  it(`${RUNS} runs: none reports done without its record; every cut-short run resumes to the uninterrupted result`, async () => {
    expect(disks.every((d) => d.mounted)).toBe(true);
    const random = prng(SEED);
    const frees = Array.from({ length: RUNS }, () => Math.floor(random() * MAX_FREE));
    const tally: Tally = { completed: 0, unrecorded: 0, notStarted: 0, replayed: 0 };
    const started = Date.now();
    await Promise.all(
      disks.map(async (disk, lane) => {
        for (let i = lane; i < RUNS; i += disks.length)
          await oneRun(disk, i, frees[i] as number, tally);
      }),
    );
    expect(tally.completed + tally.unrecorded + tally.notStarted).toBe(RUNS);
    // The draws reach each outcome, or the test proves less than it says.
    if (RUNS >= 50) {
      expect(tally.completed).toBeGreaterThan(0);
      expect(tally.unrecorded).toBeGreaterThan(0);
      expect(tally.notStarted).toBeGreaterThan(0);
    }
    process.stdout.write(
      `disk-full runs (seed ${SEED}): ${JSON.stringify(tally)} in ${Date.now() - started} ms\n`,
    );
  }, 600_000);
});
