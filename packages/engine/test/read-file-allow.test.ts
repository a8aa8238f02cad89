// wf.readFile's allow roots: an app may open one subtree of `.dsh/` it wrote for workflows (the
// plugin's review packets) without opening the rest of `.dsh/` (run store, catalog), and a deny
// root still wins inside an allowed subtree. Real files in a temp workspace.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWorkspaceFile } from '../src/internal/read-file.js';

const ws = mkdtempSync(join(tmpdir(), 'wf-readfile-allow-'));
const put = (rel: string, text: string) => {
  mkdirSync(join(ws, rel, '..'), { recursive: true });
  writeFileSync(join(ws, rel), text);
};
put('.dsh/review-packets/r1/packet-1.md', 'diff of a.ts');
put('.dsh/review-packets/held/secret.md', 'not for workflows');
put('.dsh/workflow-runs/run-1/run.json', '{"leaseToken":"t"}');
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const packets = join(ws, '.dsh', 'review-packets');
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'READ',
    (e: { code?: string }) => e.code,
  );

describe('wf.readFile allow roots', () => {
  it('without an allow root, a review packet under .dsh/ is protected', async () => {
    expect(await code(readWorkspaceFile(ws, '.dsh/review-packets/r1/packet-1.md', 1024))).toBe(
      'WF_ENGINE_READ_PROTECTED',
    );
  });

  it('an allow root opens that subtree and nothing else of .dsh/', async () => {
    const read = (p: string) => readWorkspaceFile(ws, p, 1024, [], [packets]);
    expect(await read('.dsh/review-packets/r1/packet-1.md')).toBe('diff of a.ts');
    expect(await code(read('.dsh/workflow-runs/run-1/run.json'))).toBe('WF_ENGINE_READ_PROTECTED');
    expect(await code(read('.dsh/review-packets/../workflow-runs/run-1/run.json'))).toBe(
      'WF_ENGINE_READ_PROTECTED',
    );
  });

  it('a deny root inside an allowed subtree still wins', async () => {
    const held = join(packets, 'held');
    expect(
      await code(
        readWorkspaceFile(ws, '.dsh/review-packets/held/secret.md', 1024, [held], [packets]),
      ),
    ).toBe('WF_ENGINE_READ_PROTECTED');
  });
});
