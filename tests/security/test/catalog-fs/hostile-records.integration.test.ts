// Hostile workflows against the disk run store, through the real engine and sandbox: artifact
// names that try to traverse, collide or smuggle keys, oversized and non-JSON values, event
// floods. Each may fail its own run; none may write outside its run directory, corrupt the
// record, or crash the host. Plus hostile catalog files read by a real catalog.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCatalog, openRunStore, type RunStore } from '@wf/catalog-fs';
import { createEngine, createSimulatedAgents } from '@wf/engine';
import { createSandbox, type Sandbox } from '@wf/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';

let sandbox: Sandbox;
let dir: string;
let store: RunStore;
beforeAll(async () => {
  sandbox = await createSandbox({ poolSize: 1 });
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'wf-sec-store-')));
  store = await openRunStore({
    project: join(dir, 'project'),
    maxArtifactBytes: 64 * 1024,
    maxLineBytes: 64 * 1024,
  });
});
afterAll(async () => {
  await store.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const manifest = {
  name: 'hostile-records',
  description: 'A workflow written to break the run store.',
  phases: ['attack'],
  readOnly: true,
  maxAgents: 2,
  maxConcurrency: 1,
  patterns: ['fan-out-and-synthesize'],
};

async function attack(runId: string, body: string) {
  const engine = createEngine({ agents: createSimulatedAgents(), sandbox, recorder: store });
  const handle = await engine.start({
    workflow: { manifest, source: `async function run(wf, args) {\n${body}\n}` },
    trust: 'capability-generated',
    runId,
  });
  const done = await handle.done;
  await engine.close();
  return done;
}

/** Every path under the temp dir, so a write outside the run directory shows up. */
function everything(): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

it('artifact names cannot leave artifacts/ or collide, and bad values fail only the call', async () => {
  const before = everything();
  const done = await attack(
    'run-artifacts',
    `const names = ['../../../outside', '/etc/passwd', '..', '.', '__proto__', 'constructor', 'a\\u0000b', 'x'.repeat(200), 'same name', 'same/name', 'CON', 'a\\\\b'];
     const out = [];
     for (const n of names) {
       try { const r = await wf.artifact(n, { n }); out.push(r.ref); } catch (e) { out.push('error:' + e.code); }
     }
     try { await wf.artifact('../../../outside', 2); out.push('rewrite'); } catch (e) { out.push('again:' + e.code); }
     try { await wf.artifact('big', 'z'.repeat(200000)); out.push('big'); } catch (e) { out.push('big:' + e.code); }
     return out;`,
  );
  expect(done.status).toBe('completed');
  const refs = done.result as string[];
  const runDir = join(dir, 'project', '.dsh', 'workflow-runs', 'run-artifacts');
  const files = readdirSync(join(runDir, 'artifacts'));
  for (const ref of refs.filter((r) => r.startsWith('artifacts/'))) {
    expect(ref).toMatch(/^artifacts\/[A-Za-z0-9._-]+-[0-9a-f]{16}\.json$/);
    expect(files).toContain(ref.slice('artifacts/'.length));
  }
  expect(new Set(refs.filter((r) => r.startsWith('artifacts/'))).size).toBe(
    refs.filter((r) => r.startsWith('artifacts/')).length,
  );
  expect(refs.at(-2)).toMatch(/^again:/);
  expect(refs.at(-1)).toMatch(/^big:/);
  // Nothing appeared outside this run's directory, except the store's own runs index, whose
  // lines name this run only (a hostile artifact name never reaches it).
  const added = everything().filter((p) => !before.includes(p));
  const runsDir = join('project', '.dsh', 'workflow-runs');
  const index = join(runsDir, '.runs-index.jsonl');
  const parents = ['project', join('project', '.dsh'), runsDir, index];
  for (const p of added) {
    expect(parents.includes(p) || p.startsWith(join(runsDir, 'run-artifacts')), p).toBe(true);
  }
  if (added.includes(index)) {
    const lines = readFileSync(join(dir, index), 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(
        Object.keys(entry).filter((k) => !['runId', 'startedAt', 'ended'].includes(k)),
      ).toEqual([]);
      expect(entry.runId).toBe('run-artifacts');
    }
  }
  const snap = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
  expect(snap.status).toBe('completed');
});

it('an event flood with oversized payloads leaves a readable, bounded record', async () => {
  const done = await attack(
    'run-flood',
    `for (let i = 0; i < 2000; i++) {
       // wf.log is fire-and-forget; an async call every 100 keeps under the sandbox's outstanding cap.
       if (i % 100 === 99) await wf.phase('attack', async () => 0);
       wf.log({ message: 'm' + i, data: i % 500 === 0 ? { blob: 'b'.repeat(100000) } : { i } });
     }
     return 'done';`,
  );
  expect(['completed', 'failed'], JSON.stringify(done.error)).toContain(done.status);
  expect(done.error).toBeUndefined();
  const events = await store.events('run-flood');
  expect(events.length).toBeGreaterThan(10);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const file = readFileSync(
    join(dir, 'project', '.dsh', 'workflow-runs', 'run-flood', 'events.jsonl'),
    'utf8',
  );
  for (const line of file.split('\n').filter(Boolean))
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(64 * 1024);
  const shown = await store.show('run-flood');
  expect(shown.ok && shown.run.snapshot?.status).toBe(done.status);
});

it('hostile catalog files are listed as invalid and never crash discovery', async () => {
  const project = join(dir, 'catalog');
  mkdirSync(project);
  const files: Record<string, string> = {
    'deep.workflow.json': `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    'proto.workflow.json': '{"__proto__":{"polluted":true},"format":"dsh.workflow"}',
    'nul.workflow.json': '{"format":"dsh.workflow\u0000"}',
    'bom.workflow.json': '\uFEFF{}',
    'utf.workflow.json': Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'),
    'number.workflow.json': '1e999999',
  };
  for (const [name, text] of Object.entries(files))
    writeFileSync(join(project, name), text, 'latin1');
  const catalog = await openCatalog({ project });
  const { entries } = await catalog.list();
  expect(entries.map((e) => e.name).sort()).toEqual([
    'bom',
    'deep',
    'nul',
    'number',
    'proto',
    'utf',
  ]);
  for (const e of entries) {
    expect(e.valid).toBe(false);
    expect(e.error).toBeTruthy();
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

it('a stopped run resumes whole: entries over the line limit, and calls that carry wf.runId', async () => {
  // Each call's input is 200 KB (over this store's 64 KiB line limit) and carries the run id;
  // before, such lines were stored truncated and the resumed run saw another run id: it diverged.
  const source = `async function run(wf) {
    const pad = 'p'.repeat(200000);
    const a = await wf.runAgent({ name: 'first', prompt: wf.runId + ' first ' + pad });
    const b = await wf.runAgent({ name: 'second', prompt: wf.runId + ' second ' + pad });
    return [wf.runId, a.status, b.status, a.text.length];
  }`;
  const start = (runId: string) => ({
    workflow: { manifest, source },
    trust: 'capability-generated' as const,
    runId,
    seed: 3,
    startTime: 1_700_000_000_000,
  });
  const slow = createSimulatedAgents({
    respond: (r) => ({ delayMs: r.name === 'second' ? 60_000 : 1 }),
  });
  const engine = createEngine({ agents: slow, sandbox, recorder: store });
  const handle = await engine.start(start('run-resume-whole'));
  for await (const e of handle.events)
    if (e.type === 'agent-started' && e.data.name === 'second') handle.stop('stopped by the test');
  expect((await handle.done).status).toBe('stopped');
  await engine.close();
  const lines = readFileSync(
    join(dir, 'project', '.dsh', 'workflow-runs', 'run-resume-whole', 'journal.jsonl'),
    'utf8',
  );
  expect(lines).not.toContain('truncated');

  const reopened = await openRunStore({ project: join(dir, 'project'), maxLineBytes: 64 * 1024 });
  const agents = createSimulatedAgents();
  const resumer = createEngine({ agents, sandbox, recorder: reopened });
  const done = await (await resumer.resume('run-resume-whole', { runId: 'run-resume-whole-2' }))
    .done;
  await resumer.close();
  await reopened.close();
  expect(done.error).toBeUndefined();
  expect(done.result).toEqual(['run-resume-whole', 'completed', 'completed', expect.any(Number)]);
  expect(agents.requests().map((r) => r.name)).toEqual(['second']);
});
